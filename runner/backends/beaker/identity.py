"""Which point an experiment is, told by what its job cannot change.

An experiment's id, name and spec are the runner's; its description belongs to the job, which
may rewrite it at will (OLMo-core's BeakerCallback writes `[3%, 30/1,000] <W&B URL>` over it
every few steps, gantry's `update_workload_description` replaces it too). So a point's key is,
in this order: the key the ledger recorded for the experiment's id (`recorded`); the
`SWEEP_POINT_KEY` env var of its tasks, when the listing carries their specs; a key already
read back from its spec in this process (a spec never changes); and last, its spec, fetched
(one call, only for an experiment nothing else proves: an unrecorded one when the listing left
the specs out, such as someone else's experiment under a point's name, whose spec carries
another key or none). The `[sweep-key …]` marker the runner writes into the description at
create proves nothing: anyone may write it there, a stranger claiming a point's key too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from beaker import Beaker
from beaker import beaker_pb2 as pb2
from beaker.exceptions import BeakerNotFoundError

from runner.backends import Recorded

KEY_ENV = "SWEEP_POINT_KEY"
KEY_IN_DESCRIPTION = re.compile(r"\[sweep-key ([0-9a-f]{64})\]")
Call = Callable[[str, Callable[[], str | None]], str | None]
Get = Callable[[str, Callable[[], "pb2.Workload | None"]], "pb2.Workload | None"]


def listed_key(workload: pb2.Workload) -> str | None:
    """The key in the listing's task specs, when it carries them with their env. Its absence
    proves nothing (a listing may leave the env out): the spec read back decides then."""
    for task in workload.experiment.tasks:
        for env in task.container_spec.environment_variables:
            if env.name == KEY_ENV and env.literal:
                return str(env.literal)
    return None


def job_text(description: str) -> str:
    """What the job wrote in the description: all of it once the job replaced the runner's
    text, what follows the runner's marker when it appended; empty when it wrote nothing."""
    return KEY_IN_DESCRIPTION.split(description)[-1].strip()


SHORTEST_NEEDLE = 3
SHARD_AT = 256
"""Default names from which one listing by the sweep's name becomes 16, one per first hex digit
of the key (`<sweep>-a…`), that run at once: a listing is paged, and the pages of a 1 000-point
sweep, one after another, took a fifth of its submit at 50 ms a round trip."""


def needles(sweep: str, names: Sequence[str], split: bool = False) -> list[str | None]:
    """What to list the names by, matched against names only (a description may say anything
    by now): the sweep's name, which default experiment names start with, and the common
    prefix of the others (an `experiment_name` template's); None: the whole workspace, for
    names with too short a prefix in common to list by. `split`, with many default names: 16
    needles that split them by the key's first digit (`SHARD_AT`), to be listed at once."""
    others = [n for n in names if sweep.casefold() not in n.casefold()]
    if not others:
        default = re.compile(re.escape(sweep) + r"-[0-9a-f]{12}")
        if split and len(names) >= SHARD_AT and all(default.fullmatch(n) for n in names):
            return [f"{sweep}-{digit}" for digit in "0123456789abcdef"]
        return [sweep]
    prefix = others[0]
    for name in others[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    if len(prefix) < SHORTEST_NEEDLE:
        return [None]
    return [sweep, prefix] if len(others) < len(names) else [prefix]


class Keys:
    """The key of each listed experiment; specs read back are kept by id for the process."""

    def __init__(self, client: Beaker, call: Call, get: Get) -> None:
        self.client = client
        self.call = call
        self.get = get
        self.read: dict[str, str | None] = {}
        """Keys read from specs, by experiment id (None: its spec has none)."""

    def known(self, workload: pb2.Workload, recorded: Recorded) -> tuple[bool, str | None]:
        """(known, key) without a call; not known: only its spec can tell."""
        exp = workload.experiment
        if exp.id in recorded.keys:
            return True, recorded.keys[exp.id]
        key = listed_key(workload)
        if key is not None:
            return True, key
        if exp.id in self.read:
            return True, self.read[exp.id]
        return False, None

    def key(self, workload: pb2.Workload, recorded: Recorded) -> str | None:
        return self.known(workload, recorded)[1]

    def prove(self, workloads: Iterable[pb2.Workload], recorded: Recorded) -> None:
        """Read back the spec of each experiment whose key nothing else shows (one call each)."""
        for workload in workloads:
            if not self.known(workload, recorded)[0]:
                exp = workload.experiment
                self.read[exp.id] = self.call(f"spec of {exp.name}", self._reader(workload))

    def _reader(self, workload: pb2.Workload) -> Callable[[], str | None]:
        return lambda: self._spec_key(workload)

    def renamed(
        self,
        listed: Mapping[str, Sequence[pb2.Workload]],
        wanted: Sequence[str],
        recorded: Recorded,
    ) -> Iterator[tuple[str, pb2.Workload]]:
        """The recorded experiments a listing by name missed, each under its recorded name: one
        was renamed (in Beaker's UI; its id stays) or deleted. One look-up by id each."""
        seen = {w.experiment.id for found in listed.values() for w in found}
        for name in wanted:
            experiment_id = recorded.ids.get(name)
            if experiment_id is not None and experiment_id not in seen:
                workload = self.get(f"experiment {experiment_id}", self._getter(experiment_id))
                if workload is not None:
                    yield name, workload

    def _getter(self, experiment_id: str) -> Callable[[], pb2.Workload | None]:
        def get() -> pb2.Workload | None:
            try:
                return self.client.workload.get(experiment_id)
            except BeakerNotFoundError:
                return None  # deleted

        return get

    def _spec_key(self, workload: pb2.Workload) -> str | None:
        spec = self.client.experiment.get_spec(workload)
        for task in spec.tasks:
            for env in task.env_vars or ():
                if env.name == KEY_ENV and env.value:
                    return env.value
        return None
