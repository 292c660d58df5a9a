"""A proposed round as its pull request: the branch, title and description (the round before's
results, the best point so far, the new points) and the lock's content, as the Propose
workflow's step output carries them."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.apply.rounds import Round
    from runner.manifest.adaptive import Told


def pull_request(round_: Round) -> dict[str, object]:
    """One entry of the step output `rounds`."""
    branch = f"sweep-propose/{round_.sweep}-{round_.digest[:12]}-round-{round_.number}"
    title = f"Propose round {round_.number} of {round_.sweep} ({len(round_.new)} point(s))"
    rows = "".join("| " + " | ".join(_value(v) for v in row) + " |\n" for row in round_.new)
    body = (
        f"Round {round_.number} of the adaptive search `{round_.sweep}`, proposed by"
        f" `sweep-runner propose` from the results so far. Merging it submits these points"
        f" through the usual plan; closing it unmerged stops the search until Propose is"
        f" dispatched or the manifest is edited.\n\n"
        + (f"Best so far: {round_.best}\n\n" if round_.best else "")
        + _previous_table(round_)
        + f"Proposed in round {round_.number}:\n\n"
        + f"| {' | '.join(round_.names)} |\n|"
        + "---|" * len(round_.names)
        + "\n"
        + rows
    )
    return {
        "sweep": round_.sweep,
        "round": round_.number,
        "lock": round_.lock,
        "content": base64.b64encode(round_.text.encode()).decode(),
        "branch": branch,
        "title": title,
        "body": body,
    }


def _previous_table(round_: Round) -> str:
    """The round before's points and results, as a markdown table (empty for round 0)."""
    if not round_.previous:
        return ""
    names = round_.names
    head = f"| {' | '.join(names)} | {round_.metric} |\n|" + "---|" * (len(names) + 1)
    rows = "".join(
        "| " + " | ".join(_value(v) for v in t.row) + f" | {_cell(t)} |\n" for t in round_.previous
    )
    return f"Results of round {round_.number - 1}:\n\n{head}\n{rows}\n"


def _value(value: object) -> str:
    """A parameter's cell; empty where a conditional parameter is absent from the point."""
    return "" if value is None else f"`{value}`"


def _cell(told: Told) -> str:
    from runner.manifest.adaptive import Result

    if told.result == Result.DONE:
        return f"{told.value:g}"
    if told.result == Result.FAILED:  # failed, canceled, or finished without the metric
        return "no value"
    return "not finished"
