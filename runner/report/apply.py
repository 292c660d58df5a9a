"""What a submit shows of its apply step (`runner.apply.Applied`) on stderr, as lines of text."""

from __future__ import annotations

from runner.apply import Applied
from runner.operate import RestartVerdict
from runner.operate.preempted import Resume, ResumeVerdict
from runner.plan import Held
from runner.report import plan
from runner.report.held import held_counts, held_line, held_markdown
from runner.report.rounds import auto_label, auto_line
from runner.report.submission import (
    counts_line,
    failures_table,
    stop_line,
    submit_summary,
    summary_json,
)
from runner.submit import OutcomeStatus, Stop, StopKind

VERBS = {
    RestartVerdict.RESTARTED: "restart",
    RestartVerdict.SKIPPED: "skip",
    RestartVerdict.FAILED: "fail",
}
"""What a dry run says it would do to a point, by verdict."""

WOULD = {
    ResumeVerdict.RESUMED: "would resume",
    ResumeVerdict.COUNTED: "would count",
    ResumeVerdict.WAITING: "would wait",
    ResumeVerdict.CAPPED: "would leave",
}
"""What a dry run says it would do to a point the platform ended, by verdict."""


def resume_lines(resumes: tuple[Resume, ...]) -> list[str]:
    """One line per point the platform ended (what was done to it), then the counts; nothing
    when there was none."""
    return _resumes(resumes, {v: str(v) for v in ResumeVerdict}, "Resume: ")


def would_resume_lines(resumes: tuple[Resume, ...]) -> list[str]:
    """A dry run's: what it would do to each point the platform ended, then the counts."""
    verbs = {v: WOULD.get(v, str(v)) for v in ResumeVerdict}
    return _resumes(resumes, verbs, "Resume (dry run, nothing resumed): ")


def _resumes(resumes: tuple[Resume, ...], verb: dict[ResumeVerdict, str], head: str) -> list[str]:
    if not resumes:
        return []
    lines = [
        f"{verb[r.verdict]} {r.sweep}/{r.name}: {r.detail} (preemptions: {r.preemptions})"
        for r in resumes
    ]
    counts = {v: sum(r.verdict == v for r in resumes) for v in ResumeVerdict}
    said = ", ".join(f"{n} {verb[v]}" for v, n in counts.items() if n)
    return [*lines, head + said]


def planned_lines(applied: Applied) -> list[str]:
    """Before anything is created: the automatic rounds, the resumes and the restarts (done, or
    those a dry run would do) and the points held back by plan pins."""
    lines = [auto_line(done) for done in applied.rounds]
    lines += resume_lines(applied.resumes) + would_resume_lines(applied.would_resume)
    if applied.restarts is not None:
        done = applied.restarts
        lines += [
            f"{r.status} {r.sweep}/{r.name}: {r.detail} (restarts: {r.restarts})" for r in done
        ]
        counts = {v: sum(1 for r in done if r.status == v) for v in RestartVerdict}
        lines.append("Restart: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    if applied.would_restart is not None:
        found = applied.would_restart
        for c in found:
            restarts = c.row.entry.restarts if c.row.entry else 0
            lines.append(
                f"would {VERBS[c.verdict]} {c.plan.sweep.name}/{c.row.experiment}: {c.detail}"
                f" (restarts: {restarts})"
            )
        counts = {v: sum(1 for c in found if c.verdict == v) for v in VERBS}
        lines.append(
            "Restart (dry run, nothing restarted): "
            + ", ".join(f"{n} would {VERBS[v]}" for v, n in counts.items())
        )
    lines += [f"{held_line(held)} (see the summary)" for held in holds(applied)]
    lines += [
        f"{s}: {reason}; no new points are created (none is canceled)"
        for s, reason in stops(applied)
    ]
    return lines


def rounds(applied: Applied) -> list[str]:
    """The automatic rounds written, as the ledger commit names them."""
    return [auto_label(done) for done in applied.advanced]


def holds(applied: Applied) -> list[Held]:
    """The holds that held points back for good (plan pins, the budget)."""
    return [h for h in (applied.review, applied.over_budget) if h is not None and h.held]


def stops(applied: Applied) -> list[tuple[str, str]]:
    """The sweeps a guardrail stopped (max_failures, stop_when), with the reason."""
    return [(p.sweep.name, p.stopped) for p in applied.plans if p.stopped]


def result_lines(applied: Applied) -> list[str]:
    """After the run: the counts, duplicates, the points not submitted and why."""
    outcomes, stop = applied.outcomes, applied.stop
    lines = [counts_line(outcomes), *applied.announced.warnings]
    lines += [f"warning: {duplicate.text()}" for duplicate in applied.duplicates]
    bad = [o for o in outcomes if not o.status.submitted]
    # Never started because the run stopped: the stop line below says why; otherwise each its own
    # (a local sweep canceled while its submit ran).
    listed = [o for o in bad if o.status != OutcomeStatus.NOT_STARTED or stop is None]
    if listed:
        lines.append(failures_table(listed))
    canceled = sum(o.status == OutcomeStatus.CANCELED for o in bad)
    if stop is not None:
        lines.append(stopped(applied))
    elif bad and canceled == len(bad):
        lines.append(
            f"{canceled} point(s) not started: `cancel` canceled their sweep while this submit ran"
            " it; the next submit on this machine starts them"
        )
    elif bad:
        lines.append(f"{len(bad)} point(s) not submitted; run submit again to retry only those")
    return lines


def stopped(applied: Applied) -> str:
    """Why the run stopped early and what it left unsubmitted, in one line; a refusal (exit 4)
    begins `error:`, as the command line says any refusal."""
    stop = applied.stop
    assert stop is not None
    return _said(stop, stop_line(stop, applied.outcomes))


def stopped_dry_run(applied: Applied) -> str:
    """Why a dry run stopped, in one line (it submits nothing anyway)."""
    stop = applied.stop
    assert stop is not None
    return _said(stop, stop.reason)


def _said(stop: Stop, line: str) -> str:
    return f"error: {line}" if stop.kind == StopKind.POLICY else line


TRUNCATED = "…and {lines} more rows: the ledger files list every experiment."


def job_summary(applied: Applied, dry_run: bool) -> str:
    """The whole job summary of a submit, in order: the points held back, the stops, then the
    plan (a dry run) or what was submitted, and the notifications sent."""
    parts = [held_markdown(held) for held in holds(applied)]
    parts += [f"{auto_line(done)}.\n\n" for done in applied.rounds]
    parts += [f"**`{s}` {reason}**: no new points are created.\n" for s, reason in stops(applied)]
    if dry_run:
        if applied.stop is not None:
            parts.append(f"**Stopped: {stopped_dry_run(applied)}**\n\n")
        return "".join(parts) + plan.markdown(applied.plans, heading="Sweep plan (dry run)")
    waiting, held = held_counts(applied.plans)
    done = submit_summary(
        applied.outcomes, applied.stop, applied.duplicates, applied.groups, waiting, held
    )
    parts.append(plan.truncate_lines(done, plan.SUMMARY_LIMIT, TRUNCATED))
    return "".join(parts) + applied.announced.summary()


def warnings(applied: Applied) -> list[str]:
    """What a workflow run shows as warning annotations: the points held back."""
    return [held_line(held) for held in holds(applied)]


def json_summary(applied: Applied) -> str:
    """`submit --summary-json FILE`."""
    outcomes, code = applied.outcomes, applied.exit_code
    return summary_json(outcomes, applied.stop, applied.duplicates, code.result, code)


def outputs(applied: Applied) -> dict[str, str]:
    """The step outputs of a submit in GitHub Actions."""
    submitted = sum(o.status.submitted for o in applied.outcomes)
    left = len(applied.outcomes) - submitted
    return {"result": applied.result, "submitted": str(submitted), "not-submitted": str(left)}
