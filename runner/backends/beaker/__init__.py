"""The Beaker backend: the only package that imports beaker-py (and grpc and requests).

It creates experiments by name (posting the rendered spec text as it is, once its shape is
proven lossless through beaker-py's types: `conversion`), looks them up, lists them in bulk,
and translates every failure into the three kinds the submit protocol understands (`errors`).
Every call goes through the `gateway`, which holds the command's deadline (`Bounds`) and reports
to `health`: a success, or a wait it sits out; the client refuses any use around it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from beaker import beaker_pb2 as pb2
from beaker.config import Config
from beaker.exceptions import BeakerConfigurationError, BeakerError, BeakerExperimentConflict

from runner.backends import (
    NO_RECORD,
    Capability,
    Experiment,
    ExperimentState,
    Group,
    Listing,
    LogQuery,
    NotStarted,
    Recorded,
    Rejected,
    Results,
    Transient,
    Usage,
    WriteAhead,
    recorded,
)
from runner.backends import NOTHING_RECORDED as NOTHING
from runner.backends.beaker import duplicates, endings, identity, lifecycle, usage
from runner.backends.beaker.client import TOKEN_HELP, Client, credentials
from runner.backends.beaker.conversion import ShapeProofs, SpecMismatch, to_beaker_spec
from runner.backends.beaker.gateway import Gateway
from runner.backends.beaker.groups import POLICY, SweepGroups, metrics_by_experiment
from runner.backends.beaker.placing import BeakerPlacing
from runner.backends.beaker.states import STATES
from runner.backends.health import Health
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_MAX_UNREACHABLE
from runner.core.errors import SubmitError
from runner.core.model import Rendered, Sweep
from runner.core.retry import RetryPolicy
from runner.ledger import COMMITTED, Layout

__all__ = ["TOKEN_HELP", "BeakerBackend", "credentials", "to_beaker_spec"]

T = TypeVar("T")


class BeakerBackend:
    layout: Layout = COMMITTED
    capabilities: frozenset[Capability] = frozenset({Capability.SHARED})

    def __init__(
        self,
        config: Config | None = None,
        http_timeout: float | None = None,
        policy: RetryPolicy | None = None,
        bounds: Bounds | None = None,
    ) -> None:
        """`policy`: how restarts and cancels are retried (by default, `RetryPolicy()` sleeping
        on the bounds' clock); `bounds`: the command's deadline and unreachable limit, which
        every call is held to (by default no deadline, and the default limit)."""
        bounds = bounds or Bounds(Clock(), None, DEFAULT_MAX_UNREACHABLE)
        self.policy = policy or RetryPolicy(sleep=bounds.clock.sleep)
        config = config or credentials()
        if config is None:
            raise SubmitError(TOKEN_HELP)
        try:
            self.client = Client(config, check_for_upgrades=False)
        except (BeakerConfigurationError, BeakerError) as exc:
            raise SubmitError(f"cannot configure the Beaker client: {exc}") from None
        if http_timeout is not None:
            self.client.TIMEOUT = http_timeout  # type: ignore[misc]  # beaker-py reads self.TIMEOUT
        self.health = Health("Beaker", config.agent_address)
        self.gateway = Gateway(self.client, self.health, bounds)
        self._workspaces: dict[str, pb2.Workspace] = {}
        self.proofs = ShapeProofs()
        groups = dataclasses.replace(POLICY, sleep=bounds.clock.sleep)
        self.groups = SweepGroups(self.gateway, self._workspace, groups)
        self.keys = identity.Keys(self.client, self.gateway.read, self.gateway.read)
        self.placing = BeakerPlacing(self.client, self.gateway.read, self._workspace)
        self.endings = endings.Endings(self.client, self.gateway.read)
        self._listed: dict[str, pb2.Workload] = {}
        """Workloads `results` listed, by experiment id: a live read of their logs right after
        a reader's look (`runner.observe.tails`) does not list each one again."""

    def close(self) -> None:
        self.gateway.close()
        self.client.close()

    # -- helpers -------------------------------------------------------------------------------

    def _workspace(self, name: str) -> pb2.Workspace:
        if name not in self._workspaces:
            self._workspaces[name] = self.gateway.read(
                f"workspace {name}", lambda: self.client.workspace.get(name)
            )
        return self._workspaces[name]

    def _experiment(self, workload: pb2.Workload, recorded: Recorded = NOTHING) -> Experiment:
        """Its key from what the job cannot change (`identity`); `_all` proved the others."""
        exp = workload.experiment
        state = STATES.get(pb2.WorkloadStatus.Name(workload.status), ExperimentState.UNKNOWN)
        return Experiment(
            exp.name,
            exp.id,
            self.client.workload.url(workload),
            self.keys.key(workload, recorded),
            state,
            description=identity.job_text(exp.description),
            ended=self.endings.known(workload, state),
        )

    # -- Backend -------------------------------------------------------------------------------

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        """beaker-py's `experiment.create` without its second round trip.

        beaker-py POSTs the spec, reads only `id` from the reply and then fetches the whole
        workload over gRPC, which doubles the latency of every create. Everything an
        `Experiment` needs is known without it: the name and key we sent, the id from
        the reply, the URL from the id, and the state of a just-created experiment. The POST
        itself is beaker-py's own `http_request`, exactly as `create` calls it, so the token,
        headers, timeout, retries and error mapping are beaker-py's.
        """
        try:
            self.proofs.check(point.spec)
        except (SpecMismatch, TypeError, ValueError) as exc:
            raise Rejected(f"invalid spec for {point.name}: {exc}") from None
        workspace = self._workspace(sweep.placement.workspace)
        what = f"create {point.name}"

        def post() -> str:
            self.client.hold_session()  # on the gateway's thread that carries it
            reply = self.client.experiment.http_request(
                f"workspaces/{workspace.id}/experiments",
                method="POST",
                query={"name": point.name},
                data=point.spec_json,
                exceptions_for_status={409: BeakerExperimentConflict(point.name)},
            )
            try:
                experiment_id = reply.json()["id"]
            except (ValueError, KeyError, TypeError):
                experiment_id = None
            if not isinstance(experiment_id, str) or not experiment_id:
                # A 2xx means it was probably created: the next attempt looks the name up.
                raise Transient(f"{what}: reply {reply.status_code} carries no experiment id")
            return experiment_id

        experiment_id = self.gateway.once(what, post)
        url = self.client.experiment.url(pb2.Experiment(id=experiment_id))
        return Experiment(point.name, experiment_id, url, point.key, ExperimentState.QUEUED)

    def experiments(
        self,
        sweep: Sweep,
        names: Iterable[str],
        recorded: Recorded = NOTHING,
        listing: Listing = Listing.SOON,
    ) -> Mapping[str, Sequence[Experiment]]:
        """In the sweep's workspace, whoever created them: `author/name` would miss one that
        another account created. One name is listed by itself (a narrower listing)."""
        split = listing is Listing.SOON
        return {
            name: tuple(self._experiment(w, recorded) for w in found)
            for name, found in self._all(sweep, list(names), recorded, split=split).items()
        }

    def _all(
        self,
        sweep: Sweep,
        names: Iterable[str],
        recorded: Recorded = NOTHING,
        *,
        prove: bool = True,
        split: bool = False,
    ) -> dict[str, list[pb2.Workload]]:
        """Every workload of each named experiment in the sweep's workspace, oldest first, from
        one paged listing per needle (`identity.needles`: by name, never by the description,
        which the job may have rewritten); the key of each proved (`identity.Keys.prove`).
        `split`: a sweep's many default names by 16 needles at once (`experiments`: a submit's
        looks); `results` lists page after page, as `status` counts them."""
        wanted = list(dict.fromkeys(names))
        workspace = self._workspace(sweep.placement.workspace)
        org = sweep.placement.workspace.split("/", 1)[0]
        needles = wanted[:1] if len(wanted) == 1 else identity.needles(sweep.name, wanted, split)

        what = f"list experiments of {sweep.name}"

        def listed(needle: str | None) -> list[pb2.Workload]:
            found = self.client.workload.list(
                org=self.client.resolved_org(org), workspace=workspace, name_or_description=needle
            )
            return list(found)

        def one(needle: str | None) -> list[pb2.Workload]:  # each needle a call of its own
            return self.gateway.read(what, lambda: listed(needle))

        every = duplicates.by_name(one, needles, set(wanted))
        for name, workload in self.keys.renamed(every, wanted, recorded):
            every.setdefault(name, []).append(workload)
            every[name].sort(key=duplicates.age)
        if prove:
            self.keys.prove((w for found in every.values() for w in found), recorded)
        return every

    # -- acting on experiments (see runner.backends.beaker.lifecycle) --------------------------

    def restart(
        self, sweep: Sweep, point: Rendered, experiment: Experiment, ahead: WriteAhead = NO_RECORD
    ) -> Experiment | None:
        workload = lifecycle.restart(
            self.gateway, experiment.id, self.policy, ahead.since, ahead.intent
        )
        if workload is None:
            return None
        return dataclasses.replace(self._experiment(workload), key=experiment.key)  # same id

    def cancel(self, sweep: Sweep, experiments: Sequence[Experiment]) -> list[str]:
        """Only the experiments given, by id: an id never changes, and another experiment may
        have taken one's name since (the caller proved each one the point's)."""
        names = {e.id: e.name for e in experiments}
        ours = recorded((e.name, e.id, e.key or "") for e in experiments)

        def refresh() -> Mapping[str, pb2.Workload]:
            every = self._all(sweep, names.values(), ours, prove=False)  # ids, not keys
            return {
                w.experiment.id: w for f in every.values() for w in f if w.experiment.id in names
            }

        mine = list(refresh().values())
        ids = lifecycle.cancel(self.gateway, mine, refresh, self.policy)
        return [names[i] for i in ids]

    def logs(self, sweep: Sweep, name: str, query: LogQuery) -> Iterator[str]:
        workload = self._listed.get(query.recorded) if query.recorded else None
        if workload is None:
            workload = self._workload(sweep, name, query.recorded)
        names = [str(task.get("name") or "main") for task in sweep.tasks]
        job = lifecycle.replica_job(self.gateway, workload, query, names)
        return lifecycle.log_lines(self.gateway, job, query)

    def _workload(self, sweep: Sweep, name: str, experiment_id: str) -> pb2.Workload:
        """The named experiment's workload (the one of `experiment_id`, if given)."""
        ours = recorded([(name, experiment_id, "")] if experiment_id else [])
        found = self._all(sweep, [name], ours, prove=False).get(name)  # its key is not needed
        if not found:
            workspace = sweep.placement.workspace
            raise NotStarted(f"{name} is not on Beaker (in {workspace}): not submitted yet")
        return next((w for w in found if w.experiment.id == experiment_id), found[0])

    # -- groups and results (runner.backends.beaker.groups) ----------------------------------

    def ensure_group(self, sweep: Sweep, experiment_ids: Sequence[str]) -> Group:
        return self.groups.ensure(sweep, experiment_ids)

    def results(self, sweep: Sweep, names: Iterable[str], recorded: Recorded = NOTHING) -> Results:
        """One paged workload listing (states), one paged group listing and one paged task
        metrics listing (metrics), plus one job listing per task of each experiment that ended
        without succeeding (why, its exit code and duration; `endings`) or went back since the
        last look: a succeeded experiment exited 0 by Beaker's definition, and the workload
        listing carries no job, nor can beaker-py list jobs by workspace."""
        wanted = list(names)
        every = self._all(sweep, wanted, recorded) if wanted else {}
        workloads = {
            name: next((w for w in found if w.experiment.id in recorded.keys), found[0])
            for name, found in every.items()
        }
        self._listed.update({w.experiment.id: w for w in workloads.values()})
        copies = {
            name: tuple(self._experiment(w, recorded) for w in found)
            for name, found in every.items()
            if len(found) > 1
        }
        group, metrics, note = None, {}, ""
        if sweep.placement.group:
            try:
                found = self.groups.find(sweep)
                if found is not None:
                    rows = self.groups.task_metrics(found)
                    task = str(sweep.tasks[0].get("name") or "main")
                    metrics = metrics_by_experiment(rows, task, self._rank_of)
                    url = self.groups.url(found)
                    group = Group(found.name, url, members=len({r.experiment_id for r in rows}))
            except (Rejected, Transient) as exc:
                note = str(exc)
        now = time.time()
        experiments = {
            name: self._result(workload, metrics.get(workload.experiment.id, {}), now, recorded)
            for name, workload in workloads.items()
        }
        return Results(group, experiments, note, copies)

    def usage(self, sweep: Sweep, experiments: Sequence[Experiment]) -> Mapping[str, Usage]:
        """One job listing per task of each experiment, its tasks as `results` listed them (a
        listing of the sweep's workloads only for the others)."""
        known = [self._listed[e.id] for e in experiments if e.id in self._listed]
        rest = [e for e in experiments if e.id not in self._listed]
        ids = recorded((e.name, e.id, e.key or "") for e in rest)
        listed = self._all(sweep, [e.name for e in rest], ids, prove=False) if rest else {}
        known += [w for found in listed.values() for w in found if w.experiment.id in ids.keys]
        return usage.usages(self.client, known, self.gateway.read)

    def _rank_of(self, task_id: str) -> int:
        """The replica rank of a task's latest job (0 for a task without replicas)."""
        return self.gateway.read("job of a task", lambda: lifecycle.rank(self.client, task_id))

    def _result(
        self, workload: pb2.Workload, metrics: Mapping[str, object], now: float, recorded: Recorded
    ) -> Experiment:
        """With why it ended (`endings`): its jobs are listed only where the listing cannot
        tell (it ended without succeeding, or it went back since the last look)."""
        experiment = dataclasses.replace(self._experiment(workload, recorded), metrics=metrics)
        end, job = self.endings.look(workload, experiment.state)
        experiment = dataclasses.replace(experiment, ended=end)
        if experiment.state == ExperimentState.SUCCEEDED:
            return dataclasses.replace(experiment, exit_code=0)
        if experiment.state == ExperimentState.RUNNING:
            age = now - workload.experiment.created.ToSeconds()
            return dataclasses.replace(experiment, seconds=max(0.0, float(age)))
        exit_code, seconds = endings.exited(job) or (None, None)
        if experiment.state != ExperimentState.FAILED or exit_code is None:
            return experiment
        return dataclasses.replace(experiment, exit_code=exit_code, seconds=seconds)
