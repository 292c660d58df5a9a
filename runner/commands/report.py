"""`report`: each sweep's results page: the best point and the top ten, each parameter's
importance, parallel coordinates and the best so far (PNG with the `[plot]` extra, else Mermaid
charts), and a CSV of every point; from the same observation as `status`."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.analysis.against import Comparison, compare
from runner.analysis.findings import Findings, defaults, find, told_findings
from runner.commands.common import args_from, stderr
from runner.commands.limits import bounds, unanswered
from runner.commands.loading import observed_sweeps
from runner.core.aims import Aim, Goal
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit, GitError, ManifestError, MissingExtra, RunnerError
from runner.core.output import write_text, writing
from runner.observe.live import Live, Reading, Tails
from runner.observe.model import Observation
from runner.plan import catalog
from runner.plan.catalog import SWEEPS_DIR
from runner.repo import gitrepo
from runner.report import curves, page, pareto, plot, web
from runner.report.against import markdown as against_markdown
from runner.report.against import render_json as against_json
from runner.report.status import as_csv
from runner.search import adaptive
from runner.search.adaptive import write_study
from runner.search.ranking import Estimator

INDEX = "index.html"
"""The web page of every sweep `--output DIR` writes (`runner.report.web`)."""


@dataclass(frozen=True)
class ReportArgs:
    paths: tuple[str, ...] = ()
    metric: str | None = None
    goal: str | None = None
    output: str | None = None
    fmt: str = "markdown"
    backend: str = "auto"
    storage: str | None = None
    against: str | None = None
    """A revision: each point's metric in the ledger committed then, and now."""
    live: Live = Live.MANIFEST
    """`--live`: read every point's reporting lines (running and finished) for the learning
    curves, on Beaker too (locally they are always read)."""
    timeout: str | None = None
    """A duration (`--timeout`); None: `DEFAULT_READ_TIMEOUT`."""
    max_unreachable: str | None = None


def run(args: argparse.Namespace) -> Exit:
    renamed = {"fmt": "format", "storage": "optuna_storage"}
    given = args_from(args, ReportArgs, renamed, live=Live(args.live))
    return report(Path(args.directory), given)


def report(directory: Path, args: ReportArgs, clock: Clock | None = None) -> Exit:
    """`clock`: what the command's deadline is on (tests pass one that jumps)."""
    limits = bounds(clock or Clock(), args.timeout, args.max_unreachable, DEFAULT_READ_TIMEOUT)
    with unanswered():
        return _report(directory, args, limits)


def _report(directory: Path, args: ReportArgs, limits: Bounds) -> Exit:

    if args.storage and importlib.util.find_spec("optuna") is None:
        raise MissingExtra(
            "--optuna-storage needs Optuna: pip install 'beaker-sweep-runner[adaptive]'"
        )
    then = committed(directory, args.against) if args.against is not None else None
    reading = Reading(Tails.CURVES, args.live)
    asked = [args.metric or ""]  # `gpu_hours` asked for by name is measured
    sweeps = observed_sweeps(directory, args.paths, args.backend, reading, asked, limits)
    if args.metric and not any(p.number(args.metric) is not None for s in sweeps for p in s.points):
        have = sorted({m for s in sweeps for m in s.metric_names})
        raise RunnerError(
            f"no point has a numeric metric {args.metric!r} (metrics: {', '.join(have) or 'none yet'})"
        )
    aims = [aim(s, args) for s in sweeps]
    paged = then is None or args.output is not None  # a page, which shows importance
    # Findings for a page or a study (which needs no importance); fANOVA (Optuna, scikit-learn,
    # a forest) only for a page. The comparison alone needs the aims only.
    estimator = adaptive.estimator() if paged else Estimator.VARIANCE
    findings = [
        find(s, a.metric, a.goal, estimator)
        for s, a in zip(sweeps, aims, strict=True)
        if paged or args.storage is not None
    ]
    if args.output is not None:
        for f in findings:
            for path in write(f, Path(args.output)):
                stderr(f"report: {f.results.name}: wrote {path}")
        index = Path(args.output) / INDEX
        write_text(index, web.page(findings))
        stderr(f"report: wrote {index}")
    if args.storage is not None:
        store(findings, Path(args.storage))
    if then is not None:
        comparisons = against(then, sweeps, aims, args.backend, asked, limits)
        text = against_json(comparisons) if args.fmt == "json" else against_markdown(comparisons)
        sys.stdout.write(text)
    elif args.fmt == "json":
        sys.stdout.write(page.render_json(findings))
    elif args.output is None:
        sys.stdout.write("\n".join(page.markdown(f, {}) for f in findings))
    return Exit.OK


@dataclass(frozen=True)
class Committed:
    """`--against REV`: the sweeps' directory as committed at a revision."""

    rev: str
    files: Mapping[str, str]
    """Each file's text, by its path from the sweeps' root."""


def committed(directory: Path, rev: str) -> Committed:
    """The sweeps' directory at `rev`, read with git before anything is observed: a revision
    not in this checkout is one line, not a wait for Beaker first."""
    top = gitrepo.toplevel(directory)
    if top is None:
        raise RunnerError(
            f"--against reads the sweeps at {rev} with git: {directory} is in no git repository"
        )
    # The sweeps' root, not the directory the command runs in (`-C sweeps`), from the git top.
    here = catalog.find_root(directory.resolve()).relative_to(top.resolve())
    try:
        files = gitrepo.files_at(top, rev, (here / SWEEPS_DIR).as_posix())
    except GitError:
        raise RunnerError(
            f"--against {rev}: no such commit in this checkout (fetch it first)"
        ) from None
    return Committed(rev, {Path(name).relative_to(here).as_posix(): t for name, t in files.items()})


def against(
    then: Committed,
    sweeps: Sequence[Observation],
    aims: Sequence[Aim],
    backend: str,
    asked: Sequence[str],
    limits: Bounds | None = None,
) -> list[Comparison]:
    """Each sweep, by its aim, against itself at the revision: its manifests and ledgers as
    committed then (written into a scratch directory), observed as now (one bulk look per
    sweep, measuring the metrics `asked` for as now)."""
    rev = then.rev
    with tempfile.TemporaryDirectory(prefix="sweep-against-") as scratch:
        root = Path(scratch)
        for name, text in then.files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        paths = [s.path for s in sweeps if (root / s.path).is_file()]
        try:
            looks = (
                observed_sweeps(root, paths, backend, asked=asked, bounds=limits) if paths else []
            )
        except ManifestError as exc:
            raise RunnerError(
                f"--against {rev}: the manifests at {rev} do not load ({exc})"
            ) from None
    by_name = {o.name: o for o in looks}
    return [
        compare(s, by_name.get(s.name), rev, a.metric, a.goal)
        for s, a in zip(sweeps, aims, strict=True)
    ]


def aim(results: Observation, args: ReportArgs) -> Aim:
    """The metric and goal the sweep is judged by: those asked for, else the sweep's own
    objective's (no metric, said on stderr, when the sweep has no number yet). A metric asked
    for takes its direction from the sweep's objectives when it is one of them; another needs
    `--goal` (RunnerError: exit 1), never a direction borrowed from another metric."""
    try:
        metric = defaults(results, args.metric)
    except RunnerError as exc:
        stderr(f"report: {exc}")
        metric = ""
    if args.goal:
        return Aim(metric, Goal(args.goal))
    own = results.search.aims.goal_of(metric)
    if own is not None:
        return Aim(metric, own)
    if args.metric:
        said = results.objective
        why = f"it is judged by {said.metric} ({said.goal})" if said else "it names no objective"
        raise RunnerError(
            f"{results.path}: {metric} is not an objective of sweep {results.name} ({why}): pass"
            " --goal minimize or --goal maximize"
        )
    return Aim(metric, Goal.MINIMIZE)  # the first numeric metric of a sweep that names none


def write(f: Findings, directory: Path) -> list[Path]:
    """The sweep's CSV, images (when matplotlib is installed) and page, into directory."""

    name = f.results.name
    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
    csv = directory / f"{name}.csv"
    write_text(csv, as_csv([f.results]))
    written, images = [csv], {"csv": csv.name}
    drawn = importlib.util.find_spec("matplotlib") is not None  # else Mermaid charts, no PNGs
    if drawn and f.ranked and f.params:
        parallel = directory / f"{name}-parallel.png"
        plot.parallel(f, parallel)
        images[f"{name}: parallel coordinates of every finished point by {f.metric}"] = (
            parallel.name
        )
        progress = directory / f"{name}-progress.png"
        plot.progress(f, progress)
        images[f"{name}: best {f.metric} so far"] = progress.name
        written += [parallel, progress]
        if pareto.pareto_names(f) is not None:
            front = directory / f"{name}-pareto.png"
            pareto.save(f, front)
            images[pareto.IMAGE] = front.name
            written.append(front)
    if drawn and f.curves is not None:
        learning = directory / f"{name}-curves.png"
        curves.draw(name, f.curves, learning)
        images[f"{name}: learning curves, {f.curves.metric} by step"] = learning.name
        written.append(learning)
    page_file = directory / f"{name}.md"
    write_text(page_file, page.markdown(f, images))
    return [*written, page_file]


def store(findings: Sequence[Findings], path: Path) -> None:
    """Each sweep with a metric as an Optuna study named after it, in one file."""

    for f in findings:
        if f.metric:
            write_study(path, f.results.name, f.goal, f.space, told_findings(f))
            stderr(f"report: {f.results.name}: wrote the Optuna study {f.results.name!r} to {path}")
