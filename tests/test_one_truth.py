"""One observation of a sweep, whoever reads it (issue 46): status, report, propose, wait, the
Slack notice, the guardrails and a warm start of another sweep name the same best point and rank
the same way, because the search (its goal and constraints) is the sweep's own, not a context a
reader supplies. Before, the submit's notice named a point a constraint rules out "highest
accuracy (0.91)" where the sweep's best is 0.73.

Everything runs through the readers' own entry points on the fake at the port."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from runner.analysis import aiming
from runner.analysis.findings import find
from runner.apply import ApplyOptions, apply
from runner.backends import ExperimentState
from runner.commands.propose import same_code
from runner.commands.report import ReportArgs, aim
from runner.core.clock import Clock
from runner.locking.proposing import proposals
from runner.locking.seeding import seeding, sources
from runner.manifest import Locks
from runner.observe import sweeps, watch
from runner.plan import catalog
from runner.report import best
from runner.search.judged import priors
from runner.search.points import Result
from runner.search.ranking import best as best_told
from tests.fake_backend import FakeBackend
from tests.helpers import Quiet, head, write_manifest
from tests.webhook import Webhook

SEARCH = """\
    command: [python, train.py, "--x={x}"]
stop_when: {metric: accuracy, above: 0.7}
params:
  sample:
    method: tpe
    n: 6
    batch: 3
    metric: accuracy
    goal: maximize
    constraints: ["mem <= 10"]
    space:
      x: {uniform: [0, 1]}
"""
WARM = SEARCH.replace("stop_when: {metric: accuracy, above: 0.7}\n", "").replace(
    "    space:\n", "    seed_from: [{sweep: acc, commit: any}]\n    space:\n"
)
RESULTS = ((0.91, 12.0), (0.55, 5.0), (0.73, 5.0))
"""accuracy and mem of round 0's three points: the first is the most accurate and breaks
`mem <= 10`, so the sweep's best is the third."""


def _ran(root: Path, backend: FakeBackend, hook: Webhook) -> dict[str, tuple[float, float]]:
    """Round 0 proposed, submitted and ended with `RESULTS`, then a submit that notifies; each
    experiment's (accuracy, mem)."""
    cat = catalog.load(root, ["sweeps/acc.yaml"], Locks.MAY_BE_STALE)
    (first,) = proposals(cat, sweeps.observer(cat, backend), same_code(root))
    assert first.round is not None and len(first.round.step.new) == 3
    apply(catalog.load(root, ["sweeps/acc.yaml"]).plans(), backend, ApplyOptions(root), Quiet())
    ran: dict[str, tuple[float, float]] = {}
    for name, values in zip(sorted(backend.made, key=_row_of(root)), RESULTS, strict=True):
        accuracy, mem = values
        made = backend.made[name][-1]
        backend.made[name][-1] = dataclasses.replace(
            made, state=ExperimentState.SUCCEEDED, metrics={"accuracy": accuracy, "mem": mem}
        )
        ran[name] = values
    plans = catalog.load(root, ["sweeps/acc.yaml"]).plans()
    apply(plans, backend, ApplyOptions(root, webhook=hook.url), Quiet())
    return ran


def _row_of(root: Path) -> Callable[[str], int]:
    """Experiment name -> its place in the lock (round 0's order)."""
    (plan,) = catalog.load(root, ["sweeps/acc.yaml"]).plans()
    order = {row.name: i for i, row in enumerate(plan.rows)}
    return lambda name: order[name]


def test_every_reader_names_the_same_best_point_and_ranks_the_same(tmp_path: Path) -> None:
    write_manifest(tmp_path, head("acc") + SEARCH, "acc.yaml")
    write_manifest(tmp_path, head("warm") + WARM, "warm.yaml")
    backend, hook = FakeBackend(), Webhook()
    try:
        ran = _ran(tmp_path, backend, hook)
    finally:
        hook.close()
    # what a person would say: among the points that keep mem <= 10, the most accurate
    kept = sorted((a, n) for n, (a, m) in ran.items() if m <= 10)
    truth = [n for _, n in reversed(kept)]
    named = truth[0]

    cat = catalog.load(tmp_path, ["sweeps/acc.yaml"])
    (seen,) = sweeps.observe(cat, backend)  # status
    shown = best.best([seen], best.OWN, None, "json")
    assert f'"experiment": "{named}"' in shown

    asked = aim(seen, ReportArgs(paths=()))  # report
    page = find(seen, asked.metric, asked.goal)
    assert page.best is not None and page.best.experiment == named
    assert [p.experiment for p in page.ranked] == truth

    cat = catalog.load(tmp_path, ["sweeps/acc.yaml"], Locks.MAY_BE_STALE)  # propose
    (proposed,) = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    told = proposed.done.step.best
    assert told is not None and told.name == named

    (plan,) = cat.plans(cat.ledgers(backend.layout))  # wait, then its final table
    waited = watch.wait(
        backend, [watch.Awaited(plan, frozenset(ran))], Clock(), watch.Timing(1.0), lambda t: None
    )
    assert waited.ending is watch.Ending.ALL_SUCCEEDED
    final = sweeps.observer(cat, backend).observation(plan)
    assert aiming.winner(final, "accuracy", asked.goal).experiment == named  # type: ignore[union-attr]

    (notice,) = [t for t in hook.taken if "finished" in t]  # the Slack notice
    assert f"Best by highest accuracy: `{named}` (0.73)" in notice
    assert "0.91" not in notice

    assert seen.stop is not None and seen.stop.point == named  # the guardrail's stop_when

    warm = catalog.load(tmp_path, ["sweeps/warm.yaml"], Locks.MAY_BE_STALE)  # a warm start
    search = warm.sweeps[0].search
    found = seeding(search, sources(warm, search, backend), lambda commit: "")
    prior = priors(search.aims, found.seeds)
    keys = {s.key: n for s, n in zip(found.seeds.points, prior, strict=True)}
    done = [t for t in prior if t.result is Result.DONE and t.feasible]
    top = best_told(done, lambda t: t.value, asked.goal)
    assert top is not None
    by_key = {p.key: p.experiment for p in seen.points}
    (seed_key,) = [k for k, t in keys.items() if t is top]
    assert by_key[seed_key] == named
