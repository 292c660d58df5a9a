"""The `params.sample` section: a space of sampled parameters and how its points are found.

`sweep-runner lock` draws the points once (or `propose` proposes them round by round) and writes
them into the section's lock file (`runner.manifest.lock`); everything else reads the lock, so
the points a pull request shows are the points the merge submits.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.core.marks import Document, KeyPath
from runner.core.model import Cell, Condition, in_order
from runner.core.values import InvalidValue, StrEnum, Value, canonical_json, checked, identity
from runner.manifest import conditions as conditioned

if TYPE_CHECKING:
    from runner.manifest.aims import Aim, Constraint
    from runner.manifest.known import SeedFrom

DEFAULT_DIGITS = 4
DEFAULT_SEED = 0


class Method(StrEnum):
    """How the points are found: drawn at once (`lock`), or proposed round by round from the
    results so far (`propose`)."""

    RANDOM = "random"
    SOBOL = "sobol"
    HALTON = "halton"
    TPE = "tpe"
    GP = "gp"

    @property
    def adaptive(self) -> bool:
        """Whether `propose` adds the points round by round, from the results so far."""
        return self in (Method.TPE, Method.GP)


class Kind(StrEnum):
    """A sampled parameter's distribution."""

    UNIFORM = "uniform"
    LOG_UNIFORM = "log_uniform"
    INT = "int"
    LOG_INT = "log_int"
    CHOICE = "choice"

    @property
    def integer(self) -> bool:
        return self in (Kind.INT, Kind.LOG_INT)

    @property
    def log(self) -> bool:
        """Drawn evenly over the logarithm."""
        return self in (Kind.LOG_UNIFORM, Kind.LOG_INT)


class Goal(StrEnum):
    """Which way is better: an adaptive search's `goal`, and every ranking of points."""

    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"

    def better(self, a: float, b: float) -> bool:
        """Whether a is strictly better than b."""
        return a > b if self is Goal.MAXIMIZE else a < b

    @property
    def short(self) -> str:
        """`min` or `max`, as `status --best` says it."""
        return self.value[:3]


@dataclass(frozen=True)
class Distribution:
    """One sampled parameter (`runner.search.points` maps a number in [0, 1) to its value)."""

    name: str
    kind: Kind
    bounds: tuple[Value, ...]
    """[low, high] for ranges; the values for `choice`."""
    when: Condition | None = None
    """A conditional parameter's condition: drawn always, kept only where it holds."""

    @property
    def on(self) -> tuple[str, ...]:
        return self.when.on if self.when is not None else ()


@dataclass(frozen=True)
class Sample:
    """The checked `params.sample` section."""

    method: Method
    n: int
    seed: int
    digits: int
    params: tuple[Distribution, ...]
    declared: tuple[str, ...] = ()
    """Every name the section claimed, those with a bad distribution too (no cascade)."""
    batch: int = 0
    """Adaptive methods: points per round."""
    metric: str = ""
    goal: Goal = Goal.MINIMIZE
    proceed: float = 1.0
    """Adaptive methods: the fraction of a round finished before the next is proposed."""
    objectives: tuple[Aim, ...] = ()
    """Every objective (`metric` and `goal` are the first's); two or more: a Pareto search."""
    constraints: tuple[Constraint, ...] = ()
    enqueue: tuple[tuple[Cell, ...], ...] = ()
    """Known points, as written, in `names` order: the lock's first points."""
    seed_from: tuple[SeedFrom, ...] = ()
    """Sweeps whose finished points are an adaptive search's prior trials."""

    @property
    def adaptive(self) -> bool:
        return self.method.adaptive

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.params)

    @property
    def conditions(self) -> tuple[Condition, ...]:
        """The conditional parameters' conditions, each after those of the names it reads."""
        return in_order(tuple(d.when for d in self.params if d.when is not None))

    @property
    def metrics(self) -> list[str]:
        """The metrics a point is judged by: each objective's, then each constraint's."""
        names = [a.metric for a in self.objectives] or ([self.metric] if self.metric else [])
        return list(dict.fromkeys([*names, *(c.metric for c in self.constraints)]))

    @property
    def digest(self) -> str:
        """What the lock must belong to: everything but `n`."""
        identity_ = {
            "method": self.method,
            "seed": self.seed,
            "digits": self.digits,
            "space": [[d.name, d.kind, list(d.bounds), *_when(d)] for d in self.params],
        }
        # Known points and warm-start sources are what the first points are made of: each
        # makes another sample (absent when empty, so older locks stay valid).
        if self.enqueue:
            identity_["enqueue"] = [row_identity(row) for row in self.enqueue]
        if self.seed_from:
            identity_["seed_from"] = [[s.sweep, s.commit] for s in self.seed_from]
            identity_["seeded"] = self.metrics
        return hashlib.sha256(canonical_json(identity_).encode()).hexdigest()


def _when(d: Distribution) -> list[Any]:
    """A condition's part of the digest; nothing for an unconditional parameter (older locks
    stay valid)."""
    return [] if d.when is None else [[[n, list(vs)] for n, vs in d.when.when]]


def parse_sample(
    doc: Document, add: conditioned.Add, claim: Callable[[str, KeyPath], bool]
) -> Sample | None:
    """The sample section of a schema-valid document; problems go to `add(path, message, key)`,
    names to `claim(name, path)` (a sampled name that is also an axis is refused there)."""
    raw = (doc.data.get("params") or {}).get("sample")
    if raw is None:
        return None
    base: KeyPath = ("params", "sample")
    params: list[Distribution] = []
    declared: list[str] = []
    for name, spec in raw["space"].items():
        path: KeyPath = (*base, "space", name)
        if not claim(name, path):
            continue
        declared.append(name)
        kind, bounds = next((Kind(k), v) for k, v in spec.items() if k != "when")
        problem = _check(kind, bounds)
        if problem is not None:
            add((*path, kind.value), problem, False)
            continue
        on = spec.get("when")
        when = None if on is None else conditioned.parse(name, on, (*path, "when"), add)
        params.append(Distribution(name, kind, tuple(checked(b) for b in bounds), when))
    method = Method(raw["method"])
    if method.adaptive:
        for needed in ("batch", "metric"):
            if needed not in raw:
                add(
                    base,
                    f"method {raw['method']} needs `{needed}` (points per round; the metric to optimise)",
                    True,
                )
        for beside in ("grid", "zip", "include"):
            if beside in doc.data["params"]:
                add(
                    ("params", beside),
                    f"method {raw['method']} proposes every point itself: no params.{beside} beside"
                    " an adaptive sample (put fixed values in the command, or make them sampled"
                    " parameters with `choice`)",
                    True,
                )
    return Sample(
        method=method,
        n=int(raw["n"]),
        seed=int(raw.get("seed", DEFAULT_SEED)),
        digits=int(raw.get("digits", DEFAULT_DIGITS)),
        params=tuple(params),
        declared=tuple(declared),
        batch=int(raw.get("batch", 0)),
        metric=str(_first(raw.get("metric", ""))),
        goal=Goal(_first(raw.get("goal", Goal.MINIMIZE))),
        proceed=float(raw.get("proceed", 1.0)),
    )


def _first(value: Any) -> Any:
    """A list's first item (`metric: [loss, gpu_hours]`), or the value itself."""
    return value[0] if isinstance(value, list) and value else value


def _check(kind: Kind, bounds: list[Any]) -> str | None:
    if kind is Kind.CHOICE:
        seen: dict[str, int] = {}
        for i, value in enumerate(bounds):
            try:
                ident = identity(checked(value))
            except InvalidValue as exc:
                return f"item {i}: {exc}"
            if ident in seen:
                return f"duplicate choice {ident} (items {seen[ident]} and {i})"
            seen[ident] = i
        return None
    low, high = bounds
    if any(isinstance(b, float) and not math.isfinite(b) for b in bounds):
        return "bounds must be finite numbers"
    if low >= high:
        word = "empty" if low == high else "inverted"
        return f"the range [{low}, {high}] is {word}: write [low, high] with low < high"
    if kind is Kind.LOG_UNIFORM and low <= 0:
        return f"log_uniform needs bounds above 0 (got low {low})"
    if kind is Kind.LOG_INT and low < 1:
        return f"log_int needs bounds of 1 or more (got low {low})"
    return None


def row_identity(row: Sequence[Cell]) -> str:
    """Equal for two rows exactly when they are the same point (null for absent)."""
    return canonical_json([None if v is None else identity(v) for v in row])
