"""One look at a sweep per phase (runner/observe/looks.py), and one observation of it that every
reader shares, on the fake at the port."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from runner.analysis.findings import find
from runner.apply import ApplyOptions, apply
from runner.backends import Experiment, ExperimentState, Recorded
from runner.commands.propose import same_code
from runner.core.aims import Goal
from runner.locking.proposing import proposals
from runner.manifest import Locks
from runner.observe import sweeps
from runner.observe.looks import Observer, chosen
from runner.plan import SweepPlan, catalog
from runner.report import status
from tests.fake_backend import FakeBackend
from tests.helpers import TPE_SEARCH, Quiet, head, minimal, write_manifest


def _plan(root: Path, extra: str = "") -> SweepPlan:
    minimal(root, extra=extra)
    (plan,) = catalog.load(root, ()).plans()
    return plan


def _experiment(name: str, id: str, state: ExperimentState, key: str = "k") -> Experiment:
    return Experiment(name, id, f"fake://{id}", key, state)


def test_a_phase_looks_at_a_sweep_once_and_the_next_phase_again(tmp_path: Path) -> None:
    plan, backend = _plan(tmp_path), FakeBackend()
    observer = Observer(backend, lambda plan: False)
    assert observer.look(plan) is observer.look(plan)
    after = observer.next_phase(lambda plan: True)
    after.look(plan)
    after.look(plan)
    assert [call for call, _ in backend.calls] == ["list", "results", "list"]  # results lists


def test_a_restart_is_seen_without_looking_again(tmp_path: Path) -> None:
    plan, backend = _plan(tmp_path), FakeBackend()
    name = plan.rows[0].name
    backend.made[name] = [_experiment(name, "old", ExperimentState.FAILED)]
    observer = Observer(backend, lambda plan: True)
    assert observer.look(plan).listed[name][0].state == ExperimentState.FAILED
    restarted = _experiment(name, "old", ExperimentState.QUEUED)
    observer.restarted(plan.sweep, restarted)
    seen = observer.look(plan)
    assert seen.listed[name][0].state == ExperimentState.QUEUED
    assert seen.results is not None and seen.results.experiments[name].state.live
    assert [call for call, _ in backend.calls] == ["results", "list"]  # one look (the fake's)


def test_the_recorded_copy_is_adopted_and_a_resuming_backend_adopts_only_finished_runs() -> None:
    older = _experiment("p", "a", ExperimentState.RUNNING)
    mine = _experiment("p", "b", ExperimentState.SUCCEEDED)
    listed = {"p": (older, mine)}
    assert chosen(listed, Recorded(), resumes=False) == {"p": older}  # the oldest
    assert chosen(listed, Recorded({"p": "b"}, {"b": "k"}), resumes=False) == {"p": mine}
    assert chosen(listed, Recorded(), resumes=True) == {}  # a live run is resumed, not adopted


def test_a_submit_of_a_guarded_capped_sweep_looks_once_before_and_once_after(
    tmp_path: Path,
) -> None:
    """The cap, the stops and the adoption read one `results` look; the duplicate check the
    look after the creates: two calls that list, where each used to list on its own."""
    plan = _plan(tmp_path, extra="max_running: 1\nmax_failures: 3\n")
    backend = FakeBackend()
    applied = apply([plan], backend, ApplyOptions(tmp_path, webhook=""), Quiet())
    assert len(applied.outcomes) == 1
    listing = [call for call, _ in backend.calls if call in ("list", "results")]
    assert listing == ["results", "list", "list"]  # the fake's `results` lists inside it


SEARCH = head("search") + '    command: [python, train.py, "--x={x}"]\n' + TPE_SEARCH


def test_status_report_and_propose_read_one_observation_of_each_sweep(tmp_path: Path) -> None:
    """Issue 37: the three readers of one process share the phase's observer, so each sweep is
    listed once (the fake's `results` lists inside it), whoever reads it first."""
    minimal(tmp_path)
    write_manifest(tmp_path, SEARCH, "search.yaml")
    backend = FakeBackend()
    cat = catalog.load(tmp_path, (), Locks.MAY_BE_STALE)
    first = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    assert [p.done.step.number for p in first if p.round] == [0]
    cat = catalog.load(tmp_path, ())
    apply(cat.plans(), backend, ApplyOptions(tmp_path), Quiet())
    for name, made in backend.made.items():  # every point ran: round 0 is over
        backend.made[name][-1] = dataclasses.replace(
            made[-1], state=ExperimentState.SUCCEEDED, metrics={"loss": len(name) / 100}
        )
    backend.calls.clear()

    looks = sweeps.observer(cat, backend)
    shown = status.render([looks.observation(p) for p in cat.plans()], "json")  # status
    assert {s["name"] for s in json.loads(shown)["sweeps"]} == {"demo", "search"}
    pages = [find(looks.observation(p), "loss", Goal.MINIMIZE) for p in cat.plans()]  # report
    assert [len(f.ranked) for f in pages] == [2, 4]
    (proposed,) = proposals(cat, looks, same_code(tmp_path))  # propose
    assert proposed.round is not None
    assert proposed.round.step.number == 1 and len(proposed.round.step.previous) == 4
    assert sorted(backend.calls) == [
        ("list", "demo"),
        ("list", "search"),
        ("results", "demo"),
        ("results", "search"),
    ]
