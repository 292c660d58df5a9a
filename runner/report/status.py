"""The live state of a sweep's experiments as a table, markdown or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from runner.report.tables import params_text, tabulate
from runner.values import Value


@dataclass(frozen=True)
class PointStatus:
    experiment: str
    state: str
    exit_code: int | None
    params: Mapping[str, Value]
    metrics: Mapping[str, object] = field(default_factory=dict)
    url: str = ""
    restarts: int = 0
    canceled_at: str | None = None
    """Set when `cancel` canceled it."""


@dataclass(frozen=True)
class SweepStatus:
    name: str
    path: str
    points: tuple[PointStatus, ...]
    note: str = ""
    """A line under the title, e.g. the max_running cap: 'max_running 16: 16 running, 4 waiting'."""


def _state(point: PointStatus) -> str:
    """The state, with what was done to the experiment on request."""
    extra = [f"restarted {point.restarts}x"] if point.restarts else []
    extra += ["canceled on request"] if point.canceled_at else []
    return point.state + (f" ({', '.join(extra)})" if extra else "")


def render(sweeps: Sequence[SweepStatus], fmt: str) -> str:
    if fmt == "json":
        return (
            json.dumps(
                {"sweeps": [_json(s) for s in sweeps]}, indent=2, ensure_ascii=False, default=str
            )
            + "\n"
        )
    blocks = []
    for sweep in sweeps:
        metric_names = sorted({m for p in sweep.points for m in p.metrics})
        headers = ["experiment", "state", "exit", "params", *metric_names, "url"]
        rows = [
            [
                p.experiment,
                _state(p),
                "" if p.exit_code is None else p.exit_code,
                params_text(list(p.params.items())),
                *[_metric(p.metrics.get(m)) for m in metric_names],
                p.url,
            ]
            for p in sweep.points
        ]
        if fmt == "markdown":
            body = (
                tabulate(rows, headers=headers, tablefmt="github")
                if rows
                else "_nothing submitted yet_"
            )
            note = f"{sweep.note}\n\n" if sweep.note else ""
            blocks.append(f"### `{sweep.name}` — `{sweep.path}`\n\n{note}{body}")
        else:
            body = tabulate(rows, headers=headers) if rows else "nothing submitted yet"
            note = f"{sweep.note}\n" if sweep.note else ""
            blocks.append(f"{sweep.name} ({sweep.path})\n{note}{body}")
    return "\n\n".join(blocks) + "\n"


def _json(sweep: SweepStatus) -> dict[str, object]:
    return {
        "name": sweep.name,
        "path": sweep.path,
        "note": sweep.note,
        "points": [
            {
                "experiment": p.experiment,
                "state": p.state,
                "exit_code": p.exit_code,
                "params": dict(p.params),
                "metrics": dict(p.metrics),
                "url": p.url,
                "restarts": p.restarts,
                "canceled_at": p.canceled_at,
            }
            for p in sweep.points
        ],
    }


def _metric(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)
