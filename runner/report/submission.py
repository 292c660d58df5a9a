"""What a submit run did: the job summary, the lines on stderr, and the JSON summary for scripts."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from runner.operate.membership import GroupOutcome
from runner.report.tables import tabulate
from runner.submit import Duplicate, Outcome, OutcomeStatus, Stop, StopKind

SUMMARY_FORMAT = 1


def submit_summary(
    outcomes: Sequence[Outcome],
    stop: Stop | None = None,
    duplicates: Sequence[Duplicate] = (),
    groups: Sequence[GroupOutcome] = (),
    waiting: int = 0,
    held: int = 0,
) -> str:
    """The job summary of a submit run: every experiment it created or adopted, with its URL,
    and each sweep's group. `waiting`: `+` points left for a later run (max_running, a stop);
    `held`: points held back for good (no reviewed plan showed them, or their sweep is over the
    budget policy and no approved plan did)."""
    lines = ["## Sweep submission", ""]
    if stop is not None:
        lines += [f"**Stopped early: {_cell(stop_line(stop, outcomes))}**", ""]
    for duplicate in duplicates:
        lines += [f"**{_cell(duplicate.text())}**", ""]
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
    if not outcomes and (waiting or held):
        lines.append(
            f"Nothing submitted now: {waiting} point(s) waiting (max_running, or a sweep's stop),"
            f" {held} held back (not in a reviewed plan, or over the budget policy)."
        )
    elif not outcomes:
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
    done = sum(o.status.submitted for o in outcomes)
    created = sum(o.status == OutcomeStatus.CREATED for o in outcomes)
    adopted = sum(o.status == OutcomeStatus.ADOPTED for o in outcomes)
    failed = sum(o.run_failed for o in outcomes)
    ran = f"; {failed} run(s) failed" if failed else ""
    return f"submitted: {done} of {len(outcomes)} ({created} created, {adopted} adopted){ran}"


def stop_line(stop: Stop, outcomes: Sequence[Outcome]) -> str:
    """One line for a run that stopped early, e.g. 'Beaker at https://... unreachable for 3m
    (connection refused): 12 points not submitted; rerun to continue'. A refusal
    (`StopKind.POLICY`) is not continued by a rerun: its reason says what to change."""
    missing = sum(not o.status.submitted for o in outcomes)
    never = sum(o.status == OutcomeStatus.NOT_STARTED for o in outcomes)
    detail = f" ({never} never started)" if 0 < never < missing else ""
    rerun = "" if stop.kind == StopKind.POLICY else "; rerun to continue"
    return f"{stop.reason}: {missing} point(s) not submitted{detail}{rerun}"


def failures_table(bad: Sequence[Outcome]) -> str:
    rows = [[o.sweep, o.point.name, o.status, o.error] for o in bad]
    return tabulate(rows, headers=["sweep", "experiment", "status", "why"])


def summary_json(
    outcomes: Sequence[Outcome],
    stop: Stop | None,
    duplicates: Sequence[Duplicate],
    result: str,
    exit_code: int,
) -> str:
    """`submit --summary-json FILE`: what a script needs to decide what to do next."""
    counts = Counter(o.status for o in outcomes)
    data = {
        "summary": SUMMARY_FORMAT,
        "result": result,
        "exit_code": exit_code,
        "stopped": None if stop is None else {"kind": stop.kind, "reason": stop.reason},
        "counts": dict(sorted(counts.items())),
        "points": [
            {
                "sweep": o.sweep,
                "experiment": o.point.name,
                "key": o.point.key,
                "status": o.status,
                "id": o.experiment.id if o.experiment else None,
                "url": o.experiment.url if o.experiment else None,
                "error": o.error or None,
            }
            for o in outcomes
        ],
        "duplicates": [
            {
                "sweep": d.sweep,
                "experiment": d.name,
                "kept": d.kept.id,
                "others": [e.id for e in d.others],
                "canceled": list(d.canceled),
                "problem": d.problem or None,
            }
            for d in duplicates
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
