"""The plan as a terminal table, GitHub markdown (PR comment, job summary) or JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from runner.backends import group_name
from runner.core.invoked import invoked
from runner.core.values import StrEnum, Value, identity
from runner.plan import COMMENT_MARKER, STATUS_WORDS, PlanStatus, Row, SweepPlan, cost
from runner.report import cost as priced
from runner.report.envelope import envelope_json, envelope_line
from runner.report.tables import params_text, simple_table, tabulate
from runner.report.where import clusters_json, linked_group, where_lines

MARKDOWN_LIMIT = 60_000
"""GitHub caps a comment at 65 536 characters; stay clear of it."""
MARKDOWN_ROWS = 200
"""Rows shown per sweep before the rest is summarised."""
MARKDOWN_CHANGES = 20
"""Changed fields shown per drifted point in markdown."""
MARKDOWN_DRIFT_LINES = 300
"""Lines of drift detail shown per sweep in markdown; the JSON plan has them all."""


class View(StrEnum):
    """What a plan report shows: the plan (each point's status against its ledger), or only
    the points (`expand` without --plan: no statuses, counts, costs or groups)."""

    PLAN = "plan"
    POINTS = "points"

    @property
    def compared(self) -> bool:
        """Whether the points were compared with the ledgers."""
        return self is View.PLAN


def _cells(row: Row) -> list[str]:
    return [row.status, row.name, row.key[:12], params_text(row.params)]


def _summary(plan: SweepPlan, view: View) -> str:
    if view.compared:
        ladder = plan.sweep.space.ladder
        halving = priced.halving_line(cost.halving_cost(plan), ladder.param) if ladder else ""
        lines = [priced.sweep_line(cost.plan_cost(plan).total), halving, envelope_line(plan)]
        return plan.summary() + "".join(f"\n{line}" for line in lines if line)
    return f"{len(plan.rows)} point(s), not compared with the ledger (add --plan for that)"


HEADERS = ["", "experiment", "key", "params"]


def note(row: Row, enqueued: Sequence[Sequence[tuple[str, Value]]] = ()) -> str:
    """What else a row says: a known point (`enqueued`: the sweep's), why a `+` waits, and
    what was done to its experiment since."""
    params = {n: identity(v) for n, v in row.params}
    known = any(all(params.get(n) == identity(v) for n, v in point) for point in enqueued)
    notes = ["(enqueued)"] if known else []
    notes += [row.hold.text] if row.hold else []
    if row.entry is not None and row.entry.restarts:
        notes.append(f"restarted {row.entry.restarts}x (last {row.entry.restarted_at})")
    if row.entry is not None and row.entry.canceled:
        notes.append(f"canceled {row.entry.canceled}")
    return "; ".join(notes)


def _with_notes(plan: SweepPlan, rows: Sequence[Row]) -> tuple[list[list[str]], list[str]]:
    """Cells and headers, with a note column only when some row of the plan has a note, and
    resources and GPU-hours columns only when some `+` row uses GPUs."""
    cells, headers = [_cells(r) for r in rows], HEADERS
    costs = cost.plan_cost(plan)
    if costs.total.uses_gpus:
        rows_cost = [priced.row_cells(costs.rows.get(r.key)) for r in rows]
        cells = [[*c, *extra] for c, extra in zip(cells, rows_cost, strict=True)]
        headers = [*headers, "resources (image)", "GPU-h up to"]
    known = plan.sweep.space.enqueued
    notes = [note(r, known) for r in plan.rows]
    if not any(notes):
        return cells, headers
    return [[*c, note(r, known)] for c, r in zip(cells, rows, strict=True)], [*headers, "note"]


def drift_lines(row: Row, limit: int | None = None) -> list[str]:
    """What changed in a `~` row, Terraform style: `~ tasks[0].image.beaker: "a" -> "b"`."""
    lines = [str(change) for change in row.changes] or [f"({row.note})"]
    if limit is not None and len(lines) > limit:
        lines = [*lines[:limit], f"…and {len(lines) - limit} more changes"]
    return lines


def _drift_block(plan: SweepPlan, limit: int | None = None) -> list[str]:
    out = []
    for row in plan.rows:
        if row.status == PlanStatus.DRIFTED:
            out.append(f"~ {row.name}")
            out += [f"    {line}" for line in drift_lines(row, limit)]
    return out


def table(plans: Sequence[SweepPlan], view: View = View.PLAN) -> str:
    """The plan per sweep, or (`View.POINTS`) the points without statuses."""
    blocks = []
    for plan in plans:
        title = f"{plan.sweep.name} ({plan.sweep.path})"
        if view.compared:
            body = simple_table(*_with_notes(plan, plan.rows))
        else:
            body = simple_table([_cells(r)[1:] for r in plan.rows], HEADERS[1:])
        drifted = _drift_block(plan)
        details = (
            "\n".join(["", "Drift (what changed since submission):", *drifted]) if drifted else ""
        )
        lines = where_lines(plan) if view.compared else ()
        extra = [line for line in lines if line]
        blocks.append(
            f"{title}\n{body}{details}\n{_summary(plan, view)}"
            + "".join(f"\n{line}" for line in extra)
        )
    return "\n\n".join(blocks)


def _headline(plans: Sequence[SweepPlan], view: View) -> str:
    if not view.compared:
        points = sum(len(p.rows) for p in plans)
        return f"**{points}** point(s) across {len(plans)} sweep(s), not compared with the ledgers."
    live = [p for p in plans if not p.sweep.draft]
    total = {s: sum(p.counts[s] for p in live) for s in STATUS_WORDS}
    headline = ", ".join(f"**{total[s]}** {word}" for s, word in STATUS_WORDS.items())
    headline += f" across {len(live)} sweep(s)."
    drafts = len(plans) - len(live)
    if drafts:
        headline += f" {drafts} draft sweep(s) shown below submit nothing."
    spent = cost.merge_total([cost.plan_cost(p) for p in plans])
    if spent.uses_gpus:
        headline += "\n\n" + priced.headline(spent)
    return headline


def full_plan() -> str:
    """Where a plan's every point can be read, naming the command that was run."""
    return f"`{invoked()} expand --plan --format json` lists them all"


FOLD_ROWS = 50
"""Past this many rows in a document, each sweep's table is folded under its summary."""


def markdown(
    plans: Sequence[SweepPlan],
    heading: str = "Sweep plan",
    view: View = View.PLAN,
    limit: int = MARKDOWN_LIMIT,
    rows: int | None = MARKDOWN_ROWS,
    elsewhere: str | None = None,
) -> str:
    """One document for all sweeps, within `limit` characters (UTF-16 code units, as GitHub and
    JavaScript count): a summary per sweep, and its table of at most `rows` rows (None: all),
    folded when the document is long; tables are cut to the rows that fit, then sweeps past the
    room are counted in one line. `elsewhere` says where the rest can be read (`full_plan`)."""
    elsewhere = elsewhere or full_plan()
    head = "\n".join([COMMENT_MARKER, f"## {heading}", "", _headline(plans, view)]) + "\n"
    sections = [_section(plan, view) for plan in plans]
    tables = [_table_lines(plan, view, rows) for plan in plans]
    drifts = [_drift_block(plan, MARKDOWN_CHANGES) for plan in plans]
    fold = sum(len(t) for t in tables) > FOLD_ROWS
    note = size(f"\n…and 1000000 more points: {elsewhere}.\n")
    base = note + 80  # a table cut to no row: its "…and N more points" line
    room = limit - size(head) - 200
    shown = 0
    while shown < len(plans) and size(sections[shown]) + base < room - 100:
        room -= size(sections[shown]) + base
        shown += 1
    room += shown * base
    cap = _rows_that_fit(list(zip(tables[:shown], drifts, strict=False)), room, note)
    parts = [head]
    for section, lines, drifted in zip(sections[:shown], tables, drifts, strict=False):
        parts.append(section + _cut(lines, drifted, cap, fold, elsewhere))
    if shown < len(plans):
        rest = plans[shown:]
        parts.append(
            f"\n…and {len(rest)} more sweep(s) with {sum(len(p.rows) for p in rest)} points:"
            f" {elsewhere}.\n"
        )
    return "".join(parts)


def size(text: str) -> int:
    """Characters as GitHub's comment limit and JavaScript's `length` count them."""
    return len(text.encode("utf-16-le")) // 2


def _section(plan: SweepPlan, view: View) -> str:
    lines = ["", f"### `{plan.sweep.name}` — `{plan.sweep.path}`", "", _summary(plan, view), ""]
    for line in where_lines(plan, linked_group) if view.compared else ():
        if line:
            lines += [line, ""]
    return "\n".join(lines) + "\n"


def _table_lines(plan: SweepPlan, view: View, limit: int | None) -> list[str]:
    """The sweep's table rows (not yet submitted first) as markdown lines, the header first."""
    first = 0 if view.compared else 1  # without a plan there is no status column
    rows = [r for r in plan.rows if r.status != PlanStatus.SUBMITTED] + [
        r for r in plan.rows if r.status == PlanStatus.SUBMITTED
    ]
    shown = rows[:limit]
    plain, headers = (
        _with_notes(plan, shown) if view.compared else ([_cells(r) for r in shown], HEADERS)
    )
    cells = [[f"`{c}`" if i < 3 and c else c for i, c in enumerate(row)][first:] for row in plain]
    lines = tabulate(cells, headers=headers[first:], tablefmt="github").splitlines()
    return lines + [""] * (len(rows) - len(shown))  # rows left out, counted by _cut


def _rows_that_fit(tables: Sequence[tuple[list[str], list[str]]], room: int, note: int) -> int:
    """The most rows per table (and 4 drift lines per row) that keep every table, cut to that
    many, within `room`; `note`: the size of a table's "…and N more points" line."""

    def total(cap: int) -> int:
        return sum(
            sum(size(line) + 1 for line in lines[: 2 + cap] if line)
            + sum(size(line) + 1 for line in drifted[: min(MARKDOWN_DRIFT_LINES, 4 * cap) + 1])
            + (120 if drifted else 0)  # its fold
            + note
            + 80  # the table's fold
            for lines, drifted in tables
        )

    low, high = 0, max((len(t) for t, _ in tables), default=0)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if total(middle) <= room else (low, middle - 1)
    return low


def _cut(lines: list[str], drifted: list[str], cap: int, fold: bool, elsewhere: str) -> str:
    """A sweep's table cut to `cap` rows with its drift, folded or not."""
    body = [line for line in lines[: 2 + cap] if line] if cap else []
    more = len(lines) - 2 - len(body[2:])
    parts = ["\n".join(body)] if body else []
    if more:
        parts.append(f"\n…and {more} more points: {elsewhere}.")
    if drifted and cap:
        shown = drifted[: min(MARKDOWN_DRIFT_LINES, 4 * cap)]
        if len(drifted) > len(shown):
            shown.append(f"…and {len(drifted) - len(shown)} more lines")
        parts += ["", "<details><summary>What drifted</summary>", "", "```diff"]
        parts += [*shown, "```", "", "</details>"]
    text = "\n".join(parts)
    if fold and body:
        count = len(lines) - 2
        return f"<details><summary>{count} point(s)</summary>\n\n{text}\n\n</details>\n"
    return text + "\n" if text else ""


def as_json(plans: Sequence[SweepPlan], view: View = View.PLAN) -> str:
    """The plan as JSON; `View.POINTS`: the points without statuses or counts."""
    sweeps = [_plan_json(p) for p in plans]
    merge = priced.as_json(cost.merge_total([cost.plan_cost(p) for p in plans]))
    if not view.compared:
        for sweep in sweeps:
            del sweep["counts"]
            for point in sweep["points"]:
                for key in ("status", "url", "changes", "drift_note"):
                    del point[key]
    document = {"sweeps": sweeps, "gpu_hours": merge} if view.compared else {"sweeps": sweeps}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _plan_json(plan: SweepPlan) -> dict[str, Any]:
    costs = cost.plan_cost(plan)
    return {
        "name": plan.sweep.name,
        "path": str(plan.sweep.path),
        "draft": plan.sweep.draft,
        "workspace": plan.sweep.placement.workspace,
        "clusters": clusters_json(plan),
        "group": {"name": group_name(plan.sweep), "url": plan.group or None}
        if plan.sweep.placement.group
        else None,
        "counts": {word.replace(" ", "_"): plan.counts[s] for s, word in STATUS_WORDS.items()},
        "cap": None
        if plan.cap is None
        else {**dataclasses.asdict(plan.cap), "waiting": plan.waiting},
        "gpu_hours": priced.as_json(costs.total),
        "halving": priced.halving_json(cost.halving_cost(plan)),
        "envelope": envelope_json(plan),
        "points": [
            {
                "status": row.status,
                "experiment": row.name,
                "key": row.key,
                "params": dict(row.params),
                "derived": dict(row.rendered.derived) if row.rendered else {},
                "spec_hash": row.rendered.spec_hash if row.rendered else None,
                "url": row.entry.url if row.entry else None,
                "note": note(row, plan.sweep.space.enqueued),
                "changes": [
                    {"field": c.field, "before": c.before, "after": c.after} for c in row.changes
                ],
                "drift_note": row.note,
                "cost": priced.point_json(costs.rows.get(row.key)),
            }
            for row in plan.rows
        ],
    }


# -- size caps and the pull request's view ----------------------------------------------------

SUMMARY_LIMIT = 900_000
"""GitHub refuses a step's job summary over 1 MiB; stay clear of it."""


def truncate_lines(text: str, limit: int, note: str) -> str:
    """`text` cut at a line boundary so that it and `note` fit in `limit` characters.

    `note` may say `{lines}`: how many lines were left out.
    """
    if len(text) <= limit:
        return text
    room = max(0, limit - len(note) - 32)
    cut = text.rfind("\n", 0, room) + 1
    dropped = text[cut:].count("\n") + (0 if text.endswith("\n") else 1)
    return text[:cut] + "\n" + note.format(lines=dropped) + "\n"
