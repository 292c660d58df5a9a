"""The apply step on a fake at the port: its sequence, its steps' data and its exit-code policy."""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import Any

import pytest

from runner import ledger
from runner.apply import ACTING, PLANNING, Applied, ApplyOptions, Run, apply
from runner.backends import Capability, ExperimentState, Transient
from runner.core import keys
from runner.core.errors import Exit, RunResult
from runner.core.model import Sweep
from runner.ledger.store import LedgerStore
from runner.operate import Restart, RestartVerdict, membership
from runner.plan import SweepPlan, catalog
from runner.submit import Outcome, OutcomeStatus, Stop, StopKind
from tests.clock import VirtualClock
from tests.fake_backend import FakeBackend
from tests.helpers import MINIMAL, minimal, write_manifest


class Shown:
    """An ApplyListener that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.plans: list[tuple[SweepPlan, ...]] = []

    def planned(self, applied: Applied) -> None:
        self.events.append("planned")
        self.plans.append(applied.plans)

    def start(self, total: int) -> None:
        self.events.append(f"start {total}")

    def note(self, text: str) -> None:
        self.events.append("note")

    def wait(self, text: str) -> None:
        self.events.append("wait")

    def started(self, outcome: Outcome) -> None:
        self.events.append("started")

    def done(self, outcome: Outcome) -> None:
        self.events.append(f"done {outcome.status}")

    def finish(self) -> None:
        self.events.append("finish")


def _plans(root: Path, extra: str = "") -> list[SweepPlan]:
    minimal(root, extra=extra)
    return catalog.load(root, ()).plans()


def test_a_dry_run_shows_the_final_plan_once_and_changes_nothing(tmp_path: Path) -> None:
    backend, shown = FakeBackend(), Shown()
    applied = apply(_plans(tmp_path), backend, ApplyOptions(tmp_path, dry_run=True), shown)
    assert shown.events == ["planned"]
    assert [c for c, _ in backend.calls] == []
    assert applied.outcomes == () and applied.exit_code == 0
    assert not ledger.ledger_path(tmp_path, "demo").exists()


def test_a_submit_creates_each_point_once_records_it_and_groups_the_sweep(tmp_path: Path) -> None:
    plans, backend, shown = _plans(tmp_path), FakeBackend(), Shown()
    applied = apply(plans, backend, ApplyOptions(tmp_path, commit="c0ffee"), shown)
    assert shown.events[:2] == ["planned", "start 2"]
    creates = [name for call, name in backend.calls if call == "create"]
    assert sorted(creates) == sorted(row.name for row in plans[0].rows)
    assert [o.status for o in applied.outcomes] == [OutcomeStatus.CREATED] * 2
    assert applied.exit_code == 0 and applied.result == "ok"
    record = ledger.read(ledger.ledger_path(tmp_path, "demo"), "demo")
    assert {e.commit for e in record.entries.values()} == {"c0ffee"}
    assert [g.group is not None for g in applied.groups] == [True]


def test_a_refused_point_exits_4_and_the_others_are_submitted(tmp_path: Path) -> None:
    plans = _plans(tmp_path)
    refused = plans[0].rows[0].name
    applied = apply(plans, FakeBackend(rejects=[refused]), ApplyOptions(tmp_path), Shown())
    statuses = sorted(o.status for o in applied.outcomes)
    assert statuses == [OutcomeStatus.CREATED, OutcomeStatus.REJECTED]
    assert (applied.result, applied.exit_code) == ("rejected", 4)


def test_a_step_added_before_the_submit_can_stop_it_before_any_create(tmp_path: Path) -> None:
    """What a failure budget or a cost check does: one function in the sequence."""

    def refuse(run: Run, applied: Applied) -> Applied:
        return dataclasses.replace(applied, stop=Stop(StopKind.POLICY, "over budget"))

    backend = FakeBackend()
    applied = apply(
        _plans(tmp_path), backend, ApplyOptions(tmp_path), Shown(), acting=(refuse, *ACTING)
    )
    assert [c for c, _ in backend.calls if c == "create"] == []
    assert [o.status for o in applied.outcomes] == [OutcomeStatus.NOT_STARTED] * 2
    assert {o.error for o in applied.outcomes} == {"never started: over budget"}
    assert (applied.result, applied.exit_code) == ("rejected", 4) and applied.groups == ()


def test_restart_failed_restarts_in_place_and_the_plan_is_read_again(tmp_path: Path) -> None:
    root = tmp_path
    backend = FakeBackend()
    apply(_plans(root), backend, ApplyOptions(root), Shown())
    name = sorted(backend.made)[0]
    failed = dataclasses.replace(backend.made[name][-1], state=ExperimentState.FAILED)
    backend.made[name][-1] = failed
    options = ApplyOptions(root, restart_failed=True)
    shown = Shown()
    applied = apply(catalog.load(root, ()).plans(), backend, options, shown)
    assert applied.restarts is not None
    assert [(r.name, r.status) for r in applied.restarts] == [(name, RestartVerdict.RESTARTED)]
    (row,) = [r for r in shown.plans[0][0].rows if r.name == name]
    assert row.entry is not None and row.entry.restarts == 1  # the re-read plan shows it
    assert applied.outcomes == () and applied.exit_code == 0


def test_a_run_stopped_before_the_restarts_restarts_and_reads_nothing(tmp_path: Path) -> None:
    """What `check_priorities` does to a sweep above its workspace's maximum: the stop, not
    an exception, so the summary is still written; no later step restarts or lists."""

    def refuse(run: Run, applied: Applied) -> Applied:
        return dataclasses.replace(applied, stop=Stop(StopKind.POLICY, "over the maximum"))

    backend = FakeBackend()
    apply(_plans(tmp_path), backend, ApplyOptions(tmp_path), Shown())
    name = sorted(backend.made)[0]
    failed = dataclasses.replace(backend.made[name][-1], state=ExperimentState.FAILED)
    backend.made[name][-1] = failed
    backend.calls.clear()
    options = ApplyOptions(tmp_path, restart_failed=True)
    plans = catalog.load(tmp_path, ()).plans()
    applied = apply(plans, backend, options, Shown(), planning=(refuse, *PLANNING))
    assert backend.calls == [] and backend.restarted[name] == 0
    assert applied.restarts is None and (applied.result, applied.exit_code) == ("rejected", 4)


class SilentOn(FakeBackend):
    """Does not answer the look at one sweep (`Transient`, as Beaker down)."""

    def __init__(self, sweep: str) -> None:
        super().__init__()
        self.silent = sweep

    def experiments(self, sweep: Sweep, *args: Any, **kwargs: Any) -> Any:
        if sweep.name == self.silent:
            raise Transient(f"list {sweep.name}: gRPC DEADLINE_EXCEEDED")
        return super().experiments(sweep, *args, **kwargs)


def test_a_look_not_answered_after_a_restart_stops_the_run_and_keeps_the_restart(
    tmp_path: Path,
) -> None:
    """The cap of a sweep the restarts did not look at lists it after they acted: a failure
    there is the run's stop (exit 5, nothing created), and the restart stays reported."""
    backend = SilentOn("capped")
    apply(_plans(tmp_path), backend, ApplyOptions(tmp_path), Shown())
    name = sorted(backend.made)[0]
    backend.made[name][-1] = dataclasses.replace(
        backend.made[name][-1], state=ExperimentState.FAILED
    )
    minimal(tmp_path, "capped", extra="max_running: 1\n")
    backend.calls.clear()
    options = ApplyOptions(tmp_path, restart_failed=True)
    applied = apply(catalog.load(tmp_path, ()).plans(), backend, options, Shown())
    assert applied.restarts is not None
    assert [(r.name, r.status) for r in applied.restarts] == [(name, RestartVerdict.RESTARTED)]
    assert applied.stop == Stop(StopKind.UNREACHABLE, "list capped: gRPC DEADLINE_EXCEEDED")
    assert [c for c, _ in backend.calls if c == "create"] == []
    assert {o.status for o in applied.outcomes} == {OutcomeStatus.NOT_STARTED}
    assert (applied.result, applied.exit_code) == ("incomplete", 5)


def test_a_draft_is_planned_but_only_a_backend_that_runs_drafts_creates_it(
    tmp_path: Path,
) -> None:
    plans = _plans(tmp_path, extra="draft: true\n")
    shared = FakeBackend()
    assert apply(plans, shared, ApplyOptions(tmp_path), Shown()).outcomes == ()
    local = FakeBackend(capabilities=[Capability.RUNS_DRAFTS])
    assert len(apply(plans, local, ApplyOptions(tmp_path), Shown()).outcomes) == 2


def test_the_sequence_is_the_documented_one() -> None:
    assert [s.__name__ for s in PLANNING] == [
        "advance_searches",
        "check_priorities",
        "resume_local_runs",
        "resume_preempted_points",
        "restart_failed_points",
        "hold_back_unreviewed",
        "hold_back_over_budget",
        "cap_running",
        "stop_guarded_sweeps",
        "hold_over_allocation",
    ]
    assert [s.__name__ for s in ACTING] == ["submit_points", "group_sweeps", "announce_events"]


def _outcome(status: OutcomeStatus) -> Outcome:
    return Outcome("s", None, status)  # type: ignore[arg-type]  # the policy reads statuses only


@pytest.mark.parametrize(
    ("outcomes", "stop", "restart", "expected"),
    [
        ((OutcomeStatus.CREATED, OutcomeStatus.ADOPTED), None, None, ("ok", 0)),
        ((OutcomeStatus.REJECTED, OutcomeStatus.CREATED), None, None, ("rejected", 4)),
        ((OutcomeStatus.REJECTED, OutcomeStatus.UNKNOWN), None, None, ("incomplete", 5)),
        ((OutcomeStatus.FAILED,), StopKind.SIGTERM, None, ("interrupted", 143)),
        ((OutcomeStatus.NOT_STARTED,), StopKind.SIGINT, None, ("interrupted", 130)),
        ((OutcomeStatus.CREATED,), None, RestartVerdict.FAILED, ("rejected", 4)),
        ((OutcomeStatus.NOT_STARTED,), None, RestartVerdict.FAILED, ("incomplete", 5)),
        ((), None, RestartVerdict.SKIPPED, ("ok", 0)),
        ((OutcomeStatus.CANCELED, OutcomeStatus.CREATED), None, None, ("canceled", 7)),
        ((OutcomeStatus.CANCELED, OutcomeStatus.UNKNOWN), None, None, ("incomplete", 5)),
        ((OutcomeStatus.CANCELED, OutcomeStatus.REJECTED), None, None, ("rejected", 4)),
        ((), StopKind.UNREACHABLE, None, ("incomplete", 5)),  # a planning read not answered
        ((), StopKind.POLICY, RestartVerdict.RESTARTED, ("rejected", 4)),
    ],
)
def test_one_exit_code_policy(
    outcomes: tuple[OutcomeStatus, ...],
    stop: StopKind | None,
    restart: RestartVerdict | None,
    expected: tuple[str, int],
) -> None:
    restarts = None if restart is None else (Restart("s", "p", restart, "", 1),)
    applied = Applied(
        (),
        restarts=restarts,
        outcomes=tuple(_outcome(s) for s in outcomes),
        stop=None if stop is None else Stop(stop, "why"),
    )
    assert (applied.result, applied.exit_code) == expected


def test_the_group_step_reads_the_runs_clock_for_its_deadline(tmp_path: Path) -> None:
    """One deadline per submit, on the run's clock (it had its own, on time.monotonic)."""
    plans, backend = _plans(tmp_path), FakeBackend()
    apply(plans, backend, ApplyOptions(tmp_path, dry_run=False), Shown())
    plans = catalog.load(tmp_path, ()).plans()
    store = LedgerStore(tmp_path)
    (late,) = membership.ensure_groups(backend, plans, store, deadline=5.0, now=lambda: 6.0)
    assert late.group is None and late.error == "the run's deadline has passed"
    (early,) = membership.ensure_groups(backend, plans, store, deadline=5.0, now=lambda: 1.0)
    assert early.group is not None and early.group.members == 2


def test_an_entry_is_built_in_one_place_for_a_submit_and_a_cancel(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path)
    point = plan.rows[0].rendered
    assert point is not None
    entry = ledger.Entry.of(point, "fake://x", "id-x", "c0ffee", "2026-01-01T00:00:00Z")
    assert (entry.key, entry.experiment, entry.commit) == (point.key, point.name, "c0ffee")
    assert keys.unpack_spec(entry.spec) is not None and entry.params == dict(point.params)
    store = LedgerStore(tmp_path)
    store.record("demo", [entry])
    assert store.path("demo") == tmp_path / "sweeps" / "ledger" / "demo.jsonl"
    assert store.read("demo").entries == {point.key: entry}
    assert store.set_group("demo", "fake://g") and store.read("demo").group == "fake://g"


class _CappedSweep:
    """Four points under max_running 2 on the port fake, after two submits: the first point
    failed, the second succeeded, the last two took the free slots (2 live)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        lrs = "lr: [0.1, 0.01, 0.001, 0.0001]"
        text = MINIMAL.format(name="cap").replace("lr: [0.1, 0.01]", lrs)
        write_manifest(root, "max_running: 2\n" + text, "cap.yaml")
        self.backend = FakeBackend()
        apply(self.plans(), self.backend, ApplyOptions(root), Shown())
        self.failed, succeeded = sorted(self.backend.made)
        self.set_state(self.failed, ExperimentState.FAILED)
        self.set_state(succeeded, ExperimentState.SUCCEEDED)
        apply(self.plans(), self.backend, ApplyOptions(root), Shown())
        assert len(self.backend.made) == 4 and self.live() == 2
        self.restart_failed = ApplyOptions(root, restart_failed=True)

    def plans(self) -> list[SweepPlan]:
        return catalog.load(self.root, ()).plans()

    def live(self) -> int:
        return sum(found[-1].state.live for found in self.backend.made.values())

    def set_state(self, name: str, state: ExperimentState) -> None:
        made = self.backend.made[name]
        made[-1] = dataclasses.replace(made[-1], state=state)

    def free_a_slot(self) -> None:
        made = self.backend.made
        self.set_state(
            next(n for n in sorted(made) if made[n][-1].state.live), ExperimentState.SUCCEEDED
        )

    def restarts(self) -> list[Restart]:
        applied = apply(self.plans(), self.backend, self.restart_failed, Shown())
        assert applied.restarts is not None
        return list(applied.restarts)


def test_a_restart_takes_a_slot_under_max_running_like_a_new_point(tmp_path: Path) -> None:
    """4 points, max_running 2: with 2 queued or running, a failed point waits for a slot
    instead of making 3 live; once one ends, `--restart-failed` restarts it."""
    sweep = _CappedSweep(tmp_path)
    first = sweep.failed
    ((name, verdict, detail),) = [(r.name, r.status, r.detail) for r in sweep.restarts()]
    assert (name, verdict) == (first, RestartVerdict.SKIPPED) and "max_running 2" in detail
    assert sweep.live() == 2 and ("restart", first) not in sweep.backend.calls
    sweep.free_a_slot()
    assert [(r.name, r.status) for r in sweep.restarts()] == [(first, RestartVerdict.RESTARTED)]
    assert sweep.live() == 2


def test_an_interrupted_restart_that_never_reached_the_backend_waits_for_a_slot(
    tmp_path: Path,
) -> None:
    """A runner stopped after writing a restart's intent, before sending it: the experiment is
    still failed, so sending the restart now takes a slot like any restart. With max_running 2
    and 2 live, it waits (its intent kept); once a slot frees, it is sent, exactly once."""
    sweep = _CappedSweep(tmp_path)
    first, backend = sweep.failed, sweep.backend
    store = LedgerStore(tmp_path, backend.layout)
    (entry,) = [e for e in store.read("cap").entries.values() if e.experiment == first]
    store.set_intents("cap", [dataclasses.replace(entry, restarting="0")])  # the crash

    assert [(r.name, r.status) for r in sweep.restarts()] == [(first, RestartVerdict.SKIPPED)]
    assert sweep.live() == 2 and ("restart", first) not in backend.calls
    (kept,) = [e for e in store.read("cap").entries.values() if e.experiment == first]
    assert kept.restarting == "0"

    sweep.free_a_slot()
    assert [(r.name, r.status) for r in sweep.restarts()] == [(first, RestartVerdict.RESTARTED)]
    assert sweep.live() == 2 and backend.calls.count(("restart", first)) == 1


def test_the_exit_codes_the_guarantees_list_are_the_enums() -> None:
    """docs/guarantees.md's table of submit's exit codes and result words is `Exit` (it said
    `failed` for 6, which no submit ever reported)."""
    text = (Path(__file__).parent.parent / "docs" / "guarantees.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([\d /]+) \| (`[a-z-]+`|—) \|", text, re.MULTILINE)
    listed = {int(code): word.strip("`") for codes, word in rows for code in codes.split(" / ")}
    assert listed == {
        int(code): "—" if code.result == RunResult.ERROR else str(code.result)
        for code in Exit
        if code not in (Exit.WOULD_CHANGE, Exit.TIMED_OUT)  # not a submit's
    }


def test_the_deadline_is_counted_on_the_runs_one_clock(tmp_path: Path) -> None:
    """`started` and the deadline are both on the run's clock: a command that just started
    (on a clock far behind time.monotonic) with a 5 s timeout has 5 s (mixing in
    time.monotonic, its deadline had passed before it began), and one that started 10 s ago
    has none."""
    now = min(1000.0, time.monotonic() / 2)
    clock = VirtualClock(jumping=False, start=now)
    backend = FakeBackend()
    options = ApplyOptions(tmp_path, timeout=5.0, started=now, clock=clock)
    applied = apply(_plans(tmp_path), backend, options, Shown())
    assert [o.status for o in applied.outcomes] == [OutcomeStatus.CREATED] * 2
    late = dataclasses.replace(options, started=now - 10.0)
    applied = apply(_plans(tmp_path, extra="revision: 1\n"), backend, late, Shown())
    assert applied.stop is not None and applied.exit_code == Exit.INCOMPLETE


def test_options_built_outside_the_command_send_no_notice_whatever_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The webhook is the submit command's to read (`SWEEP_SLACK_WEBHOOK`); a default that read
    the environment made every test that built options depend on it."""
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", "https://hooks.example/never")
    assert ApplyOptions(tmp_path).webhook == ""
