"""The validated manifest as immutable values. Built by `runner.manifest`; read by everything else."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Protocol, TypeVar

from runner.core.errors import Problem
from runner.core.marks import KeyPath, Mark, Marks
from runner.core.values import Value, identity

FORMAT_VERSION = 1
DEFAULT_MAX_POINTS = 1000
BUILTINS = ("sweep", "experiment", "revision")
"""Names every template may use besides the parameters."""


@dataclass(frozen=True)
class Placement:
    workspace: str
    clusters: tuple[str, ...]
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


Cell = Value | None
"""A parameter's value in one row of an axis: None where a conditional parameter is absent."""


@dataclass(frozen=True)
class Condition:
    """`when:` of a conditional parameter: it exists in a point only where this holds, that is
    where every parameter named has one of the values listed (absent never matches)."""

    name: str
    when: tuple[tuple[str, tuple[Value, ...]], ...]
    path: KeyPath
    """Where `when:` is written, for messages."""
    _idents: tuple[tuple[str, frozenset[str]], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        idents = tuple((n, frozenset(identity(v) for v in vs)) for n, vs in self.when)
        object.__setattr__(self, "_idents", idents)

    @property
    def on(self) -> tuple[str, ...]:
        """The parameters the condition reads."""
        return tuple(name for name, _ in self.when)

    def holds(self, params: Mapping[str, Cell]) -> bool:
        for name, allowed in self._idents:
            value = params.get(name)
            if value is None or identity(value) not in allowed:
                return False
        return True

    def __str__(self) -> str:
        parts = [f"{n}: {'|'.join(str(v) for v in vs)}" for n, vs in self.when]
        return "when " + ", ".join(parts)


class Reads(Protocol):
    """A named thing that reads others by name: a condition, a sampled parameter."""

    @property
    def name(self) -> str: ...

    @property
    def on(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=Reads)


def in_order(items: Sequence[R]) -> tuple[R, ...]:
    """The items in the order given, each after those it reads (acyclic: checked on load; a
    loop is cut, not followed). The one topological order of conditions and of draws."""
    by_name = {item.name: item for item in items}
    out: list[R] = []
    done: set[str] = set()

    def visit(item: R, depth: int) -> None:
        if item.name in done or depth > len(items):
            return
        for name in item.on:
            if name in by_name:
                visit(by_name[name], depth + 1)
        if item.name not in done:
            done.add(item.name)
            out.append(item)

    for item in items:
        visit(item, 0)
    return tuple(out)


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
