"""What a submit run did: the job summary, and the table of points it could not submit."""

from __future__ import annotations

from collections.abc import Sequence

from runner.membership import GroupOutcome
from runner.report.tables import tabulate
from runner.submit import ADOPTED, CREATED, Outcome


def submit_summary(outcomes: Sequence[Outcome], groups: Sequence[GroupOutcome] = ()) -> str:
    """The job summary of a submit run: every experiment it created or adopted, with its URL,
    and each sweep's group."""
    lines = ["## Sweep submission", ""]
    for g in groups:
        if g.group is not None:
            lines.append(
                f"- `{g.sweep}`: group [{g.group.name}]({g.group.url}), {g.group.members}"
                f" experiment(s)"
            )
        else:
            lines.append(f"- `{g.sweep}`: {_cell(g.line())}")
    if groups:
        lines.append("")
    if not outcomes:
        lines.append("Nothing to submit: every point of every sweep is already recorded.")
    else:
        lines += ["| sweep | experiment | status | URL or error |", "|---|---|---|---|"]
        for o in outcomes:
            detail = o.experiment.url if o.experiment else o.error
            lines.append(f"| `{o.sweep}` | `{o.point.name}` | {o.status} | {_cell(detail)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def counts_line(outcomes: Sequence[Outcome]) -> str:
    done = sum(o.status in (CREATED, ADOPTED) for o in outcomes)
    created = sum(o.status == CREATED for o in outcomes)
    adopted = sum(o.status == ADOPTED for o in outcomes)
    return f"submitted: {done} of {len(outcomes)} ({created} created, {adopted} adopted)"


def failures_table(bad: Sequence[Outcome]) -> str:
    rows = [[o.sweep, o.point.name, o.status, o.error] for o in bad]
    return tabulate(rows, headers=["sweep", "experiment", "status", "why"])
