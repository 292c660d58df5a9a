"""FakeBeaker's controls for the ways Beaker ends a job that did not exit by itself: a cancel with
any of Beaker's cancelation codes, and the faults behind them (a preemption, resumed or not as
the spec's `autoResume` says; a timeout; a node failure; a job that cannot be scheduled; a
person's cancel). Each is one atomic change of the experiment, as Beaker's scheduler makes it."""

from __future__ import annotations

from collections.abc import Callable

from beaker import beaker_pb2 as pb2

from . import lifecycle, messages
from .controls import LifecycleControls
from .records import Experiment

CODES = tuple(
    name.removeprefix("CANCELATION_CODE_").lower()
    for name, value in pb2.CancelationCode.items()
    if value != pb2.CancelationCode.CANCELATION_CODE_UNSPECIFIED
)
"""Every code Beaker gives a canceled job, as beaker-py's `BeakerCancelationCode` names it."""

TEXTS = {
    "system_preemption": "preempted for a higher-priority job",
    "user_preemption": "preempted for a higher-priority job of the same author",
    "idle": "canceled for holding its GPUs idle",
    "manual": "canceled by a person",
    "timeout": "exceeded its timeout",
    "node_unavailable": "its node became unavailable",
    "impossible_to_schedule": "no cluster can run it as asked",
    "sibling_task_failed": "a task beside it failed",
    "sibling_task_preemption": "a replica beside it was preempted",
    "healthcheck_failed": "its node failed a health check",
    "sibling_task_retry": "a task beside it is retried",
    "node_unhealthy": "its node was found unhealthy",
}
"""The fake's words for each code (Beaker's `canceled_for`), unless a control is told others."""
assert set(TEXTS) == set(CODES), set(CODES) ^ set(TEXTS)

PREEMPTIONS = ("system_preemption", "user_preemption")

Change = Callable[[Experiment], Experiment]


class CancelationControls(LifecycleControls):
    def _current(self, record: Experiment, task: str | None, replica: int | None) -> set[str]:
        """Ids of the current jobs of every task, or of spec task ``task`` (its ``replica``)."""
        tasks = record.tasks if task is None else self._tasks(record, task)
        return {
            j.id
            for t in tasks
            for j in record.current_jobs(t.id)
            if replica is None or j.replica == replica
        }

    def _change(self, experiment: str, change: Change) -> Experiment:
        record = self.experiment(experiment)
        return self._state.update_experiment(record.id, change)

    def cancel_jobs(
        self,
        experiment: str,
        code: str,
        text: str | None = None,
        *,
        task: str | None = None,
        replica: int | None = None,
        scheduling: str = "",
    ) -> Experiment:
        """Cancel the current queued or running jobs (of ``task``'s ``replica``, if given) with
        Beaker's ``code`` (`system_preemption`, `timeout`, ... : `CODES`) and ``text`` (its
        `canceled_for`; `TEXTS[code]` by default), nothing else: no sibling is canceled and
        nothing resumed (`preempt` does what Beaker does around a preemption)."""
        if code not in CODES:
            raise ValueError(f"code must be one of {CODES}, got {code!r}")
        record = self.experiment(experiment)
        ids = self._current(record, task, replica)
        return self._change(
            experiment, lifecycle.cancel_jobs(code, text or TEXTS[code], ids, scheduling=scheduling)
        )

    def preempt(
        self,
        experiment: str,
        code: str = "system_preemption",
        *,
        task: str | None = None,
        replica: int | None = None,
        text: str | None = None,
        resume: bool | None = None,
    ) -> Experiment:
        """Preempt the running jobs (of ``task``'s ``replica``, if given: the other replicas of
        that task are canceled `sibling_task_preemption`, as a replica group cannot run short).
        Then, as Beaker's auto-resume does, each preempted task whose spec has `autoResume`
        (Beaker's default when unset) gets a new queued attempt: the experiment is queued
        again. ``resume`` overrides the spec either way."""
        if code not in PREEMPTIONS:
            raise ValueError(f"a preemption's code is one of {PREEMPTIONS}, got {code!r}")
        record = self.experiment(experiment)
        live = {j.id for j in record.current_jobs() if not j.finalized}
        hit = self._current(record, task, replica) & live
        group = {t.id for t in record.tasks for j in record.current_jobs(t.id) if j.id in hit}
        spec_tasks = {t.spec_name for t in record.tasks if t.id in group}
        tasks = [t for t in record.tasks if t.spec_name in spec_tasks]
        siblings = {j.id for t in tasks for j in record.current_jobs(t.id)} & live - hit
        resumed = {t.id for t in tasks if (messages.auto_resume(t) if resume is None else resume)}
        preempted = lifecycle.cancel_jobs(code, text or TEXTS[code], hit)
        beside = lifecycle.cancel_jobs(
            "sibling_task_preemption", TEXTS["sibling_task_preemption"], siblings
        )
        again = lifecycle.resume(lambda: self._state.new_id("JOB"), resumed)
        return self._change(experiment, lambda r: again(beside(preempted(r))))

    def time_out(self, experiment: str, *, task: str | None = None) -> Experiment:
        """The running jobs (of ``task``) pass their timeout: canceled `timeout`, saying it."""
        record = self.experiment(experiment)
        first = record.tasks[0] if task is None else self._tasks(record, task)[0]
        limit = messages.task(record, first).system_details.timeout.ToSeconds()
        text = TEXTS["timeout"] + (f" of {limit}s" if limit else "")
        return self.cancel_jobs(experiment, "timeout", text, task=task)

    def fail_node(
        self,
        experiment: str,
        code: str = "node_unavailable",
        *,
        task: str | None = None,
        replica: int | None = None,
    ) -> Experiment:
        """The node of the jobs (of ``task``'s ``replica``) fails: canceled with ``code``
        (`node_unavailable`, `node_unhealthy` or `healthcheck_failed`)."""
        if code not in ("node_unavailable", "node_unhealthy", "healthcheck_failed"):
            raise ValueError(f"{code!r} is not a node's failure")
        return self.cancel_jobs(experiment, code, task=task, replica=replica)

    def cannot_schedule(
        self, experiment: str, message: str, *, task: str | None = None, give_up: bool = True
    ) -> Experiment:
        """The queued jobs (of ``task``) cannot be placed, Beaker says ``message`` (its
        `failed_scheduling_message`): ``give_up``, canceled `impossible_to_schedule`; else
        they stay queued, saying so."""
        record = self.experiment(experiment)
        ids = self._current(record, task, None)
        if not give_up:
            return self._change(experiment, lifecycle.cannot_place(message, ids))
        change = lifecycle.cancel_jobs("impossible_to_schedule", message, ids, scheduling=message)
        return self._change(experiment, change)

    def cancel_by_hand(self, experiment: str, user: str = "someone") -> Experiment:
        """``user`` cancels the experiment in Beaker's UI (what CancelWorkloads does)."""
        return self._change(experiment, lifecycle.cancel(user))
