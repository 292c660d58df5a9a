"""The validated manifest as immutable values. Built by `runner.manifest`; read by everything else."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from runner.core.conditions import Cell as Cell
from runner.core.conditions import Condition as Condition
from runner.core.conditions import in_order as in_order
from runner.core.errors import Problem
from runner.core.ladder import Ladder
from runner.core.marks import KeyPath, Mark, Marks
from runner.core.search import Search
from runner.core.values import StrEnum, Value

FORMAT_VERSION = 1
DEFAULT_MAX_POINTS = 1000
BUILTINS = ("sweep", "experiment", "revision")
"""Names every template may use besides the parameters."""


class Priority(StrEnum):
    """A Beaker job priority (beaker-py's BeakerJobPriority), lowest first."""

    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    URGENT = "urgent"
    IMMEDIATE = "immediate"

    def above(self, other: Priority) -> bool:
        return list(Priority).index(self) > list(Priority).index(other)


@dataclass(frozen=True)
class ClusterSelector:
    """`beaker.clusters` with globs, `gpu_type` or `cluster_tags`: the clusters a sweep asks
    for by what they are, which `lock` resolves (gantry's rules) into the sweep's lock."""

    patterns: tuple[str, ...] = ()
    """`beaker.clusters` as written: names or globs over names and aliases (empty: all)."""
    gpu_types: tuple[str, ...] = ()
    """Any of these, as whole words of the GPU type's name (`h100` in NVIDIA H100; `a10` is not
    A100)."""
    tags: tuple[str, ...] = ()
    """All of these cluster tags."""

    def as_json(self) -> dict[str, list[str]]:
        """As the lock records it (what it resolved): compared on every load."""
        fields = (self.patterns, self.tags, self.gpu_types)
        return dict(zip(("clusters", "cluster_tags", "gpu_type"), map(list, fields), strict=True))


@dataclass(frozen=True, order=True)
class LockedCluster:
    """One cluster a selector resolved to, as the lock holds it."""

    name: str
    """`org/name`: what the spec's constraints.cluster lists."""
    gpu_type: str = ""
    """Its nodes' GPU type as Beaker names it (`NVIDIA H100`); empty without GPUs."""


@dataclass(frozen=True)
class Placement:
    workspace: str
    clusters: tuple[str, ...]
    """What the spec's constraints.cluster lists: as written, or the lock's (`selector`)."""
    budget: str | None = None
    priority: str | None = None
    preemptible: bool | None = None
    """Deprecated in beaker-py in favour of min_runtime and auto_resume; still passed on."""
    retries: int | None = None
    timeout: str | None = None
    min_runtime: str | None = None
    auto_resume: bool | None = None
    hostnames: tuple[str, ...] = ()
    """Beaker's constraints.hostname: run only on these hosts (empty: any host of the clusters)."""
    group: bool = True
    """Keep every experiment of the sweep in one Beaker group (`beaker.group: false` opts out)."""
    expected_runtime: str | None = None
    """How long each task is expected to run (the plan's expected GPU-hours); never in the spec."""
    selector: ClusterSelector | None = None
    """The clusters asked for by what they are; `clusters` are then the lock's (`locked`)."""
    locked: tuple[LockedCluster, ...] = ()
    """With a selector: the clusters it resolved to, with their GPU types (the lock's)."""


@dataclass(frozen=True)
class Limits:
    """How a running sweep is throttled and repaired (never part of a key or a spec)."""

    max_running: int | None = None
    """At most this many of the sweep's experiments queued or running; `submit` waits below it."""
    max_restarts: int | None = None
    """How often `submit --restart-failed` may restart one point (None: no bound)."""
    max_failures: int | None = None
    """Create no new points once this many have failed for good (`runner.apply.guardrails`)."""
    stop_when: StopWhen | None = None
    """Create no new points once a finished point reaches this (`runner.apply.guardrails`)."""
    max_preemptions: int | None = None
    """How many preemptions (a node failure counts as one) of one point a plain `submit`
    resumes (`runner.operate.preempted`); after one more the point stays as it is. None: no
    bound."""


@dataclass(frozen=True)
class StopWhen:
    """`stop_when`: a metric and the value a finished point must get below (or above)."""

    metric: str
    value: float
    below: bool
    """True: stop when the metric is below the value; False: above it."""

    def reached(self, value: float) -> bool:
        return value < self.value if self.below else value > self.value

    def __str__(self) -> str:
        return f"{self.metric} {'below' if self.below else 'above'} {self.value:g}"


@dataclass(frozen=True)
class Axis:
    """One axis of the product: a single parameter, or several that vary together (zip)."""

    names: tuple[str, ...]
    values: tuple[tuple[Cell, ...], ...]
    """One tuple per position, aligned with names (None: absent, in a sample's conditional row)."""
    mark: Mark
    optional: bool = False
    """A conditional grid axis: its parameter is also absent, where its condition does not hold."""


@dataclass(frozen=True)
class Assignment:
    """A partial (exclude) or full (include) assignment of parameters."""

    values: tuple[tuple[str, Value], ...]
    mark: Mark
    paths: tuple[KeyPath, ...] = field(default=(), compare=False)
    """Document path of each value, aligned with values (for error messages)."""

    def as_dict(self) -> dict[str, Value]:
        return dict(self.values)


@dataclass(frozen=True)
class Derived:
    name: str
    template: str
    mark: Mark


@dataclass(frozen=True)
class Space:
    axes: tuple[Axis, ...] = ()
    include: tuple[Assignment, ...] = ()
    exclude: tuple[Assignment, ...] = ()
    derived: tuple[Derived, ...] = ()
    max_points: int = DEFAULT_MAX_POINTS
    conditions: tuple[Condition, ...] = ()
    """The conditional parameters (grid and sampled), in dependency order."""
    ladder: Ladder | None = None
    """A successive halving's rungs (`params.fidelity`): its two parameters are the last axes,
    at their rung-0 values; the later rungs' points are `promoted`."""
    promoted: tuple[Point, ...] = ()
    """The points of rungs 1 and up, from the lock, in its order (after every other point)."""
    enqueued: tuple[tuple[tuple[str, Value], ...], ...] = ()
    """The sample's known points (`params.sample.enqueue`), each its sampled values: the plan
    marks the points that are one of them."""

    @property
    def conditional(self) -> frozenset[str]:
        return frozenset(c.name for c in self.conditions)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(name for axis in self.axes for name in axis.names)


@dataclass(frozen=True)
class Sweep:
    """One manifest: identity, placement, the raw task template and the parameter space."""

    path: PurePosixPath
    """Path shown to users and written into descriptions, relative to the repository root."""
    name: str
    description: str
    revision: int
    draft: bool
    placement: Placement
    name_template: str | None
    """The `experiment_name` template, if any (`runner.core.keys.experiment_name` appends the key)."""
    tasks: tuple[Mapping[str, Any], ...]
    """Task mappings exactly as the schema validated them; `runner.render` compiles them."""
    space: Space
    marks: Marks = field(compare=False, repr=False)
    """Source positions, so problems found while rendering can name a line."""
    limits: Limits = field(default_factory=Limits)
    warnings: tuple[Problem, ...] = field(default=(), compare=False)
    """What is accepted but should change (a deprecated field); printed, never fatal."""
    live: bool = False
    """`live: true`: `status` reads each running point's reporting lines from its log's tail
    (`runner.observe.live`), as `--live` does for every sweep."""
    search: Search = field(default_factory=Search)
    """How its points are found and what it weighs (`runner.core.search`): every reader of the
    sweep ranks, rounds and rungs by this one value."""


@dataclass(frozen=True)
class Point:
    """The axis parameters of one grid point (or include), in axis order."""

    params: tuple[tuple[str, Value], ...]
    origin: str = "grid"
    """`grid`, or `include[i]` for an extra point."""

    def as_dict(self) -> dict[str, Value]:
        return dict(self.params)


@dataclass(frozen=True)
class Rendered:
    """One point, ready to submit: identity, parameters and its spec document."""

    key: str
    name: str
    params: tuple[tuple[str, Value], ...]
    """Axis parameters (the key's input), in axis order."""
    derived: tuple[tuple[str, Value], ...]
    spec_json: str
    """The spec document as canonical JSON (sorted keys, compact)."""
    spec_hash: str
    """`runner.core.keys.spec_hash` of the spec: its canonical form, version SPEC_HASH_VERSION."""

    @functools.cached_property
    def spec(self) -> Mapping[str, Any]:
        """The spec document (parsed on first use: a plan only needs its hash)."""
        result: Mapping[str, Any] = json.loads(self.spec_json)
        return result


def param_env_name(name: str) -> str:
    """The env var a task reads a parameter from: `optim.lr` is SWEEP_PARAM_OPTIM_LR."""
    return "SWEEP_PARAM_" + name.replace(".", "_").upper()
