"""One look at a sweep per phase (runner/backends/observed.py), on the fake at the port."""

from __future__ import annotations

from pathlib import Path

from runner.apply import ApplyOptions, apply
from runner.backends import Experiment, ExperimentState, Recorded
from runner.backends.observed import Observer, chosen
from runner.plan import SweepPlan, catalog
from tests.fake_backend import FakeBackend
from tests.helpers import Quiet, minimal


def _plan(root: Path, extra: str = "") -> SweepPlan:
    minimal(root, extra=extra)
    (plan,) = catalog.load(root, ()).plans()
    return plan


def _experiment(name: str, id: str, state: ExperimentState, key: str = "k") -> Experiment:
    return Experiment(name, id, f"fake://{id}", key, state)


def test_a_phase_looks_at_a_sweep_once_and_the_next_phase_again(tmp_path: Path) -> None:
    plan, backend = _plan(tmp_path), FakeBackend()
    observer = Observer(backend, lambda plan: False)
    assert observer.observe(plan) is observer.observe(plan)
    after = observer.next_phase(lambda plan: True)
    after.observe(plan)
    after.observe(plan)
    assert [call for call, _ in backend.calls] == ["list", "results", "list"]  # results lists


def test_a_restart_is_seen_without_looking_again(tmp_path: Path) -> None:
    plan, backend = _plan(tmp_path), FakeBackend()
    name = plan.rows[0].name
    backend.made[name] = [_experiment(name, "old", ExperimentState.FAILED)]
    observer = Observer(backend, lambda plan: True)
    assert observer.observe(plan).listed[name][0].state == ExperimentState.FAILED
    restarted = _experiment(name, "old", ExperimentState.QUEUED)
    observer.restarted(plan.sweep, restarted)
    seen = observer.observe(plan)
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
