"""The plan comment of a pull request, always within GitHub's limits.

GitHub refuses a comment over 65 536 characters (422 Validation Failed) and a job summary over
1 MiB. The comment shows each sweep's summary, its table folded and cut to the rows that fit, the
budget verdict, the pins (one line per sweep, runner/repo/review.py) and the head commit; the job
summary and the run's `sweep-plan` artifact have every point. A team's priority allocation is
named where a sweep's points count against it (decided at submit; the plan has no token).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from runner.core.errors import Problem, RunnerError
from runner.core.invoked import invoked
from runner.plan import COMMENT_MARKER, STATUS_WORDS, PlanStatus, SweepPlan, cost
from runner.plan.allocation import counted
from runner.plan.budget import Verdict
from runner.plan.policy import Policy
from runner.report.plan import MARKDOWN_LIMIT, SUMMARY_LIMIT, markdown, size, truncate_lines

COMMENT_LIMIT = 65_536
"""GitHub refuses longer comments (422 `body is too long (maximum is 65536 characters)`)."""
TAIL_ROOM = 8_000
"""Characters of the budget verdict a comment shows; the job summary has all of it."""
ARTIFACT = "sweep-plan"
"""The name of the Plan job's artifact: the whole plan as markdown and JSON."""
ELSEWHERE = f"every point is in this run's job summary and its `{ARTIFACT}` artifact"


@dataclass(frozen=True)
class Documents:
    comment: str
    """At most COMMENT_LIMIT characters (UTF-16 code units, as GitHub counts)."""
    full: str
    """Every point, for the job summary and the artifact (within SUMMARY_LIMIT)."""


def documents(
    plans: Sequence[SweepPlan], changed: Collection[str] | None, verdict: str, pins: str
) -> Documents:
    """The comment and the full plan of a pull request; `verdict` is the budget's markdown and
    `pins` the hidden lines (pins and head commit) that end the comment."""
    short = truncate_lines(verdict, TAIL_ROOM, "…and {lines} more lines: see the job summary.")
    room = COMMENT_LIMIT - 1_000 - size(short + pins)
    comment = pull_request_markdown(plans, changed, limit=room, elsewhere=ELSEWHERE)
    room = SUMMARY_LIMIT - size(verdict + pins)
    full = pull_request_markdown(plans, changed, limit=room, rows=None)
    comment += short + pins
    if size(comment) > COMMENT_LIMIT:  # the layout above makes this impossible; never post it
        raise RunnerError(f"the plan comment is {size(comment)} characters, over {COMMENT_LIMIT}")
    return Documents(comment, full + verdict + pins)


def budget_markdown(verdict: Verdict) -> str:
    """The comment's budget section: nothing without a policy file."""
    rules = verdict.policy
    if not rules.limits_anything:
        return ""
    label = f"`{rules.approval_label}`"
    if not verdict.breaches:
        return f"\n**Budget:** within the policy ({rules.source}).\n"
    lines = sorted({str(b.problem) for b in verdict.breaches})
    if verdict.approved:
        head = f"**Budget: over the policy, approved** by the label {label}:"
    else:
        head = (
            f"**Budget: over the policy ({len(lines)} breach(es)).** This check fails until"
            f" someone with triage rights adds the label {label}; merged without it, the"
            " over-budget points are held back:"
        )
    return "\n" + head + "\n\n" + "".join(f"- {line}\n" for line in lines)


def allocation_markdown(plans: Sequence[SweepPlan], rules: Policy) -> str:
    """The comment's allocation section: which sweeps' points count against a team's priority
    allocation (decided at submit, from what the workspace holds then); nothing without one."""
    lines = []
    for plan in plans:
        slots = counted(plan, rules.priority_allocation) if plan.pending else []
        if not slots:
            continue
        gpus = sum(c.gpus for c in cost.plan_cost(plan).rows.values())
        limits = {(a.cluster, a.priority): a.gpus for a in rules.priority_allocation}
        against = ", ".join(f"{p} on {c} ({limits[(c, p)]} GPUs)" for c, p in slots)
        lines.append(
            f"- `{plan.sweep.name}`: {len(plan.pending)} point(s), {gpus} GPUs, count against"
            f" the allocation {against}"
        )
    if not lines:
        return ""
    head = (
        f"**Priority allocation** ({rules.source}): at submit, the points that would not fit"
        " beside the workspace's queued and running work wait, and later submits create them"
        " as GPUs free:"
    )
    return "\n" + head + "\n\n" + "".join(f"{line}\n" for line in lines)


def problems_markdown(problems: Sequence[Problem], limit: int = MARKDOWN_LIMIT) -> str:
    """The comment of a plan that cannot be made: its problems, as many as fit in a comment."""
    lines = [str(p) for p in sorted(set(problems))]
    # A fence longer than any backtick run in the text, so manifest content cannot close it.
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    head = (
        f"{COMMENT_MARKER}\n## Sweep plan\n\n"
        f"**{len(lines)} problem(s)** in the manifests: nothing can be planned or submitted"
        " until they are fixed.\n\n"
    )
    room = limit - len(head) - 2 * len(fence) - 200
    shown: list[str] = []
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            break
        shown.append(line)
    body = "\n".join(shown)
    more = len(lines) - len(shown)
    tail = (
        f"\n…and {more} more problem(s): see the job's log and the annotations on the diff.\n"
        if more
        else ""
    )
    return f"{head}{fence}text\n{body}\n{fence}\n{tail}"


def pull_request_markdown(
    plans: Sequence[SweepPlan],
    changed: Collection[str] | None,
    heading: str = "Sweep plan",
    limit: int = MARKDOWN_LIMIT,
    rows: int | None = 200,
    elsewhere: str | None = None,
) -> str:
    """A pull request's plan: in full the sweeps it changes and any that would submit something
    on merge; the others as one line. `changed` None (base unknown): every sweep in full."""
    if changed is None:
        return markdown(plans, heading, limit=limit, rows=rows, elsewhere=elsewhere)
    full = [p for p in plans if str(p.sweep.path) in changed or p.to_submit]
    rest = [p for p in plans if not (str(p.sweep.path) in changed or p.to_submit)]
    line = ""
    if rest:
        drafts = sum(p.sweep.draft for p in rest)
        counts = {s: sum(p.counts[s] for p in rest) for s in STATUS_WORDS if s != PlanStatus.SUBMIT}
        said = ", ".join(f"{n} {STATUS_WORDS[s]}" for s, n in counts.items())
        line = (
            f"\n{len(rest)} other sweep(s) this pull request does not change"
            f" ({drafts} draft): {said}. `{invoked()} expand --plan` lists them.\n"
        )
    if full:
        text = markdown(full, heading, limit=limit - size(line), rows=rows, elsewhere=elsewhere)
    else:
        text = f"{COMMENT_MARKER}\n## {heading}\n\nThis pull request submits nothing.\n"
    return text + line
