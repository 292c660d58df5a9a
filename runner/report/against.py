"""`report --against REV`'s text: per sweep, each point's metric then and now and the change, as
GitHub markdown (a table, then the points present on one side only) or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from runner.analysis.against import Comparison, Pair
from runner.observe.model import PointResult
from runner.report.status import metric_text
from runner.report.tables import params_text, tabulate

SHOWN = 20
"""Points present on one side only are named up to this many; the rest are counted."""


def markdown(comparisons: Sequence[Comparison]) -> str:
    return "\n".join(_sweep(c) for c in comparisons)


def _sweep(c: Comparison) -> str:
    parts = [f"## `{c.sweep}` against `{c.rev}`: `{c.metric}` ({c.goal})", ""]
    if c.pairs:
        rows = [
            [
                f"`{p.now.experiment}`",
                params_text(p.now.params),
                _value(p.before),
                _value(p.after),
                _change(c, p),
            ]
            for p in c.pairs
        ]
        headers = ["point", "params", f"then ({c.rev})", "now", "change"]
        parts += [tabulate(rows, headers=headers, tablefmt="github"), ""]
        moved = sum(p.by_params for p in c.pairs)
        if moved:
            parts += [
                f"{moved} point(s) paired by their parameters: their key changed since (a"
                " `revision:` bump re-runs them under new keys).",
                "",
            ]
    else:
        parts += [f"_No point is in both: {c.unpaired}._", ""]
    then = [f"`{p.experiment}` ({params_text(p.params)})" for p in c.only_then]
    now = [f"`{p.experiment}` ({params_text(p.params)})" for p in c.only_now]
    parts += _listed(f"Only at `{c.rev}`", then) + _listed("Only now", now)
    return "\n".join(parts).rstrip() + "\n"


def _listed(title: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    more = f", and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return [f"{title} ({len(items)}): {', '.join(items[:SHOWN])}{more}.", ""]


def _value(value: float | None) -> str:
    return "—" if value is None else metric_text(value)


def _change(c: Comparison, p: Pair) -> str:
    change = p.change
    if change is None:
        return "—"
    better = c.better(p)
    word = "" if better is None else " (better)" if better else " (worse)"
    return f"{change:+.4g}{word}"


def as_json(c: Comparison) -> dict[str, object]:
    return {
        "name": c.sweep,
        "against": c.rev,
        "metric": c.metric,
        "goal": str(c.goal),
        "pairs": [
            {
                "key_then": p.then.key,
                "key_now": p.now.key,
                "experiment_then": p.then.experiment,
                "experiment_now": p.now.experiment,
                "params": dict(p.now.params),
                "then": p.before,
                "now": p.after,
                "change": p.change,
                "by_params": p.by_params,
            }
            for p in c.pairs
        ],
        "only_then": [_point(p) for p in c.only_then],
        "only_now": [_point(p) for p in c.only_now],
        "unpaired": c.unpaired or None,
    }


def _point(p: PointResult) -> dict[str, object]:
    return {"key": p.key, "experiment": p.experiment, "params": dict(p.params), "state": p.state}


def render_json(comparisons: Sequence[Comparison]) -> str:
    return json.dumps({"sweeps": [as_json(c) for c in comparisons]}, indent=2) + "\n"
