"""The plan as a terminal table, GitHub markdown (PR comment, job summary) or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from runner.plan import DRIFTED, STATUS_WORDS, Row, SweepPlan
from runner.report.tables import params_text, simple_table, tabulate

MARKDOWN_LIMIT = 60_000
"""GitHub caps a comment at 65 536 characters; stay clear of it."""
MARKDOWN_ROWS = 200
"""Rows shown per sweep before the rest is summarised."""
COMMENT_MARKER = "<!-- beaker-sweep-runner:plan -->"
MARKDOWN_CHANGES = 20
"""Changed fields shown per drifted point in markdown."""
MARKDOWN_DRIFT_LINES = 300
"""Lines of drift detail shown per sweep in markdown; the JSON plan has them all."""


def _cells(row: Row) -> list[str]:
    return [row.status, row.name, row.key[:12], params_text(row.params)]


def _summary(plan: SweepPlan, planned: bool) -> str:
    if planned:
        return plan.summary()
    return f"{len(plan.rows)} point(s), not compared with the ledger (add --plan for that)"


HEADERS = ["", "experiment", "key", "params"]


def drift_lines(row: Row, limit: int | None = None) -> list[str]:
    """What changed in a `~` row, Terraform style: `~ tasks[0].image.beaker: "a" -> "b"`."""
    lines = [str(change) for change in row.changes] or [f"({row.note})"]
    if limit is not None and len(lines) > limit:
        lines = [*lines[:limit], f"…and {len(lines) - limit} more changes"]
    return lines


def _drift_block(plan: SweepPlan, limit: int | None = None) -> list[str]:
    out = []
    for row in plan.rows:
        if row.status == DRIFTED:
            out.append(f"~ {row.name}")
            out += [f"    {line}" for line in drift_lines(row, limit)]
    return out


def table(plans: Sequence[SweepPlan], planned: bool = True) -> str:
    """The plan per sweep; `planned=False` (expand without --plan): the points, no statuses."""
    blocks = []
    for plan in plans:
        title = f"{plan.sweep.name} ({plan.sweep.path})"
        if planned:
            body = simple_table([_cells(r) for r in plan.rows], HEADERS)
        else:
            body = simple_table([_cells(r)[1:] for r in plan.rows], HEADERS[1:])
        drifted = _drift_block(plan)
        details = (
            "\n".join(["", "Drift (what changed since submission):", *drifted]) if drifted else ""
        )
        blocks.append(f"{title}\n{body}{details}\n{_summary(plan, planned)}")
    return "\n\n".join(blocks)


def _headline(plans: Sequence[SweepPlan], planned: bool) -> str:
    if not planned:
        points = sum(len(p.rows) for p in plans)
        return f"**{points}** point(s) across {len(plans)} sweep(s), not compared with the ledgers."
    live = [p for p in plans if not p.sweep.draft]
    total = {s: sum(p.counts[s] for p in live) for s in STATUS_WORDS}
    headline = ", ".join(f"**{total[s]}** {word}" for s, word in STATUS_WORDS.items())
    headline += f" across {len(live)} sweep(s)."
    drafts = len(plans) - len(live)
    if drafts:
        headline += f" {drafts} draft sweep(s) shown below submit nothing."
    return headline


def markdown(plans: Sequence[SweepPlan], heading: str = "Sweep plan", planned: bool = True) -> str:
    """One document for all sweeps, kept under GitHub's comment size by summarising big tables."""
    parts = [COMMENT_MARKER, f"## {heading}", "", _headline(plans, planned)]
    first = 0 if planned else 1  # without a plan there is no status column
    for plan in plans:
        summary = _summary(plan, planned)
        parts += ["", f"### `{plan.sweep.name}` — `{plan.sweep.path}`", "", summary, ""]
        rows = [r for r in plan.rows if r.status != "="] + [r for r in plan.rows if r.status == "="]
        shown = rows[:MARKDOWN_ROWS]
        cells = [
            [f"`{c}`" if i < 3 and c else c for i, c in enumerate(_cells(r))][first:] for r in shown
        ]
        parts.append(tabulate(cells, headers=HEADERS[first:], tablefmt="github"))
        if len(rows) > len(shown):
            parts.append(
                f"\n…and {len(rows) - len(shown)} more points (see the JSON plan for all)."
            )
        drifted = _drift_block(plan, MARKDOWN_CHANGES)
        if drifted:
            shown_drift = drifted[:MARKDOWN_DRIFT_LINES]
            if len(drifted) > len(shown_drift):
                shown_drift.append(f"…and {len(drifted) - len(shown_drift)} more lines")
            parts += ["", "<details><summary>What drifted</summary>", "", "```diff"]
            parts += [*shown_drift, "```", "", "</details>"]
    text = "\n".join(parts) + "\n"
    if len(text) > MARKDOWN_LIMIT:
        short = [*parts[:4], ""] + [f"- `{p.sweep.name}`: {_summary(p, planned)}" for p in plans]
        short.append(
            "\nThe full table is too large for a comment; run `python -m runner expand --plan`."
        )
        text = "\n".join(short)[:MARKDOWN_LIMIT] + "\n"
    return text


def as_json(plans: Sequence[SweepPlan], planned: bool = True) -> str:
    """The plan as JSON; `planned=False`: the points without statuses or counts."""
    sweeps = [_plan_json(p) for p in plans]
    if not planned:
        for sweep in sweeps:
            del sweep["counts"]
            for point in sweep["points"]:
                for key in ("status", "url", "changes", "drift_note"):
                    del point[key]
    return json.dumps({"sweeps": sweeps}, indent=2, ensure_ascii=False) + "\n"


def _plan_json(plan: SweepPlan) -> dict[str, Any]:
    return {
        "name": plan.sweep.name,
        "path": str(plan.sweep.path),
        "draft": plan.sweep.draft,
        "workspace": plan.sweep.placement.workspace,
        "counts": {word.replace(" ", "_"): plan.counts[s] for s, word in STATUS_WORDS.items()},
        "points": [
            {
                "status": row.status,
                "experiment": row.name,
                "key": row.key,
                "params": dict(row.params),
                "derived": dict(row.rendered.derived) if row.rendered else {},
                "spec_hash": row.rendered.spec_hash if row.rendered else None,
                "url": row.entry.url if row.entry else None,
                "changes": [
                    {"field": c.field, "before": c.before, "after": c.after} for c in row.changes
                ],
                "drift_note": row.note,
            }
            for row in plan.rows
        ],
    }
