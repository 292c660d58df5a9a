"""Successive halving's rungs as rounds (`runner.search.rungs`, `next_rung`): a finished rung's
best max(1, n // eta) finished points go on (a failed point last, ties by key); a rung waits for
its last point, naming what it waits for; the last rung ends it. Then `propose`'s use case on the
fake at the port (each rung the top of the one before, nothing rewritten by a rerun, the
pull request's table), and a whole halving of the learning curve on the local backend."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.analysis.findings import find
from runner.apply import ApplyOptions, apply
from runner.backends import ExperimentState
from runner.cli import main
from runner.commands.propose import same_code
from runner.core.aims import Aim, Goal
from runner.core.ladder import Ladder
from runner.core.locked import Locked, Rows, RungLock
from runner.core.space import iter_points
from runner.examples.objectives import curve
from runner.locking.proposing import proposals
from runner.manifest import Locks, load
from runner.observe import sweeps
from runner.plan import catalog
from runner.render.shape import PARENT_KEY
from runner.report import status
from runner.report.page import markdown
from runner.report.rounds import pull_request
from runner.report.rungs import rung_line
from runner.search import rungs
from runner.search.points import Result, Told
from runner.search.rounds import Round, RoundVerdict, SoFar, next_rung
from runner.search.rungs import SuccessiveHalving
from tests.conftest import PROJECT
from tests.fake_backend import FakeBackend
from tests.helpers import Quiet, finish_rung, halving, write_manifest

LADDER = Ladder("steps", (100, 300, 900), 3)
CONFIGS = tuple((float(i),) for i in range(7))
HALF = SuccessiveHalving(LADDER, Aim("loss", Goal.MINIMIZE), ("x",), CONFIGS, "of")


def _told(rung: int, *values: float | None, rows: tuple[tuple[float], ...] = CONFIGS) -> SoFar:
    """Rung `rung`'s points observed: finished with each value given, failed for None."""
    told = [
        Told(
            (*row, LADDER.values[rung], rung),
            Result.DONE if v is not None else Result.FAILED,
            v,
            f"key-{row[0]:.0f}",
            f"exp-{row[0]:.0f}",
        )
        for row, v in zip(rows, values, strict=False)
    ]
    return SoFar(tuple(told))


def test_a_finished_rung_promotes_its_best_n_over_eta_a_failed_point_last_ties_by_key() -> None:
    # 7 points, eta 3: max(1, 7 // 3) = 2 go on; config 3 failed, 1 and 5 tie (key-1 first)
    step = next_rung(HALF, None, _told(0, 0.9, 0.2, 0.7, None, 0.4, 0.2, 0.3))
    assert step.verdict is RoundVerdict.PROPOSED and step.number == 1
    assert step.new == ((1.0,), (5.0,)) and step.rows == step.new and step.rounds == (1, 1)
    ranked = [t.row for t in rungs.ranked(HALF, step.previous)]
    assert ranked == [(1.0,), (5.0,), (6.0,), (4.0,), (2.0,), (0.0,), (3.0,)]
    maximize = dataclasses.replace(HALF, aim=Aim("acc", Goal.MAXIMIZE))
    assert next_rung(maximize, None, _told(0, 0.9, 0.2, 0.7, None, 0.4, 0.1, 0.3)).new == (
        (0.0,),
        (2.0,),
    )
    three = dataclasses.replace(HALF, configurations=CONFIGS[:3])
    assert next_rung(three, None, _told(0, None, 0.5, None)).new == ((1.0,),)  # max(1, 3 // 3)


def test_a_rung_waits_for_its_last_point_and_says_which_then_the_last_rung_ends_it() -> None:
    observed = _told(0, 0.9, 0.2, 0.7, None, 0.4, 0.2)  # config 6 not submitted yet
    waits = next_rung(HALF, None, observed)
    assert waits.verdict is RoundVerdict.WAITING and waits.number == 0 and waits.new == ()
    assert rung_line("s.yaml", HALF, waits) == (
        "s.yaml: rung 0 has 6 of 7 point(s) ended: the next rung waits for 1 point(s) not"
        " submitted yet"
    )
    running = dataclasses.replace(observed.told[1], result=Result.PENDING, value=None)
    pending = SoFar((*observed.told[:1], running, *observed.told[2:]))
    assert "waits for exp-1 and 1 point(s) not submitted" in rung_line(
        "s.yaml", HALF, next_rung(HALF, None, pending)
    )
    stopped = next_rung(HALF, None, SoFar(observed.told, "stopped: 1 failed"))
    assert stopped.verdict is RoundVerdict.STOPPED  # said at once: a held point never ends
    assert rung_line("s.yaml", HALF, stopped) == (
        "s.yaml: the halving stopped: 1 failed: no rung proposed"
    )
    assert next_rung(HALF, None, _told(0, *[None] * 7)).verdict is RoundVerdict.EXHAUSTED
    stop = SoFar(_told(0, *[1.0] * 7).told, "stopped: loss below 2")
    assert next_rung(HALF, None, stop).verdict is RoundVerdict.STOPPED


def test_rungs_follow_one_another_to_the_last_and_a_lock_of_other_rungs_is_dropped() -> None:
    def locked(step_rows: Rows, numbers: tuple[int, ...]) -> Locked:
        return Locked(
            "", (), (), RungLock("of", ("x",), tuple(zip(numbers, step_rows, strict=True)))
        )

    first = next_rung(HALF, None, _told(0, 7, 6, 5, 4, 3, 2, 1))
    assert first.new == ((6.0,), (5.0,))
    lock = locked(first.rows, first.rounds)
    assert rungs.so_far(HALF, lock) == (first.rows, first.rounds)
    second = next_rung(HALF, lock, _told(1, 0.5, 0.1, rows=((6.0,), (5.0,))))
    assert second.number == 2 and second.new == ((5.0,),) and second.rounds == (1, 1, 2)
    done = next_rung(HALF, locked(second.rows, second.rounds), _told(2, 0.05, rows=((5.0,),)))
    assert done.verdict is RoundVerdict.COMPLETE and done.best is not None
    assert rung_line("s.yaml", HALF, done) == (
        "s.yaml: halving complete: rung 2 (steps=900) is the last; best loss 0.05 at exp-5"
    )
    other = dataclasses.replace(HALF, of="another")  # eta, min, max or rung 0 changed
    reset = next_rung(other, lock, _told(0, 1, 2))  # rung 0 unfinished: rung 0 only
    assert reset.verdict is RoundVerdict.PROPOSED and reset.rows == () and reset.new == ()


def _propose(root: Path, backend: FakeBackend) -> Round | None:
    cat = catalog.load(root, [SHOWN], Locks.MAY_BE_STALE)
    found = proposals(cat, sweeps.observer(cat, backend), same_code(root))
    return found[0].round if found else None


def _submit(root: Path, backend: FakeBackend) -> None:
    apply(catalog.load(root, ()).plans(), backend, ApplyOptions(root), Quiet())


SHOWN = "sweeps/halving.yaml"
LOSS: dict[tuple[float, float], float | None] = {  # lr 0.1 is bad; one of its points fails
    (0.1, 0.0): 3.0, (0.1, 0.1): None, (0.1, 0.2): 2.9,
    (0.01, 0.0): 0.7, (0.01, 0.1): 0.4, (0.01, 0.2): 0.6,
    (0.001, 0.0): 0.8, (0.001, 0.1): 0.5, (0.001, 0.2): 0.45,
}  # fmt: skip


def _rung_1_proposed(root: Path, text: str | None = None) -> tuple[FakeBackend, Round]:
    """The halving (`text`, else `halving()`)'s rung 0 submitted, ended with `LOSS`, and rung 1
    proposed and written."""
    write_manifest(root, text or halving(), "halving.yaml")
    backend = FakeBackend()
    _submit(root, backend)
    finish_rung(root, backend, 0, LOSS)
    found = _propose(root, backend)
    assert found is not None
    return backend, found


def test_propose_promotes_each_rung_from_the_last_through_the_port_and_a_rerun_writes_nothing(
    tmp_path: Path,
) -> None:
    write_manifest(tmp_path, halving(), "halving.yaml")
    backend = FakeBackend()
    assert _propose(tmp_path, backend) is None  # rung 0: nothing submitted, nothing written
    lock = tmp_path / "sweeps" / "halving.lock.json"
    assert not lock.exists()
    _submit(tmp_path, backend)
    assert len(backend.made) == 9
    finish_rung(tmp_path, backend, 0, LOSS)

    first = _propose(tmp_path, backend)
    assert first is not None and first.step.number == 1
    # the best 9 // 3 = 3 by loss: 0.4, 0.45, 0.5
    assert first.step.new == ((0.01, 0.1), (0.001, 0.2), (0.001, 0.1))
    written = lock.read_bytes()
    assert first.text.encode() == written and first.hours == (6.0, 6.0, 6.0)
    backend.calls.clear()
    assert _propose(tmp_path, backend) is None and lock.read_bytes() == written  # no new byte
    assert [c for c, _ in backend.calls] == ["results", "list"]  # one look

    _submit(tmp_path, backend)
    assert len(backend.made) == 12
    finish_rung(tmp_path, backend, 1, {(0.01, 0.1): 0.3, (0.001, 0.2): 0.2, (0.001, 0.1): 0.35})
    second = _propose(tmp_path, backend)
    assert second is not None and second.step.new == ((0.001, 0.2),)
    assert json.loads(lock.read_text())["rungs"]["points"] == [
        [1, [0.01, 0.1]], [1, [0.001, 0.2]], [1, [0.001, 0.1]], [2, [0.001, 0.2]]
    ]  # fmt: skip


def test_a_rung_pull_request_shows_the_rung_ranked_the_cut_off_and_the_next_rung_priced(
    tmp_path: Path,
) -> None:
    _, found = _rung_1_proposed(tmp_path)
    pull = pull_request(found)
    assert pull["title"] == "Propose rung 1 of halving (3 point(s), steps=300)"
    assert str(pull["branch"]).startswith("sweep-propose/halving-")
    assert str(pull["branch"]).endswith("-rung-1") and pull["round"] == 1
    body = str(pull["body"])
    table = body.split("Rung 0 (steps=100):\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0] == "| rank | experiment | lr | wd | loss | promoted |"
    assert len(table) == 2 + 9
    assert table[2].startswith("| 1 | `halving-") and table[2].endswith(
        "| `0.01` | `0.1` | 0.4 | **yes** |"
    )
    assert table[4].endswith("| `0.001` | `0.1` | 0.5 | **yes** |")
    assert table[5].endswith("| `0.01` | `0.2` | 0.6 | no |")
    assert table[10].endswith("| `0.1` | `0.1` | no value | no |")  # failed: last
    assert "The cut-off: the top 3 of 9 go on" in body and "the last of them has loss 0.5" in body
    assert "Rung 1 (steps=300): 3 point(s), 18 GPU-hours expected in all:" in body
    assert "| lr | wd | steps | parent | GPU-h expected |" in body
    assert "| `0.01` | `0.1` | 300 | `halving-" in body


def test_a_rung_pull_request_prices_the_next_rungs_points_from_their_specs(tmp_path: Path) -> None:
    """Rung 1 of a 1 h sweep runs 300 / 900 of it, 20 min, lifted to a floor of 30 min: each
    point's spec says 30 min and the pull request prices that (2 GPUs × 0.5 h), not a third of
    a full-length point (0.67)."""
    text = halving(timeout="1h").replace("metric: loss}", "metric: loss, min_timeout: 30m}")
    _, found = _rung_1_proposed(tmp_path, text)
    assert found.hours == (1.0, 1.0, 1.0)
    (plan,) = catalog.load(tmp_path, ()).plans()
    rung_1 = [r.rendered.spec for r in plan.rows if r.rendered and dict(r.params)["rung"] == 1]
    assert [s["tasks"][0]["timeout"] for s in rung_1] == [1800 * 10**9] * 3
    assert "Rung 1 (steps=300): 3 point(s), 3 GPU-hours expected in all:" in str(
        pull_request(found)["body"]
    )


def test_status_and_report_show_each_rung_its_promotions_and_the_best_of_the_last_rung(
    tmp_path: Path,
) -> None:
    backend, _ = _rung_1_proposed(tmp_path)
    _submit(tmp_path, backend)  # at 300 steps the loss is no lower than rung 0's best (0.4)
    finish_rung(tmp_path, backend, 1, {(0.01, 0.1): 0.5, (0.001, 0.2): 0.45, (0.001, 0.1): 0.6})
    cat = catalog.load(tmp_path, ())
    (seen,) = sweeps.observe(cat, backend)
    by_name = {p.experiment: p for p in seen.points}
    promoted = [p for p in seen.points if dict(p.params)["rung"] == 1]
    for point in promoted:  # its parent: the same configuration at rung 0
        parent = by_name[point.parent]
        assert dict(parent.params) == {**dict(point.params), "steps": 100, "rung": 0}
    best = next(p for p in promoted if p.metrics["loss"] == 0.45)

    table = status.table(seen)
    assert table.splitlines()[1].split()[:6] == [
        "experiment",
        "state",
        "exit",
        "time",
        "params",
        "parent",
    ]
    assert f"{best.experiment}  succeeded" in table and f"rung=1  {best.parent}" in table
    assert table.endswith(
        f"Best of rung 1 of 2: loss 0.45 (minimize) at {best.experiment} lr=0.001 wd=0.2"
        " steps=300 rung=1"
    )
    assert json.loads(status.render([seen], "json"))["sweeps"][0]["points"][9]["parent"]

    page = markdown(find(seen, "loss", Goal.MINIMIZE), {})
    assert f"**`{best.experiment}`**: `loss` = **0.45**" in page  # not rung 0's 0.4
    rows = page.split("### Rungs", 1)[1].split("\n\n")[2].splitlines()[2:]
    assert [[c.strip() for c in r.split("|")[1:6]] for r in rows] == [
        ["0", "100", "9", "8", "0.4"],
        ["1", "300", "3", "3", "0.45"],
        ["2", "900", "0", "0", ""],
    ]
    assert f"`{best.parent}` |" in rows[1]
    assert "over the 8 finished point(s) of rung 0" in page  # importance at one budget


@pytest.mark.slow
def test_a_whole_halving_of_the_learning_curve_runs_locally_submit_and_propose_alternating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (PROJECT / "sweeps" / "halving.yaml").read_text()
    text = text.replace("x2: [0.1, 0.5, 0.9]", "x2: [0.5]").replace("max: 2700", "max: 900")
    write_manifest(tmp_path, text, "halving.yaml")  # 9 configurations, 3 rungs
    lock = tmp_path / "sweeps" / "halving.lock.json"
    for rung in (1, 2):
        assert main(["-C", str(tmp_path), "submit", SHOWN]) == 0
        assert main(["-C", str(tmp_path), "propose", SHOWN]) == 0
        assert f"rung {rung} (steps={100 * 3**rung}): promoted" in capsys.readouterr().err
    assert main(["-C", str(tmp_path), "submit", SHOWN]) == 0
    before = lock.read_bytes()
    assert main(["-C", str(tmp_path), "propose", SHOWN]) == 0
    assert "halving complete: rung 2 (steps=900) is the last" in capsys.readouterr().err
    assert lock.read_bytes() == before  # nothing new: no byte changed

    assert main(["-C", str(tmp_path), "status", SHOWN, "--format", "json"]) == 0
    points: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    by_rung: dict[int, list[dict[str, Any]]] = {}
    for point in points:
        by_rung.setdefault(point["params"]["rung"], []).append(point)
    assert [len(by_rung[k]) for k in (0, 1, 2)] == [9, 3, 1]
    for k in (1, 2):  # each rung is the top floor(n / 3) of the one before, by the loss it ran
        below = sorted(by_rung[k - 1], key=lambda p: p["metrics"]["loss"])
        top = {(p["params"]["x1"], p["params"]["x3"]) for p in below[: len(below) // 3]}
        assert {(p["params"]["x1"], p["params"]["x3"]) for p in by_rung[k]} == top
    experiments = {p["key"]: p["experiment"] for p in points}
    loaded = load(tmp_path / SHOWN, SHOWN)
    for each in iter_points(loaded.sweep.space):
        rendered = loaded.renderer.render(each)
        params = each.as_dict()
        (task,) = rendered.spec["tasks"]
        env = {v["name"]: v.get("value") for v in task["envVars"]}
        ran = next(p for p in points if p["key"] == rendered.key)
        if params["rung"] == 0:
            assert PARENT_KEY not in env and ran["parent"] is None
            assert ran["metrics"]["resumed_from"] == 0
            continue
        parent = experiments[env[PARENT_KEY]]  # the key of a point that ran, one rung lower
        resumed = f"/weka/oe-training-default/sweep-checkpoints/halving/{parent}"
        assert f"--resume={resumed}" in task["arguments"] and ran["parent"] == parent
        assert env["SWEEP_PARENT_CHECKPOINT"] == resumed  # and it wrote it here, kept in .runs/
        assert (tmp_path / ".runs/halving/checkpoints" / resumed[1:] / "checkpoint.json").is_file()
        assert ran["metrics"]["resumed_from"] == 100 * 3 ** (int(params["rung"]) - 1)
        step = dict(next(p for p in points if p["experiment"] == parent)["params"])
        assert {k: v for k, v in step.items() if k not in ("rung", "steps")} == {
            k: v for k, v in params.items() if k not in ("rung", "steps")
        }
    assert main(["-C", str(tmp_path), "status", SHOWN]) == 0
    (best,) = by_rung[2]
    assert f"Best of rung 2 (the last): loss {best['metrics']['loss']:.4g} (minimize) at" in (
        capsys.readouterr().out
    )


def test_the_learning_curves_fall_with_steps_toward_floors_of_their_own_and_cross() -> None:
    grid = [(a, b, c) for a in (0.1, 0.5, 0.9) for b in (0.1, 0.5, 0.9) for c in (0.1, 0.5, 0.9)]
    for x in grid:
        losses = [curve(x, steps, 3) for steps in (100, 300, 900, 2700, 10**9)]
        assert losses == sorted(losses, reverse=True) and losses[-1] > 0.2
    early = sorted(grid, key=lambda x: curve(x, 100, 3))
    late = sorted(grid, key=lambda x: curve(x, 2700, 3))
    assert early != late  # the curves cross: the order at 100 steps is not the order at 2 700
    assert curve((0.5, 0.5, 0.5), 300, 1) != curve((0.5, 0.5, 0.5), 300, 2)  # seeds differ


def test_the_committed_example_plans_its_halving_at_15_percent_of_the_full_grid(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["-C", str(PROJECT), "expand", "--plan", "sweeps/halving.yaml"]) == 0
    out = capsys.readouterr().out
    assert "rung 3 (steps=2700, timeout 1h00m, projected): 1 point(s), 1." in out  # 27 → 9 → 3 → 1
    assert "rung 0 (steps=100, timeout 2m14s): 27 point(s), 1.0;" in out  # 3 600 s × 1/27, ceiled
    assert "The whole search: 4.0, 15% of the full grid's 27 (27 configuration(s)" in out


@pytest.mark.slow  # scipy's first import
def test_a_drawn_samples_halving_lock_draws_rung_0_and_propose_promotes_from_it_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sampled = halving().replace(
        "  grid:\n    lr: [0.1, 0.01, 0.001]\n    wd: [0.0, 0.1, 0.2]\n",
        "  sample:\n    method: sobol\n    n: 6\n    space:\n      lr: {log_uniform: [1e-4, 1e-1]}\n"
        "      wd: {uniform: [0.0, 0.2]}\n",
    )
    write_manifest(tmp_path, sampled, "halving.yaml")
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 1
    assert capsys.readouterr().err == (
        "error: sweeps/halving.yaml: params.sample: rung 0's configurations are not locked yet:"
        " run python -m runner lock sweeps/halving.yaml first\n"
    )
    assert main(["-C", str(tmp_path), "lock"]) == 0  # rung 0: the 6 points drawn
    lock = tmp_path / "sweeps" / "halving.lock.json"
    backend = FakeBackend()
    _submit(tmp_path, backend)
    (plan,) = catalog.load(tmp_path, ()).plans()
    for row in plan.rows:  # the lower the learning rate, the lower the loss
        made = backend.made[row.name][-1]
        loss = {"loss": float(dict(row.params)["lr"])}
        ended = dataclasses.replace(made, state=ExperimentState.SUCCEEDED, metrics=loss)
        backend.made[row.name][-1] = ended
    found = _propose(tmp_path, backend)
    assert found is not None and len(found.step.new) == 2  # 6 // 3
    lowest = sorted(float(dict(r.params)["lr"]) for r in plan.rows)[:2]
    assert sorted(float(row[0] or 0) for row in found.step.new) == lowest
    written = lock.read_bytes()
    assert main(["-C", str(tmp_path), "lock"]) == 0  # the sample is as drawn: nothing to do
    assert lock.read_bytes() == written and json.loads(written)["rungs"]["points"][0][0] == 1


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(0, 5).map(float)), min_size=1, max_size=30),
    st.integers(2, 5),
    st.sampled_from(list(Goal)),
)
def test_promotion_keeps_the_best_finished_n_over_eta_whatever_the_rung(
    values: list[float | None], eta: int, goal: Goal
) -> None:
    rows = tuple((float(i),) for i in range(len(values)))
    told = [
        Told(row, Result.DONE if v is not None else Result.FAILED, v, f"k{i:02d}")
        for i, (row, v) in enumerate(zip(rows, values, strict=True))
    ]
    half = SuccessiveHalving(Ladder("steps", (1, eta), eta), Aim("loss", goal), ("x",), rows, "")
    promoted = rungs.promote(half, told)
    finished = [t for t in told if t.value is not None]
    assert len(promoted) == min(max(1, len(values) // eta), len(finished))
    kept = [t for t in finished if t.row in promoted]
    left = [t for t in finished if t.row not in promoted]
    better = min if goal is Goal.MAXIMIZE else max
    for t in left:  # nothing left behind beats a promoted point; on a tie, the smaller key won
        worst = better(kept, key=lambda k: (k.value, k.key))
        assert not goal.better(float(t.value or 0), float(worst.value or 0))
        assert t.value != worst.value or t.key > max(k.key for k in kept if k.value == t.value)
    assert rungs.promote(half, list(reversed(told))) == promoted  # the order told never matters


def test_a_halving_stopped_by_max_failures_says_so_at_once_in_propose_and_status(
    tmp_path: Path,
) -> None:
    """Review bug E: the guardrail holds the rung's unsubmitted points, so they never end, and
    the halving said "waits for N point(s) not submitted yet" for ever."""
    text = halving().replace("params:\n", "max_running: 4\nmax_failures: 1\nparams:\n", 1)
    write_manifest(tmp_path, text, "halving.yaml")
    backend = FakeBackend()
    _submit(tmp_path, backend)  # 4 of rung 0's 9 points: max_running
    assert len(backend.made) == 4
    finish_rung(tmp_path, backend, 0, {k: None for k in LOSS})  # the 4 that ran failed
    _submit(tmp_path, backend)  # the stop holds the other 5: never submitted
    assert len(backend.made) == 4
    cat = catalog.load(tmp_path, [SHOWN], Locks.MAY_BE_STALE)
    (proposed,) = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    assert proposed.done.step.verdict is RoundVerdict.STOPPED
    assert proposed.done.step.stop == "stopped: 4 failed (max_failures 1)"
    (seen,) = sweeps.observe(catalog.load(tmp_path, [SHOWN]), backend)
    assert "note: stopped: 4 failed (max_failures 1)" in status.table(seen)


def test_a_halving_whose_point_is_canceled_or_gone_stops_and_names_it(tmp_path: Path) -> None:
    """A point taken out of a stepping search (canceled with `cancel`, or deleted from the
    backend) cannot be ranked: the search stops there, naming it, instead of promoting without
    it or waiting for it forever; a rerun of the point lets it go on."""
    write_manifest(tmp_path, halving(), "halving.yaml")
    backend = FakeBackend()
    _submit(tmp_path, backend)
    finish_rung(tmp_path, backend, 0, LOSS)
    (plan,) = catalog.load(tmp_path, ()).plans()
    gone = plan.rows[4].name
    del backend.made[gone]  # deleted in Beaker's UI
    cat = catalog.load(tmp_path, [SHOWN], Locks.MAY_BE_STALE)
    (proposed,) = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    assert proposed.done.step.verdict is RoundVerdict.STOPPED and proposed.round is None
    assert proposed.done.step.stop.startswith(f"stopped: {gone} is recorded in the ledger but")
    (seen,) = sweeps.observe(catalog.load(tmp_path, [SHOWN]), backend)
    assert f"note: stopped: {gone} is recorded in the ledger" in status.table(seen)

    write_manifest(tmp_path, halving(), "halving.yaml")  # a fresh story: a point canceled
    store = catalog.load(tmp_path, ()).ledgers()
    entries = store.read("halving").entries.values()
    (entry,) = [e for e in entries if e.experiment == plan.rows[1].name]
    store.record("halving", [dataclasses.replace(entry, canceled_at="2026-11-28T00:00:00Z")])
    backend.made[gone] = [dataclasses.replace(backend.made[plan.rows[0].name][-1], name=gone)]
    cat = catalog.load(tmp_path, [SHOWN], Locks.MAY_BE_STALE)
    (proposed,) = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    assert proposed.done.step.stop.startswith(
        f"stopped: {plan.rows[1].name} was canceled with `cancel`; the search goes on once it"
        f" runs again (python -m runner submit --restart --points {plan.rows[1].name})"
    )
