"""Holding points back (runner/plan/holds.py, `runner.plan.hold`, runner/report/held.py): one
field on the row for the four reasons, one function that holds, one way to show them. Pure, and
apply's steps on the fake at the port."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from runner.apply import ApplyOptions, apply, guardrails
from runner.observe.model import SweepStop
from runner.plan import Hold, HoldReason, SweepPlan, capped, catalog, hold, holds
from runner.repo import review
from runner.report import plan as report
from runner.report.held import held_counts, held_line, held_markdown
from runner.report.submission import submit_summary
from tests.fake_backend import FakeBackend
from tests.helpers import SWEEP, Quiet, write_manifest

UNREVIEWED = Hold.back(HoldReason.UNREVIEWED)
OVER_BUDGET = Hold.back(HoldReason.OVER_BUDGET)
GPU_POLICY = "version: 1\nmax_gpus_per_point: 4\n"


def _plan(root: Path, text: str = SWEEP) -> SweepPlan:
    write_manifest(root, text, "exact.yaml")
    (plan,) = catalog.load(root, ()).plans()
    return plan


def _covering(plan: SweepPlan, rows: slice, approved: bool = False) -> review.Pin:
    """A checked pin (as the reviewed job hands on) covering these rows of the plan."""
    tokens = frozenset(review.token(r) for r in plan.rows[rows])
    return review.Pin(plan.sweep.name, len(tokens), review.NO_DIGEST, tokens, approved)


def test_a_held_point_stays_in_its_plan_marked_and_the_rest_of_the_plan_is_kept(
    tmp_path: Path,
) -> None:
    plan = dataclasses.replace(_plan(tmp_path), group="https://beaker.org/gr/01GROUP")
    keys = {r.key for r in plan.rows[:2]}
    result = hold([plan], UNREVIEWED, lambda p: keys)
    (kept,) = result.plans
    assert [r.key for r in kept.rows] == [r.key for r in plan.rows]  # none removed
    assert [r.hold for r in kept.rows] == [UNREVIEWED] * 2 + [None] * 4
    assert [r.key for _, r in result.held] == [r.key for r in plan.rows[:2]]
    assert result.reason == HoldReason.UNREVIEWED and kept.group == plan.group
    assert len(kept.to_submit) == 4 and len(kept.pending) == 4
    # A point held back for good is not held again, by another reason or the same.
    again = hold(result.plans, OVER_BUDGET, lambda p: {r.key for r in p.rows})
    assert len(again.held) == 4 and [r.hold for r in again.plans[0].rows[:2]] == [UNREVIEWED] * 2


def test_max_running_and_a_stop_wait_while_a_point_held_back_for_good_takes_no_slot(
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path, "max_running: 2\n" + SWEEP)
    (held,) = hold([plan], UNREVIEWED, lambda p: {r.key for r in p.rows[:3]}).plans
    live = capped(held, running=0)
    assert [r.hold.reason if r.hold else None for r in live.rows] == [
        *[HoldReason.UNREVIEWED] * 3,
        None,
        None,
        HoldReason.MAX_RUNNING,
    ]
    assert live.cap is not None and live.waiting == 1
    assert held_counts([live]) == (1, 3)
    stop = SweepStop("exact", "stopped: 2 failed (max_failures 2)")
    stopped = guardrails.stopped(live, stop)
    assert [r.hold for r in stopped.rows[:3]] == [UNREVIEWED] * 3
    assert {r.hold.text for r in stopped.rows[3:] if r.hold} == {stop.reason}
    assert stopped.to_submit == () and held_counts([stopped]) == (3, 3)


def test_a_capped_sweep_submits_its_reviewed_points_though_its_first_were_not_reviewed(
    tmp_path: Path,
) -> None:
    """The offline plan gives the first two points max_running's slots; pinning holds those two
    back, and the slots go to the next reviewed ones (they used to wait behind them forever)."""
    plan = _plan(tmp_path, "max_running: 2\n" + SWEEP)
    backend = FakeBackend()
    options = ApplyOptions(tmp_path, pins=[_covering(plan, slice(2, None))])
    applied = apply([plan], backend, options, Quiet())
    created = [name for call, name in backend.calls if call == "create"]
    assert created == [r.name for r in plan.rows[2:4]]
    assert applied.review is not None and len(applied.review.held) == 2
    assert held_counts(applied.plans) == (2, 2)


def test_the_summary_counts_the_points_held_over_the_budget_too(tmp_path: Path) -> None:
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "policy.yaml").write_text(GPU_POLICY, encoding="utf-8")
    plan = _plan(tmp_path, SWEEP.replace("command:", "resources: {gpus: 8}\n    command:"))
    pins = [_covering(plan, slice(None, 4)), _covering(plan, slice(None, 1), approved=True)]
    backend = FakeBackend()
    applied = apply([plan], backend, ApplyOptions(tmp_path, pins=pins), Quiet())
    assert [name for call, name in backend.calls if call == "create"] == [plan.rows[0].name]
    assert applied.review is not None and applied.over_budget is not None
    assert (len(applied.review.held), len(applied.over_budget.held)) == (2, 3)
    waiting, held = held_counts(applied.plans)
    assert (waiting, held) == (0, 5)
    assert "0 point(s) waiting (max_running, or a sweep's stop), 5 held back" in submit_summary(
        [], waiting=waiting, held=held
    )


def test_every_hold_is_shown_one_way(tmp_path: Path) -> None:
    plan = dataclasses.replace(_plan(tmp_path), group="https://beaker.org/gr/01GROUP")
    unreviewed = holds.hold_back(
        [plan], lambda p: review.uncovered(p, [_covering(p, slice(None, 4))])
    )
    table = report.table(unreviewed.plans)
    assert table.count("held back: not in a reviewed plan") == 2
    assert (
        "Plan: 6 to submit, 0 already submitted, 0 drifted, 0 orphaned; 2 held back (not in a"
        in table
    )
    assert "https://beaker.org/gr/01GROUP" in table and "made by the first submit" not in table
    over = dataclasses.replace(
        hold([plan], OVER_BUDGET, lambda p: {p.rows[0].key}), because=("sweeps/x.yaml:1:1: y",)
    )
    for held, heading in ((unreviewed, "## Not in a reviewed plan"), (over, "## Held back: over")):
        text = held_markdown(held)
        assert text.startswith(heading) and "| sweep | experiment | key | params |" in text
        assert f"**{len(held.held)} point(s) held back**" in text
    assert "- sweeps/x.yaml:1:1: y" in held_markdown(over)
    assert held_line(unreviewed) == "2 point(s) held back: not in a reviewed plan"
    assert held_line(over) == "1 point(s) held back: over the budget policy, not approved"
    assert held_markdown(hold([plan], UNREVIEWED, lambda p: ())) == ""


def test_a_stopped_capped_sweep_is_summarised_from_its_rows(tmp_path: Path) -> None:
    """The cap's count and the stop's words are read from the rows: after a stop re-held the
    points max_running had let through or kept waiting, none waits for a slot, all six for the
    stop (the summary used to keep the cap's 4 while every row said 'stopped')."""
    plan = _plan(tmp_path, "max_running: 2\nmax_failures: 1\n" + SWEEP)
    stop = SweepStop("exact", "stopped: 1 failed (max_failures 1)")
    stopped = guardrails.stopped(capped(plan, 0), stop)
    assert {r.hold.text for r in stopped.rows if r.hold} == {stop.reason}
    assert stopped.summary() == (
        "Plan: 6 to submit, 0 already submitted, 0 drifted, 0 orphaned;"
        " max_running 2: 0 waiting (0 running now); stopped: 1 failed (max_failures 1)"
    )
    assert held_counts([stopped]) == (6, 0) and stopped.waiting == 0
    cap = json.loads(report.as_json([stopped]))["sweeps"][0]["cap"]
    assert cap == {"limit": 2, "running": 0, "waiting": 0}
    assert stopped.stopped == stop.reason and capped(plan, 0).stopped == ""
    # The cap decides again only its own waits: a stopped point takes no slot and stays stopped.
    assert capped(stopped, 0).rows == stopped.rows
