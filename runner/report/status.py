"""A sweep's results as a terminal table, GitHub markdown, JSON or CSV.

One row per point of the manifest, in manifest order, then orphans: the plan's status (`+` not
submitted, `=` submitted, `~` drifted, `-` orphan), the experiment's state, exit code and
duration, the parameters, one column per metric, what the jobs say (when any says something:
the progress and link from its description, else the description shortened), and the URL.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from runner.analysis.findings import last_rung_best
from runner.observe.live import step_text
from runner.observe.model import Observation, PointResult
from runner.render.durations import elapsed_text
from runner.report.envelope import approved_json, approved_line
from runner.report.tables import params_text, tabulate

HEADING = "## Sweep status\n\n"
LEGEND = (
    "+ not submitted, = submitted, ~ drifted (spec changed since), - orphan (not in the manifest)"
)


def render(sweeps: Sequence[Observation], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"sweeps": [as_json(s) for s in sweeps]}, indent=2, default=str) + "\n"
    if fmt == "csv":
        return as_csv(sweeps)
    if fmt == "markdown":
        return HEADING + "\n\n".join(markdown(s) for s in sweeps) + "\n"
    return "\n\n".join(table(s) for s in sweeps) + "\n"


SAYS_WIDTH = 60


def _says(sweep: Observation) -> bool:
    return any(p.description for p in sweep.points)


def _live(sweep: Observation) -> bool:
    return any(p.live for p in sweep.points)


def live_text(point: PointResult) -> str:
    """`step 1 200 · loss 2.31`: a running point's latest report; empty without one."""
    live = point.live
    if live is None:
        return ""
    values = (f"{name} {metric_text(v)}" for name, v in live.values.items())
    return " · ".join([f"step {step_text(live.step)}", *values])


def live_json(point: PointResult) -> dict[str, object] | None:
    """`{"step": 1200, "values": {"loss": 2.31}}`, or None."""
    live = point.live
    return None if live is None else {"step": live.step, "values": dict(live.values)}


def says_text(point: PointResult) -> str:
    """The job's progress and link, or its description shortened when it shows neither."""
    parts = [p for p in (point.progress, point.link) if p]
    text = " ".join(parts) or " ".join(point.description.split())
    return text if len(text) <= SAYS_WIDTH else text[: SAYS_WIDTH - 3] + "..."


@dataclass(frozen=True)
class _Columns:
    """The columns a sweep's table has beyond the fixed ones."""

    metrics: Sequence[str]
    live: bool
    says: bool
    parent: bool

    @classmethod
    def of(cls, sweep: Observation) -> _Columns:
        return cls(sweep.metric_names, _live(sweep), _says(sweep), sweep.halving is not None)


def _headers(columns: _Columns) -> list[str]:
    """The table's headers, one a cell of `_row`."""
    return [
        *["", "experiment", "state", "exit", "time", "params"],
        *(["parent"] if columns.parent else []),
        *columns.metrics,
        *(["live"] if columns.live else []),
        *(["job says"] if columns.says else []),
        "url",
    ]


def _row(point: PointResult, columns: _Columns) -> list[str]:
    return [
        point.status,
        point.experiment,
        point.state_text,
        "" if point.exit_code is None else str(point.exit_code),
        duration(point.seconds),
        params_text(point.params),
        *([point.parent] if columns.parent else []),
        *(metric_text(point.metrics.get(m)) for m in columns.metrics),
        *([live_text(point)] if columns.live else []),
        *([says_text(point)] if columns.says else []),
        point.url,
    ]


def _title(sweep: Observation) -> str:
    group = f"; group {sweep.group.url}" if sweep.group and sweep.group.url else ""
    return f"{sweep.name} ({sweep.path}{group})"


def table(sweep: Observation) -> str:
    columns = _Columns.of(sweep)
    rows = [_row(p, columns) for p in sweep.points]
    lines = [_title(sweep), tabulate(rows, headers=_headers(columns))]
    lines.append(summary(sweep))
    lines += [rung_best_text(sweep)] if sweep.halving is not None else []
    lines += [approved_line(sweep.search)] if approved_line(sweep.search) else []
    if sweep.note:
        lines.append(f"note: {sweep.note}")
    return "\n".join(lines)


def markdown(sweep: Observation) -> str:
    parts = [f"### `{sweep.name}` — `{sweep.path}`", ""]
    if sweep.group and sweep.group.url:
        parts += [f"Group: [{sweep.group.name or sweep.group.url}]({sweep.group.url})", ""]
    columns = _Columns.of(sweep)
    rows = [[_md(c) for c in _row(p, columns)] for p in sweep.points]
    parts.append(
        tabulate(rows, headers=_headers(columns), tablefmt="github") if rows else "_no points_"
    )
    parts += ["", f"{summary(sweep)}. {LEGEND}."]
    parts += ["", _md(rung_best_text(sweep))] if sweep.halving is not None else []
    parts += ["", approved_line(sweep.search)] if approved_line(sweep.search) else []
    if sweep.note:
        parts += ["", f"> {sweep.note}"]
    return "\n".join(parts)


def rung_best_text(sweep: Observation) -> str:
    """A successive halving's best point of its highest rung finished so far, as one line."""
    halving, aim = sweep.halving, sweep.objective
    if halving is None or aim is None:
        return ""
    point = last_rung_best(sweep)
    if point is None:
        return f"No point has finished with {aim.metric} yet: no rung has a best point."
    rung, top = halving.ladder.rung(dict(point.params)), len(halving.ladder.values) - 1
    last = " (the last)" if rung == top else f" of {top}"
    value = metric_text(point.metrics.get(aim.metric))
    return (
        f"Best of rung {rung}{last}: {aim.metric} {value} ({aim.goal}) at"
        f" {point.experiment} {params_text(point.params)}"
    )


def summary(sweep: Observation) -> str:
    """'6 point(s): 1 succeeded, 2 preempted, 1 timed-out, ...': each point counted by why it
    ended where that says more than its state (a preempted point is not `canceled`)."""
    counts: dict[str, int] = {}
    for point in sweep.points:
        word = str(point.ending or point.state)
        counts[word] = counts.get(word, 0) + 1
    states = ", ".join(f"{n} {state}" for state, n in counts.items())
    return f"{len(sweep.points)} point(s): {states or 'none'}"


def as_json(sweep: Observation) -> dict[str, object]:
    group = sweep.group
    said: dict[str, object] = {
        "name": sweep.name,
        "path": sweep.path,
        "draft": sweep.draft,
        "group": {"name": group.name, "url": group.url} if group else None,
        "note": sweep.note,
        "points": [point_json(p) for p in sweep.points],
    }
    approved = approved_json(sweep.search)  # who approved each round: a person, the envelope
    if approved is not None:
        said["approved"] = approved
    return said


def point_json(p: PointResult) -> dict[str, object]:
    return {
        "status": p.status,
        "experiment": p.experiment,
        "key": p.key,
        "state": p.state,
        "restarts": p.restarts,
        "preemptions": p.preemptions,
        "canceled_at": p.canceled_at,
        "ended": ended_json(p),
        "commit": p.code or None,
        "exit_code": p.exit_code,
        "seconds": p.seconds,
        "params": dict(p.params),
        "parent": p.parent or None,
        "metrics": dict(p.metrics),
        "description": p.description,
        "progress": p.progress,
        "link": p.link,
        "live": live_json(p),
        "skipped_lines": None if p.skipped is None else p.skipped.as_json(),
        "url": p.url,
    }


def ended_json(p: PointResult) -> dict[str, object] | None:
    """Why it ended: `{"cause": "timed-out", "why": "timed out after its timeout of 2h",
    "text": <Beaker's words>, "timeout": 7200.0, "resumes": false}`; None while it has not."""
    ending = p.ending
    if ending is None:
        return None
    ended = p.ended
    return {
        "cause": str(ending),
        "why": p.why,
        "text": ended.text if ended is not None else "",
        "timeout": ended.timeout if ended is not None else None,
        "resumes": p.resumes,
    }


def as_csv(sweeps: Sequence[Observation]) -> str:
    """One table for all sweeps: a column per parameter (`param.lr`) and per metric
    (`metric.loss`) of any of them, so neither can clash with the fixed columns; then each
    point's URL and the commit that submitted it."""
    params = list(dict.fromkeys(k for s in sweeps for p in s.points for k, _ in p.params))
    metrics = sorted({m for s in sweeps for m in s.metric_names})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    head = ["sweep", "status", "experiment", "state", "exit_code", "seconds"]
    named = [*(f"param.{k}" for k in params), *(f"metric.{m}" for m in metrics)]
    writer.writerow([*head, *named, "url", "commit"])
    for sweep in sweeps:
        for p in sweep.points:
            values = dict(p.params)
            writer.writerow(
                [
                    sweep.name,
                    p.status,
                    p.experiment,
                    p.state,
                    "" if p.exit_code is None else p.exit_code,
                    "" if p.seconds is None else f"{p.seconds:g}",
                    *(_csv_value(values.get(k)) for k in params),
                    *(_csv_value(p.metrics.get(m)) for m in metrics),
                    p.url,
                    p.commit,
                ]
            )
    return out.getvalue()


def _csv_value(value: object) -> object:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def duration(seconds: float | None) -> str:
    """How long a point ran (`elapsed_text`); empty when unknown."""
    return "" if seconds is None else elapsed_text(seconds)


def metric_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _md(cell: str) -> str:
    return cell.replace("|", "\\|")


def best_text(sweep: Observation, point: PointResult | None, metric: str, goal: str) -> str:
    """The winning point, or why there is none, as one line plus its parameters."""
    if point is None:
        return f"{sweep.name}: no point has a numeric {metric}"
    params = params_text(point.params)
    value = metric_text(point.metrics.get(metric))
    return (
        f"{sweep.name}: best {metric} ({goal}) = {value} at {point.experiment} {params} {point.url}"
    )
