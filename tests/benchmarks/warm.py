"""14. A search that starts from what is known and weighs two objectives (issue 40), over 10 seeds.

Warm start: on Branin, a TPE search in rounds of 8 whose `seed_from` names another sweep of the
same repository (16 Sobol points of the same space, run first), against the same search without
it: the gap to the optimum of the best of the search's own 16 points after round 1.

Two objectives: on ZDT1 (6-D) and Branin-Currin (2-D), both objectives minimised, multi-objective
TPE in 8 rounds of 8 against a Sobol sample of 64: the hypervolume the 64 points dominate, up to
a reference point (ZDT1: (1.1, 11); Branin-Currin: (18, 6), BoTorch's).

Every search runs as a researcher's would, through the local backend in a git repository of its
own (`lock` or `propose`, commit, `submit`; the values read back with `status --format json`),
and again in-process (the search's functions told the objective directly): the two must agree.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.core.aims import Aim, Aims, Goal
from runner.core.locked import Locked, Seed, Seeds
from runner.core.model import Cell
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.examples.objectives import BRANIN_MIN, TWO, branin
from runner.manifest.seeds import Seeding
from runner.search.draw import draw
from runner.search.pareto import hypervolume
from runner.search.points import Result, Told
from runner.search.rounds import SoFar, next_round
from tests.benchmarks.common import Config, Row, seconds, verdict
from tests.benchmarks.common import run_as_user as shell

SEEDS, QUICK_SEEDS, BATCH, POINTS, PRIOR, DIGITS = 10, 1, 8, 64, 16, 6
BRANIN_SPACE = (
    Distribution("x1", Kind.UNIFORM, (-5.0, 10.0)),
    Distribution("x2", Kind.UNIFORM, (0.0, 15.0)),
)


@dataclass(frozen=True)
class Two:
    name: str
    function: str
    space: tuple[Distribution, ...]
    reference: tuple[float, float]


PROBLEMS = (
    Two(
        "ZDT1",
        "zdt1",
        tuple(Distribution(f"x{i}", Kind.UNIFORM, (0.0, 1.0)) for i in range(1, 7)),
        (1.1, 11.0),
    ),
    Two(
        "Branin-Currin",
        "branin_currin",
        tuple(Distribution(f"x{i}", Kind.UNIFORM, (0.0, 1.0)) for i in range(1, 3)),
        (18.0, 6.0),
    ),
)
AIMS = (Aim("f1", Goal.MINIMIZE), Aim("f2", Goal.MINIMIZE))


def _manifest(name: str, function: str, space: Sequence[Distribution], sample: str) -> str:
    arguments = ", ".join(f'--{d.name}, "{{{d.name}}}"' for d in space)
    ranges = "".join(
        f"      {d.name}: {{uniform: [{d.bounds[0]}, {d.bounds[1]}]}}\n" for d in space
    )
    return (
        f"version: 1\nname: {name}\ndraft: true\n"
        "beaker: {workspace: ai2/bench, clusters: [ai2/jupiter]}\n"
        "tasks:\n  - name: objective\n    image: {docker: python:3.12-slim}\n"
        f"    command: [python, -m, runner.examples.objectives, {function}]\n"
        f"    arguments: [{arguments}]\n"
        f"params:\n  sample:\n{sample}    digits: {DIGITS}\n    space:\n{ranges}"
    )


class Repo:
    """A git repository of the benchmark's own, whose sweeps run on the local backend."""

    def __init__(self, path: Path) -> None:
        self.path = path
        (path / "sweeps").mkdir(parents=True)
        (path / ".gitignore").write_text(".runs/\n")
        shell(["git", "init", "-q"], path)

    def write(self, name: str, text: str) -> None:
        (self.path / "sweeps" / f"{name}.yaml").write_text(text, encoding="utf-8")

    def step(self, command: str, name: str) -> None:
        """`lock` or `propose`, a commit, a `submit`: one round, as the Propose workflow runs it."""
        runner = ["python", "-m", "runner"]
        shell([*runner, command, f"sweeps/{name}.yaml"], self.path)
        shell(["git", "add", "-A"], self.path)
        shell(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", name], self.path
        )
        shell([*runner, "submit", "--backend", "local", f"sweeps/{name}.yaml"], self.path)

    def values(self, name: str, metrics: Sequence[str]) -> list[tuple[float, ...]]:
        argv = ["python", "-m", "runner", "status", "--format", "json", f"sweeps/{name}.yaml"]
        (sweep,) = json.loads(shell(argv, self.path))["sweeps"]
        return [tuple(float(p["metrics"][m]) for m in metrics) for p in sweep["points"]]


def _sampled(method: str, n: int, seed: int, extra: str = "") -> str:
    return f"    method: {method}\n    n: {n}\n    seed: {seed}\n{extra}"


def _warm_locally(root: Path, seed: int, warm: bool) -> float:
    repo = Repo(root / f"warm-{seed}-{warm}")
    repo.write(
        "prior", _manifest("prior", "branin", BRANIN_SPACE, _sampled("sobol", PRIOR, 1000 + seed))
    )
    repo.step("lock", "prior")
    extra = f"    batch: {BATCH}\n    metric: value\n" + (
        "    seed_from: [{sweep: prior}]\n" if warm else ""
    )
    repo.write(
        "search",
        _manifest("search", "branin", BRANIN_SPACE, _sampled("tpe", 2 * BATCH, seed, extra)),
    )
    for _ in range(2):
        repo.step("propose", "search")
    return min(v for (v,) in repo.values("search", ["value"])) - BRANIN_MIN


def _xs(row: Sequence[Cell]) -> list[float]:
    """A point's values as the objective reads them (every parameter is a number here)."""
    return [float(v) for v in row if isinstance(v, int | float)]


def _warm_in_process(seed: int, warm: bool) -> float:
    prior = draw(Sample(Method.SOBOL, PRIOR, 1000 + seed, DIGITS, BRANIN_SPACE), 0, PRIOR)
    seeds = Seeds(
        ("value",),
        tuple(Seed("prior", str(i), r, (branin(*_xs(r)),)) for i, r in enumerate(prior)),
    )
    sample = Sample(Method.TPE, 2 * BATCH, seed, DIGITS, BRANIN_SPACE, batch=BATCH)
    value = Aims((Aim("value", Goal.MINIMIZE),))
    step = next_round(sample, value, None, SoFar(seeding=Seeding(seeds) if warm else None))
    told = tuple(Told(r, Result.DONE, branin(*_xs(r))) for r in step.rows)
    lock = Locked(sample.digest, step.rows, step.rounds, seeds=seeds if warm else None)
    step = next_round(sample, value, lock, SoFar(told))
    return min(branin(*_xs(r)) for r in step.rows) - BRANIN_MIN


def _front_locally(root: Path, problem: Two, method: str, seed: int) -> float:
    repo = Repo(root / f"{problem.function}-{method}-{seed}")
    extra = (
        f"    batch: {BATCH}\n    metric: [f1, f2]\n    goal: minimize\n" if method == "tpe" else ""
    )
    repo.write(
        "search",
        _manifest("search", problem.function, problem.space, _sampled(method, POINTS, seed, extra)),
    )
    for _ in range(POINTS // BATCH if method == "tpe" else 1):
        repo.step("propose" if method == "tpe" else "lock", "search")
    return hypervolume(repo.values("search", ["f1", "f2"]), problem.reference)


def _front_in_process(problem: Two, method: str, seed: int) -> float:
    f: Callable[[Sequence[float]], tuple[float, float]] = TWO[problem.function]
    sample = Sample(Method(method), POINTS, seed, DIGITS, problem.space, batch=BATCH)
    if method != "tpe":
        found = [f(_xs(r)) for r in draw(sample, 0, POINTS)]
        return hypervolume(found, problem.reference)
    step = next_round(sample, Aims(AIMS), None, SoFar())
    while len(step.rows) < POINTS:
        told = tuple(Told(r, Result.DONE, f(_xs(r))[0], values=f(_xs(r))) for r in step.rows)
        locked = Locked(sample.digest, step.rows, step.rounds)
        step = next_round(sample, Aims(AIMS), locked, SoFar(told))
    return hypervolume([f(_xs(r)) for r in step.rows], problem.reference)


def _quartiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    q1, median, q3 = statistics.quantiles(ordered, n=4) if len(ordered) > 2 else (ordered[0],) * 3
    return f"median {median:.3g} (quartiles {q1:.3g}–{q3:.3g}, {len(ordered)} seed(s))"


def run(config: Config) -> list[Row]:
    seeds = range(QUICK_SEEDS if config.quick else SEEDS)
    rows, agree, searches = [], 0, 0
    started = time.perf_counter()
    gaps = {w: [_warm_locally(config.workdir, s, w) for s in seeds] for w in (True, False)}
    each = (time.perf_counter() - started) / (2 * len(seeds))
    for w, found in gaps.items():
        agree += sum(
            abs(v - _warm_in_process(s, w)) <= 1e-9 * max(1.0, v)
            for v, s in zip(found, seeds, strict=True)
        )
        searches += len(found)
    warm, cold = statistics.median(gaps[True]), statistics.median(gaps[False])
    rows.append(
        Row(
            "15",
            f"Branin: best of a search's own {2 * BATCH} points after round 1, with {PRIOR} prior points",
            f"gap to the optimum: {_quartiles(gaps[True])}",
            f"without them (cold): {_quartiles(gaps[False])}; {seconds(each)} per search",
            f"{cold / warm:.1f}× lower" if warm > 0 else "",
            "median gap warm < cold",
            verdict(warm < cold),
        )
    )
    for problem in PROBLEMS:
        volumes: dict[str, list[float]] = {}
        for method in ("tpe", "sobol"):
            volumes[method] = [_front_locally(config.workdir, problem, method, s) for s in seeds]
            agree += sum(
                abs(v - _front_in_process(problem, method, s)) <= 1e-9 * max(1.0, v)
                for v, s in zip(volumes[method], seeds, strict=True)
            )
            searches += len(seeds)
        tpe, sobol = statistics.median(volumes["tpe"]), statistics.median(volumes["sobol"])
        rows.append(
            Row(
                "15",
                f"{problem.name}: hypervolume of {POINTS} points, two-objective TPE in rounds of {BATCH}",
                _quartiles(volumes["tpe"]),
                f"a Sobol sample of {POINTS}: {_quartiles(volumes['sobol'])}",
                f"{tpe / sobol:.2f}×" if sobol > 0 else "",
                "median TPE ≥ Sobol",
                verdict(tpe >= sobol),
            )
        )
    config.note(
        f"Issue 40: {agree} of {searches} searches through the local backend agreed exactly with the"
        " same search run in-process (warm starts: the prior points read from the other sweep's"
        " observation; two objectives: the same hypervolume)."
    )
    return rows
