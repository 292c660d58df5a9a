"""A warm start's sources, checked with the repository's other manifests: each sweep that a
`seed_from` names must exist, must not be the search itself, and (when its manifest says which
metrics it reports) must report every metric the search is judged by. `gpu_hours` every sweep
has. A sweep that declares no metric (a grid without `stop_when`) may report any: what its points
report is read when `propose` seeds, and those without the metric are left out, with why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.core.aims import GPU_HOURS
from runner.core.errors import Problem
from runner.manifest import Loaded
from runner.manifest.aims import constraint


def declared(data: Mapping[str, Any]) -> frozenset[str] | None:
    """The metrics a manifest says its points report (its search's objectives and constraints,
    its `stop_when`'s); None when it names none."""
    params = data.get("params")
    sample = params.get("sample") if isinstance(params, Mapping) else None
    sample = sample if isinstance(sample, Mapping) else {}
    metric, limits = sample.get("metric", []), sample.get("constraints")
    names = {metric} if isinstance(metric, str) else set(_strings(metric))
    for text in _strings(limits):
        found = constraint(text)
        names |= {found.metric} if found is not None else set()
    target = data.get("stop_when")
    names |= {target["metric"]} if isinstance(target, Mapping) and "metric" in target else set()
    return frozenset(names) if names else None


def _strings(value: object) -> list[str]:
    """The strings of a list as written (a source need not be valid: anything else is none)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def seed_problems(loaded: Loaded, others: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """What is wrong with the search's `seed_from`; `others`: every sweep of the repository, by
    name, its manifest's document."""
    search, doc = loaded.sweep.search, loaded.doc
    sample = search.sample
    if sample is None or doc is None or not sample.seed_from:
        return []
    wanted = [m for m in search.aims.metrics if m != GPU_HOURS]
    problems = []
    for i, source in enumerate(sample.seed_from):
        path = ("params", "sample", "seed_from", i, "sweep")
        said = _problem(loaded.sweep.name, source.sweep, others, wanted)
        if said:
            problems.append(Problem.at(doc.marks, doc.source, path, said))
    return problems


def _problem(
    name: str, source: str, others: Mapping[str, Mapping[str, Any]], wanted: list[str]
) -> str:
    if source == name:
        return f"sweep {source!r} is this search itself: seed_from names another sweep"
    if source not in others:
        known = ", ".join(sorted(n for n in others if n != name)) or "none"
        return f"no sweep named {source!r} in this repository (sweeps: {known})"
    reports = declared(others[source])
    missing = [m for m in wanted if reports is not None and m not in reports]
    if missing:
        return (
            f"sweep {source!r} reports {', '.join(sorted(reports or ()))}, not"
            f" {', '.join(missing)}: a warm start learns from points with this search's metrics"
        )
    return ""
