"""A successive halving's step as text: the line `propose` prints for it, and a promoted rung as
its pull request (the rung before as a table, each point's value, rank, the cut-off and whether
it goes on; then the new rung's points with their parents and GPU-hours)."""

from __future__ import annotations

from collections.abc import Sequence

from runner.core.sample import row_identity
from runner.plan.cost import number
from runner.search import rungs
from runner.search.points import Result, Told
from runner.search.rounds import Next, Round, RoundVerdict
from runner.search.rungs import SuccessiveHalving

SHOWN = 5
"""Experiments a waiting line names before it counts the rest."""


def rung_line(shown: str, halving: SuccessiveHalving, step: Next) -> str:
    """What `propose` did for one successive halving, in one line."""
    ladder, metric = halving.ladder, halving.aim.metric
    at = f"{ladder.param}={ladder.values[step.number]}"
    if step.verdict is RoundVerdict.PROPOSED and not step.new:
        return (
            f"{shown}: the lock's rungs belonged to another params.fidelity or rung 0: dropped"
            f" them; the halving starts again from rung 0 ({step.ended} of"
            f" {len(step.previous)} point(s) ended)"
        )
    if step.verdict is RoundVerdict.PROPOSED:
        return (
            f"{shown}: rung {step.number} ({at}): promoted {len(step.new)} of"
            f" {len(step.previous)} point(s) of rung {step.number - 1}"
        )
    if step.verdict is RoundVerdict.WAITING:
        return (
            f"{shown}: rung {step.number} has {step.ended} of {len(step.previous)} point(s)"
            f" ended: the next rung waits for {_waited(step.previous)}"
        )
    if step.verdict is RoundVerdict.STOPPED:
        return f"{shown}: the halving {step.stop}: no rung proposed"
    if step.verdict is RoundVerdict.EXHAUSTED:
        return f"{shown}: no point of rung {step.number} finished with {metric}: none to promote"
    best = step.best
    found = f"; best {metric} {best.value:g} at {best.name}" if best else ""
    return f"{shown}: halving complete: rung {step.number} ({at}) is the last{found}"


def _waited(told: Sequence[Told]) -> str:
    """The points not ended yet: the experiments running by name, the rest counted."""
    pending = [t for t in told if t.result == Result.PENDING]
    running = [t.name for t in pending if t.name]
    named = ", ".join(running[:SHOWN]) + (
        f" and {len(running) - SHOWN} more" if len(running) > SHOWN else ""
    )
    unsent = len(pending) - len(running)
    parts = [named] if named else []
    parts += [f"{unsent} point(s) not submitted yet"] if unsent else []
    return " and ".join(parts)


def rung_pull_request(round_: Round) -> tuple[str, str, str]:
    """A successive halving's rung as its pull request: the branch, the title and the body."""
    halving, step, name = rungs.halving_of(round_.sweep), round_.step, round_.sweep.name
    if halving is None:
        raise ValueError(f"{name} does not halve")
    ladder = halving.ladder
    branch = f"sweep-propose/{name}-{halving.of[:12]}-rung-{step.number}"
    if step.new:
        at = f"{ladder.param}={ladder.values[step.number]}"
        title = f"Propose rung {step.number} of {name} ({len(step.new)} point(s), {at})"
        body = (
            _promoted(round_, halving)
            + "\n"
            + _rung_table(halving, step)
            + _new_table(round_, halving)
        )
    else:
        title = f"Reset the rungs of {name}"
        body = (
            f"The lock's rungs of `{name}` belonged to another `params.fidelity` or"
            " another rung 0 (a configuration added or taken away): merging this drops them,"
            " so their points show as orphans (`-`, never canceled) and rung 0 is promoted"
            " again once it has finished.\n"
        )
    return branch, title, body


def _promoted(round_: Round, halving: SuccessiveHalving) -> str:
    step, ladder, aim = round_.step, halving.ladder, halving.aim
    n, k = len(step.previous), step.number
    value, full = ladder.values[k], ladder.values[-1]
    return (
        f"Rung {k} of the successive halving `{round_.sweep.name}`, promoted by `sweep-runner"
        f" propose` from rung {k - 1}'s results: the best max(1, {n} // {ladder.eta}) ="
        f" {halving.kept(n)} of its {n} point(s) by `{aim.metric}` ({aim.goal}), each"
        f" run again at {ladder.param}={value} ({value}/{full} of the full length). Merging"
        " it submits them through the usual plan; closing it unmerged stops the halving until"
        " Propose is dispatched or the manifest is edited.\n"
    )


def _rung_table(halving: SuccessiveHalving, step: Next) -> str:
    """The rung before: each point ranked, with its value and whether it goes on; the cut-off."""
    ladder, metric, k = halving.ladder, halving.aim.metric, step.number - 1
    promoted = {row_identity(row) for row in step.new}
    names = halving.names
    head = ["rank", "experiment", *names, metric, "promoted"]
    lines = [f"Rung {k} ({ladder.param}={ladder.values[k]}):", "", _row(head)]
    lines.append("|" + "---|" * len(head))
    ranked = rungs.ranked(halving, step.previous)
    for i, t in enumerate(ranked, 1):
        on = "**yes**" if row_identity(t.row) in promoted else "no"
        cells = [
            str(i),
            f"`{t.name}`" if t.name else "",
            *map(param_cell, t.row),
            result_cell(t),
            on,
        ]
        lines.append(_row(cells))
    went = [t for t in ranked if row_identity(t.row) in promoted]
    failed = sum(t.result != Result.DONE for t in ranked)
    cut = f"{went[-1].value:g}" if went and went[-1].value is not None else "none"
    lines += [
        "",
        f"The cut-off: the top {len(went)} of {len(ranked)} go on (max(1, floor(n / eta)) ="
        f" {halving.kept(len(ranked))}); the last of them has {metric} {cut}."
        + (f" {failed} point(s) ended without it and rank last." if failed else ""),
        "",
    ]
    return "\n".join(lines) + "\n"


def _new_table(round_: Round, halving: SuccessiveHalving) -> str:
    """The new rung's points: their configuration, budget, parent and GPU-hours."""
    step, hours, ladder = round_.step, round_.hours, halving.ladder
    value = ladder.values[step.number]
    parents = {row_identity(t.row): t.name for t in step.previous}
    priced = len(hours) == len(step.new)
    head = [*halving.names, ladder.param, "parent", *(["GPU-h expected"] * priced)]
    lines = [_row(head), "|" + "---|" * len(head)]
    for i, row in enumerate(step.new):
        parent = parents.get(row_identity(row), "")
        cells = [*map(param_cell, row), str(value), f"`{parent}`" if parent else ""]
        lines.append(_row(cells + ([_hours(hours[i])] if priced else [])))
    known = [h for h in hours if h is not None]
    total = (
        f", {number(sum(known))} GPU-hours expected in all"
        if priced and len(known) == len(hours)
        else ""
    )
    lead = f"Rung {step.number} ({ladder.param}={value}): {len(step.new)} point(s){total}:"
    return "\n".join([lead, "", *lines]) + "\n"


def _hours(hours: float | None) -> str:
    return "unbounded" if hours is None else number(hours)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def param_cell(value: object) -> str:
    """A parameter's cell (of a rung's or a round's table); empty where a conditional
    parameter is absent from the point."""
    return "" if value is None else f"`{value}`"


def result_cell(told: Told) -> str:
    """A told point's value cell: its value, else why it has none (failed, canceled or ended
    without the metric: no value; still going: not finished)."""
    if told.result == Result.DONE and told.value is not None:
        return f"{told.value:g}"
    return "no value" if told.result == Result.FAILED else "not finished"
