"""Parse the `params.sample` section: a space of sampled parameters and how its points are found
(`runner.core.sample.Sample`).

`sweep-runner lock` draws the points once (or `propose` proposes them round by round) and writes
them into the section's lock file (`runner.manifest.lock`); everything else reads the lock, so
the points a pull request shows are the points the merge submits. What the search optimises is
the sweep's (`runner.manifest.aims`), parsed beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from runner.core.marks import Document, KeyPath
from runner.core.sample import DEFAULT_DIGITS, DEFAULT_SEED, Distribution, Kind, Method, Sample
from runner.core.values import InvalidValue, checked, identity
from runner.manifest import conditions as conditioned


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
        proceed=float(raw.get("proceed", 1.0)),
    )


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
