"""What a plan costs, as text: `runner.plan.cost`'s GPU-hours in the plan's tables, its
comment's headline and its JSON."""

from __future__ import annotations

from typing import Any

from runner.core.ladder import SECOND
from runner.plan.cost import UNBOUNDED, Cost, HalvingCost, RungCost, number
from runner.render.durations import elapsed_text


def up_to_text(cost: Cost) -> str:
    return UNBOUNDED if cost.unbounded else number(cost.up_to)


def headline(cost: Cost) -> str:
    """'This merge may use up to 2 304 GPU-hours; expected 960', loud when unbounded."""
    if not cost.uses_gpus:
        return "This merge uses no GPUs."
    if cost.unbounded:
        return (
            f"**This merge has no upper bound on GPU-hours: {cost.unbounded} point(s) have GPUs"
            f" and no `timeout`** (add `beaker.timeout`); the rest may use up to"
            f" {number(cost.up_to)}, expected {number(cost.expected)}."
        )
    return (
        f"This merge may use up to **{number(cost.up_to)}** GPU-hours;"
        f" expected {number(cost.expected)}."
    )


def sweep_line(cost: Cost) -> str:
    """The sweep's line under its table: empty for a sweep without GPUs."""
    if not cost.uses_gpus:
        return ""
    text = f"GPU-hours of the {cost.points} point(s) to submit: up to {up_to_text(cost)}"
    text += f", expected {number(cost.expected)}"
    if cost.unbounded:
        text += f" (UNBOUNDED: {cost.unbounded} point(s) with GPUs and no timeout)"
    return text


def row_cells(cost: Cost | None) -> list[str]:
    """The resources and GPU-hours cells of a row (empty for rows not to submit)."""
    if cost is None:
        return ["", ""]
    return [f"{cost.resources} ({cost.image})", up_to_text(cost) if cost.gpus else "0"]


def as_json(cost: Cost) -> dict[str, Any]:
    return {
        "up_to": None if cost.unbounded else round(cost.up_to, 3),
        "expected": round(cost.expected, 3),
        "gpus": cost.gpus,
        "unbounded": cost.unbounded,
        "points": cost.points,
    }


def point_json(cost: Cost | None) -> dict[str, Any] | None:
    """A point's cost in the JSON plan, with what it runs on; None for a point not to submit."""
    if cost is None:
        return None
    return {**as_json(cost), "resources": cost.resources, "image": cost.image}


def halving_line(halving: HalvingCost | None, param: str) -> str:
    """A successive halving's GPU-hours expected, rung by rung (those to come projected), with
    each rung's timeout as its specs carry it, and the whole search against its configurations
    at full length; empty without one."""
    if halving is None:
        return ""
    whole, full = halving.total.expected, halving.full.expected
    rungs = "; ".join(
        f"rung {r.rung} ({param}={r.value}{_timeout_text(r)}{', projected' if r.projected else ''}):"
        f" {r.cost.points} point(s)" + (f", {number(r.cost.expected)}" if full else "")
        for r in halving.rungs
    )
    unbounded = (
        " No rung has a timeout (no beaker.timeout): each may run, and spend, without bound."
        if all(r.timeout is None for r in halving.rungs)
        else ""
    )
    if not full:
        return (
            f"Successive halving: {rungs}. No GPU-hours to compare: the sweep declares neither"
            " beaker.timeout nor beaker.expected_runtime."
        )
    return (
        f"Successive halving, GPU-hours expected: {rungs}. The whole search: {number(whole)},"
        f" {whole / full:.0%} of the full grid's {number(full)} ({halving.full.points}"
        f" configuration(s) at {param}={halving.rungs[-1].value}).{unbounded}"
    )


def _timeout_text(rung: RungCost) -> str:
    return "" if rung.timeout is None else f", timeout {elapsed_text(rung.timeout / SECOND)}"


def halving_json(halving: HalvingCost | None) -> dict[str, Any] | None:
    if halving is None:
        return None
    return {
        "rungs": [
            {
                "rung": r.rung,
                "value": r.value,
                "projected": r.projected,
                "timeout_seconds": None if r.timeout is None else r.timeout // SECOND,
                **as_json(r.cost),
            }
            for r in halving.rungs
        ],
        "total": as_json(halving.total),
        "full": as_json(halving.full),
    }
