"""A sweep's results page (`report`): the best point, the top ten, each parameter's importance,
the images (PNG files, or Mermaid charts GitHub draws), and every point that has not finished,
with its state; as GitHub markdown under GitHub's 65 536 characters, or as JSON.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence

from runner.analysis.findings import Findings
from runner.core.errors import RunnerError
from runner.observe.live import skipped_text
from runner.observe.model import PointResult
from runner.report import pareto, views
from runner.report.charts import chart, mermaid, progress_chart
from runner.report.envelope import approved_json, approved_line
from runner.report.shares import METHODS, NO_EXTRA, share_json
from runner.report.status import metric_text, point_json, summary
from runner.report.tables import params_text, tabulate
from runner.search.importance import FLOOR
from runner.search.ranking import Estimator

LIMIT = 65_536
"""GitHub's most characters for a comment or a job summary's step: the page stays under it."""
TOP = 10
UNFINISHED = 50
"""Points that have not finished, listed one per row; the rest are counted (the CSV has all)."""
LEFT_OUT = "_A chart is left out: with it the page would pass GitHub's 65 536 characters._\n"
CUT = "\n\n_… cut at GitHub's 65 536 characters: the CSV has every point._\n"


def markdown(f: Findings, images: Mapping[str, str]) -> str:
    """The page: `images` are (alt text -> file) links beside it (`csv`: the CSV's); without
    image files, Mermaid charts: the best so far, and the metric by the first varying parameter."""
    charts = []
    if not any(k not in ("csv", pareto.IMAGE) for k in images) and f.ranked:
        charts.append(mermaid(progress_chart(f)))
        with contextlib.suppress(RunnerError):  # no parameter to draw against
            charts.append(mermaid(chart(f.results, f.metric)))
    unfinished = [p for p in f.results.points if p.finished(f.metric) is None]
    shown = min(len(unfinished), UNFINISHED)
    while True:  # fewer unfinished rows, then fewer charts, then a cut: always under LIMIT
        page = _page(f, images, charts, unfinished, shown)
        if len(page) < LIMIT:
            return page
        if shown:
            shown //= 2
        elif real := [c for c in charts if c != LEFT_OUT]:
            charts = [*real[:-1], LEFT_OUT]
        else:
            return page[: LIMIT - 1 - len(CUT)] + CUT


def _page(
    f: Findings,
    images: Mapping[str, str],
    charts: Sequence[str],
    unfinished: Sequence[PointResult],
    shown: int,
) -> str:
    r = f.results
    parts = [f"## Results: `{r.name}` — `{r.path}`", ""]
    if "csv" in images:
        parts += [
            f"Every point, with its parameters, state, metrics, URL and commit: [CSV]({images['csv']}).",
            "",
        ]
    if not f.metric:
        parts += [f"{summary(r)}. _No numeric metric yet: nothing to rank._", ""]
    else:
        parts += _ranked(f, images, charts)
        parts += pareto.front_lines(f, images.get(pareto.IMAGE))
    skipped = skipped_text({p.experiment: p.skipped for p in r.points if p.skipped})
    parts += [f"_{skipped}._", ""] if skipped else []
    if unfinished:
        parts += [f"### Not finished ({len(unfinished)})", "", _unfinished(f, unfinished[:shown])]
        if shown < len(unfinished):
            parts.append(f"\n… and {len(unfinished) - shown} more: see the CSV or `status`.")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def _ranked(f: Findings, images: Mapping[str, str], charts: Sequence[str]) -> list[str]:
    ruled = len(f.front.ruled_out) if f.front is not None else 0
    kept = f", keeping every constraint ({ruled} ruled out by one)" if ruled else ""
    parts = [
        f"Metric `{f.metric}` ({f.goal}). {summary(f.results)}; {len(f.ranked)} finished with"
        f" `{f.metric}`{kept}.",
        "",
        "### Best point",
        "",
        best_line(f),
        "",
    ]
    parts += _rungs(f)
    parts += [approved_line(f.results.search), ""] if approved_line(f.results.search) else []
    if f.ranked:
        parts += [f"### Top {min(TOP, len(f.ranked))}", "", _top(f), ""]
    parts += ["### Parameter importance", "", *_importance(f), ""]
    for alt, link in images.items():
        if alt not in ("csv", pareto.IMAGE):
            parts += [f"![{alt}]({link})", ""]
    return [*parts, *charts]


def best_line(f: Findings) -> str:
    top = f.best
    if top is None:
        return f"_No point has finished with `{f.metric}` yet._"
    value = metric_text(top.metrics.get(f.metric))
    link = f" ({top.url})" if top.url else ""
    return (
        f"**`{top.experiment}`**: `{f.metric}` = **{value}** at `{params_text(top.params)}`{link}"
    )


def _rungs(f: Findings) -> list[str]:
    """A successive halving's rungs: each one's budget, points, those finished, and its best
    point with the parent it was promoted from."""
    halving = f.results.halving
    if halving is None:
        return []
    ladder, rows = halving.ladder, []
    for k, value in enumerate(ladder.values):
        mine = [p for p in f.results.points if ladder.rung(dict(p.params)) == k]
        done = [p for p in f.ranked if ladder.rung(dict(p.params)) == k]
        top = done[0] if done else None
        rows.append(
            [
                str(k),
                str(value),
                str(len(mine)),
                str(len(done)),
                metric_text(top.metrics.get(f.metric)) if top else "",
                f"`{top.experiment}`" if top else "",
                f"`{top.parent}`" if top and top.parent else "",
            ]
        )
    head = ["rung", ladder.param, "points", "finished", f"best {f.metric}", "best point"]
    table = tabulate(rows, headers=[*head, "promoted from"], tablefmt="github")
    said = (
        "Successive halving: each rung runs the best max(1, floor(n / eta)) of the one before"
        f" (eta {ladder.eta}) at its budget; the best point is the best of the highest rung."
    )
    return ["### Rungs", "", said, "", table, ""]


def _top(f: Findings) -> str:
    shown = (*f.params, *(f.results.halving.ladder.names if f.results.halving else ()))
    headers = ["#", "experiment", f.metric, *shown, "url"]
    rows = [
        [
            str(i + 1),
            f"`{p.experiment}`",
            metric_text(p.metrics.get(f.metric)),
            *(_cell(dict(p.params).get(n, "")) for n in shown),
            p.url,
        ]
        for i, p in enumerate(f.ranked[:TOP])
    ]
    return tabulate(rows, headers=headers, tablefmt="github")


def _importance(f: Findings) -> list[str]:
    imp = f.importance
    if not imp.judged:
        return [f"_Not judged: {views.reason(f, f.metric, views.judged_rung(f))}._"]
    rows = [
        [
            f"`{s.name}`",
            "—" if s.value is None else f"{s.value:.3f}",
            "" if s.value is None else "█" * round(20 * s.value),
            f"{s.points} point(s)" + (f", {s.condition}" if s.condition else ""),
            s.note,
        ]
        for s in imp.shares
    ]
    headers = ["parameter", "importance", "", "judged among", "note"]
    if not any(s.note for s in imp.shares):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    table = tabulate(rows, headers=headers, tablefmt="github")
    return [table, "", *importance_notes(f)]


def importance_notes(f: Findings) -> list[str]:
    """How the shares were judged: the method, its fallback, and the conditional parameters."""
    imp = f.importance
    halving = f.results.halving
    if halving is None:
        over = f"{len(f.ranked)} finished point(s)"
    else:  # importance at one budget: rung 0's, where every configuration ran
        zero = sum(halving.ladder.rung(dict(p.params)) == 0 for p in f.ranked)
        over = f"the {zero} finished point(s) of rung 0 (every configuration, one budget)"
    # the method that computed the shares: fANOVA asked for falls back below FLOOR points
    used = imp.method if imp.method in {s.method for s in imp.judged} else Estimator.VARIANCE
    extra = f" ({NO_EXTRA})" if imp.method is Estimator.VARIANCE else ""
    notes = [f"By {METHODS[used]}{extra}, over {over}."]
    if used is not imp.method:
        notes.append(f"Fewer than {FLOOR} points are too few for fANOVA's forest.")
    fallen = [s.name for s in imp.judged if s.method != used]
    if fallen:
        notes.append(
            f"Fewer than {FLOOR} points are too few for a forest: {_names(fallen)} judged by"
            f" {METHODS[Estimator.VARIANCE].split(' (')[0]} (which gives no share by chance)."
        )
    if any(s.condition for s in imp.shares):
        notes.append(
            "A conditional parameter is judged among the points where it exists: its share is"
            " of the metric's variance there, with the parameters that vary there."
        )
    return notes


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _unfinished(f: Findings, points: Sequence[PointResult]) -> str:
    rows = [
        [f"`{p.experiment}`", p.state_text, _cell(params_text(p.params)), p.url] for p in points
    ]
    return tabulate(rows, headers=["experiment", "state", "params", "url"], tablefmt="github")


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|")[:200]


def as_json(f: Findings) -> dict[str, object]:
    """The page's numbers: the best point, the top ten, importance, progress, every point."""
    imp = f.importance
    return {
        "name": f.results.name,
        "path": f.results.path,
        "metric": f.metric,
        "goal": str(f.goal),
        "best": None if f.best is None else point_json(f.best),
        "top": [p.experiment for p in f.ranked[:TOP]],
        "importance": {
            "method": str(imp.method),
            "values": imp.values,
            "note": imp.note,
            "parameters": [share_json(s) for s in imp.shares],
        },
        "progress": [{"x": s.x, "value": s.value, "best": s.best} for s in f.progress],
        "by_round": f.by_round,
        "pareto": pareto.pareto_names(f),
        "front": pareto.data(f),
        "curves": None if f.curves is None else f.curves.as_json(),
        "rungs": None if f.results.halving is None else f.results.halving.ladder.values,
        "approved": approved_json(f.results.search),
        "points": [point_json(p) for p in f.results.points],
    }


def render_json(findings: Sequence[Findings]) -> str:
    return json.dumps({"sweeps": [as_json(f) for f in findings]}, indent=2, default=str) + "\n"
