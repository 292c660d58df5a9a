"""The plan as a terminal table, GitHub markdown (PR comment, job summary) or JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from runner.backends import group_name
from runner.plan import STATUS_WORDS, Row, SweepPlan
from runner.report.tables import params_text, simple_table, tabulate

MARKDOWN_LIMIT = 60_000
"""GitHub caps a comment at 65 536 characters; stay clear of it."""
MARKDOWN_ROWS = 200
"""Rows shown per sweep before the rest is summarised."""
COMMENT_MARKER = "<!-- beaker-sweep-runner:plan -->"


def _cells(row: Row) -> list[str]:
    return [row.status, row.name, row.key[:12], params_text(row.params)]


HEADERS = ["", "experiment", "key", "params"]


def note(row: Row) -> str:
    """What else a row says: why a `+` waits, and what was done to its experiment since."""
    notes = [row.waiting] if row.waiting else []
    if row.entry is not None and row.entry.restarts:
        notes.append(f"restarted {row.entry.restarts}x (last {row.entry.restarted_at})")
    if row.entry is not None and row.entry.canceled_at:
        notes.append(f"canceled {row.entry.canceled_at}")
    return "; ".join(notes)


def _with_notes(plan: SweepPlan, rows: Sequence[Row]) -> tuple[list[list[str]], list[str]]:
    """Cells and headers, with a note column only when some row of the plan has a note."""
    cells = [_cells(r) for r in rows]
    notes = [note(r) for r in plan.rows]
    if not any(notes):
        return cells, HEADERS
    return [[*c, note(r)] for c, r in zip(cells, rows, strict=True)], [*HEADERS, "note"]


def table(plans: Sequence[SweepPlan]) -> str:
    blocks = []
    for plan in plans:
        title = f"{plan.sweep.name} ({plan.sweep.path})"
        body = simple_table(*_with_notes(plan, plan.rows))
        group = group_line(plan)
        blocks.append(f"{title}\n{body}\n{plan.summary()}" + (f"\n{group}" if group else ""))
    return "\n\n".join(blocks)


def group_line(plan: SweepPlan, link: bool = False) -> str:
    """Where the sweep's experiments are grouped on Beaker; empty for drafts and opt-outs."""
    if plan.sweep.draft or not plan.sweep.placement.group:
        return ""
    name = group_name(plan.sweep)
    if not plan.group:
        return f"Beaker group: {name} (made by the first submit)"
    return f"Beaker group: [{name}]({plan.group})" if link else f"Beaker group: {name} {plan.group}"


def markdown(plans: Sequence[SweepPlan], heading: str = "Sweep plan") -> str:
    """One document for all sweeps, kept under GitHub's comment size by summarising big tables."""
    live = [p for p in plans if not p.sweep.draft]
    total = {s: sum(p.counts[s] for p in live) for s in STATUS_WORDS}
    headline = ", ".join(f"**{total[s]}** {word}" for s, word in STATUS_WORDS.items())
    headline += f" across {len(live)} sweep(s)."
    drafts = len(plans) - len(live)
    if drafts:
        headline += f" {drafts} draft sweep(s) shown below submit nothing."
    parts = [COMMENT_MARKER, f"## {heading}", "", headline]
    for plan in plans:
        parts += ["", f"### `{plan.sweep.name}` — `{plan.sweep.path}`", "", plan.summary(), ""]
        group = group_line(plan, link=True)
        if group:
            parts += [group, ""]
        rows = [r for r in plan.rows if r.status != "="] + [r for r in plan.rows if r.status == "="]
        shown = rows[:MARKDOWN_ROWS]
        plain, headers = _with_notes(plan, shown)
        cells = [[f"`{c}`" if i < 3 and c else c for i, c in enumerate(row)] for row in plain]
        parts.append(tabulate(cells, headers=headers, tablefmt="github"))
        if len(rows) > len(shown):
            parts.append(
                f"\n…and {len(rows) - len(shown)} more points (see the JSON plan for all)."
            )
    text = "\n".join(parts) + "\n"
    if len(text) > MARKDOWN_LIMIT:
        summary = [*parts[:4], ""] + [f"- `{p.sweep.name}`: {p.summary()}" for p in plans]
        summary.append(
            "\nThe full table is too large for a comment; run `python -m runner expand --plan`."
        )
        text = "\n".join(summary)[:MARKDOWN_LIMIT] + "\n"
    return text


def as_json(plans: Sequence[SweepPlan]) -> str:
    return (
        json.dumps({"sweeps": [_plan_json(p) for p in plans]}, indent=2, ensure_ascii=False) + "\n"
    )


def _plan_json(plan: SweepPlan) -> dict[str, Any]:
    return {
        "name": plan.sweep.name,
        "path": str(plan.sweep.path),
        "draft": plan.sweep.draft,
        "workspace": plan.sweep.placement.workspace,
        "group": {"name": group_name(plan.sweep), "url": plan.group or None}
        if plan.sweep.placement.group
        else None,
        "counts": {word.replace(" ", "_"): plan.counts[s] for s, word in STATUS_WORDS.items()},
        "cap": None if plan.cap is None else dataclasses.asdict(plan.cap),
        "points": [
            {
                "status": row.status,
                "experiment": row.name,
                "key": row.key,
                "params": dict(row.params),
                "derived": dict(row.rendered.derived) if row.rendered else {},
                "spec_hash": row.rendered.spec_hash if row.rendered else None,
                "url": row.entry.url if row.entry else None,
                "note": note(row),
            }
            for row in plan.rows
        ],
    }
