"""`report --output DIR`'s web page, `DIR/index.html`: every sweep's results in one self-contained
file that opens from an artifact, a Pages site or a laptop with no server, and that asks nothing
of the network (its script and style are inline, a Content-Security-Policy forbids any fetch).

The page is data and renderers. The data is one JSON document inside the page (`page_data`: per
sweep the metrics its picker offers, a halving's rungs, the axes, every point, and a view per
metric and rung with its ranking, best so far and importance, `runner.report.views`); the
renderers are the scripts in `assets/` (`SCRIPTS`), plain JavaScript drawing SVG: a table of
contents, parallel coordinates whose axes can be brushed (the table follows), a sortable table
of every point linked to its experiment, the importance bars, the best so far and a point's
detail. The script computes no figure: it chooses a view and draws it.

Extension points, for sections other issues add (learning curves, a Pareto front): a `Section`
names a key of the sweep's JSON, the function that fills it from the findings (None: the sweep
has nothing to show there, and the page leaves the section out) and the script that registers
its renderer under the same key (`SweepPage.section(key, title, render)`; drawn again for the
points shown when the metric or the rung changes). The page renders without any of them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from runner.analysis.findings import Findings
from runner.core.values import as_text
from runner.observe.model import PointResult
from runner.report import charts, pareto, views

FORMAT = 2
"""The page data's format (`page_data()["format"]`), for scripts that read it back."""
DATA_ID = "sweep-data"
"""The id of the page's `<script type="application/json">` element."""
POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
"""No request leaves the page: nothing but its own inline script and style run."""


@dataclass(frozen=True)
class Section:
    """A section of a sweep's web page beyond the built-in ones."""

    key: str
    """The sweep's JSON key its data goes under, and the name its renderer registers."""
    data: Callable[[Findings], object | None]
    """The section's data for a sweep (JSON values); None: nothing to show, no section."""
    script: str
    """JavaScript that calls `SweepPage.section(key, title, render)`, where
    `render(element, sweep, data)` fills the section's element."""


def _asset(name: str) -> str:
    return (resources.files("runner.report") / "assets" / name).read_text(encoding="utf-8")


def _curves(f: Findings) -> object | None:
    """Each point's learning curve (`runner.analysis.curves`), when some point reported one."""
    return None if f.curves is None or not f.curves.lines else f.curves.as_json()


SCRIPTS = ("page.js", "parallel.js", "table.js", "judged.js")
"""The page's own scripts, in order: the frame, then the parts it draws a view with."""

SECTIONS: tuple[Section, ...] = (
    Section("learning_curves", _curves, _asset("curves.js")),
    Section("pareto", pareto.data, _asset("pareto.js")),
)
"""The sections every page carries beyond the built-in ones: learning curves (the
`learning_curves` key: per point, its (step, value) series; issue 39) and the Pareto front
(`pareto`, issue 40) register here."""


def page(findings: Sequence[Findings], sections: Sequence[Section] = SECTIONS) -> str:
    """The whole page: one HTML file, its data, style and scripts inline."""
    data = json.dumps(page_data(findings, sections), allow_nan=False, sort_keys=True)
    scripts = "\n".join([*(_asset(name) for name in SCRIPTS), *(s.script for s in sections)])
    names = ", ".join(f.results.name for f in findings) or "no sweep"
    return TEMPLATE.format(
        policy=POLICY,
        title=_escape(f"Sweep results: {names}"),
        style=_asset("page.css"),
        data_id=DATA_ID,
        data=_script_safe(data),
        script=_script_safe(scripts),
    )


def page_data(findings: Sequence[Findings], sections: Sequence[Section] = ()) -> dict[str, object]:
    """What the page draws, as JSON values (no NaN: a non-finite metric is its text)."""
    return {"format": FORMAT, "sweeps": [sweep_data(f, sections) for f in findings]}


def sweep_data(f: Findings, sections: Sequence[Section] = ()) -> dict[str, object]:
    """One sweep: the metrics its picker offers, a halving's rungs, the parameter axes and each
    metric's axis, every point (one that can be drawn with its height on each parameter axis,
    in [0, 1]), and each view's ranking, best so far and importance (`runner.report.views`)."""
    picked = views.metrics(f)
    lines = [p for p in f.results.points if any(p.finished(m.name) is not None for m in picked)]
    axes, heights = charts.parallel_axes(f, lines)
    halving = f.results.halving
    data: dict[str, object] = {
        "name": f.results.name,
        "path": f.results.path,
        "metric": f.metric,
        "goal": str(f.goal),
        "params": list(f.params),
        "metrics": [{"name": m.name, "goal": str(m.goal), "said": m.said} for m in picked],
        "rungs": None
        if halving is None
        else {
            "param": halving.ladder.param,
            "values": [_json_value(v) for v in halving.ladder.values],
        },
        "rung": views.default_rung(f),
        "constraints": [str(c) for c in f.results.constraints],
        "axes": axes,
        "metric_axes": {m.name: charts.metric_axis(m.name, lines) for m in picked},
        "points": [_point(f, p, heights.get(p.key)) for p in f.results.points],
        "views": views.views(f, picked),
        "by_round": f.by_round,
    }
    for section in sections:
        value = section.data(f)
        if value is not None:
            data[section.key] = value
    return data


def _point(f: Findings, p: PointResult, heights: list[float] | None) -> dict[str, object]:
    return {
        "experiment": p.experiment,
        "key": p.key,
        "state": str(p.state),
        "state_text": p.state_text,
        "url": p.url,
        "parent": p.parent,
        "params": {k: _json_value(v) for k, v in p.params},
        "metrics": {k: _json_value(v) for k, v in sorted(p.metrics.items())},
        "rung": views.rung_of(f, p),
        "ruled_out": views.ruled_out(f, p),
        "heights": heights,
    }


def _json_value(value: object) -> object:
    """A parameter as JSON: numbers stay numbers where finite; anything else is its text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value if math.isfinite(value) else str(value)
    return as_text(value)  # type: ignore[arg-type]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _script_safe(text: str) -> str:
    """Text that cannot end its `<script>` element early (`</script>`, `<!--`)."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


TEMPLATE = """<!DOCTYPE html>
<!-- Written by `sweep-runner report --output DIR`: the results of every sweep, in one file that
     makes no request. Written again by the same command; do not edit. -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
{style}
</style>
</head>
<body>
<main id="sweeps"></main>
<script type="application/json" id="{data_id}">{data}</script>
<script>
{script}
</script>
</body>
</html>
"""
