"""Notifications: a Slack incoming webhook told when a sweep finishes, stops, or has points fail.

Optional: set `SWEEP_SLACK_WEBHOOK` (a secret of the `beaker` environment) and every submit run
that creates or reconciles (the merge's, the schedule's) sends what is new since the last one:

- a sweep finished (every point submitted and final): counts, best point, group link;
- a sweep stopped by its failure budget or its target (`runner.apply.guardrails`);
- points that failed, batched into one message per run.

Each event is sent once. Its id is recorded in the sweep's ledger header *before* the call as
`sending` and turned into `sent` after a 2xx reply; a reply that says it was not delivered (an
HTTP error status, a refused connection) forgets it, so the next run tries again. A lost reply
(a timeout after the request went out) leaves `sending`: the event is never sent twice, at the
price of one that may never arrive. The ledger commit carries the records to the next run; a run
killed between the call and its ledger push may send that event again. The webhook failing
never fails the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner import ledger
from runner.apply import guardrails
from runner.backends import ExperimentState
from runner.backends.observed import Observer
from runner.ledger import headers
from runner.manifest.sample import Goal
from runner.operate.results import SweepResults, collect
from runner.plan import PlanStatus, SweepPlan
from runner.search.ranking import best

WEBHOOK_ENV = "SWEEP_SLACK_WEBHOOK"
TIMEOUT = 10.0
FINAL = (ExperimentState.SUCCEEDED, ExperimentState.FAILED, ExperimentState.CANCELED)
LISTED = 20
"""Failed points named per message; the rest are counted."""
SENDING, SENT = ledger.NOTIFY_SENDING, ledger.NOTIFY_SENT
REFUSED, LOST = "refused", "lost"
"""What else `post` can find: the server answered no (resent next run), or no answer came
(it may or may not have arrived: not resent)."""


@dataclass(frozen=True)
class Notice:
    id: str
    sweep: str
    text: str


def sweep_events(plan: SweepPlan, results: SweepResults) -> list[Notice]:
    """What is worth telling about one sweep now (sent or not): pure, from its results."""
    sweep, events = plan.sweep, []
    stop = guardrails.stop_of(sweep, results) if guardrails.guarded(sweep) else None
    if stop is not None:
        kind = "stop_when" if stop.point else "max_failures"
        limit = sweep.limits.stop_when if stop.point else sweep.limits.max_failures
        text = f"Sweep `{sweep.name}` {stop.reason}: no new points are created."
        events.append(Notice(f"stopped:{kind}:{limit}", sweep.name, text))
    for point in results.points:
        if point.state == ExperimentState.FAILED and not point.canceled_at:
            text = f"`{sweep.name}/{point.experiment}` (exit {point.exit_code}) {point.url}"
            events.append(Notice(f"failed:{point.key[:16]}:{point.restarts}", sweep.name, text))
    done = all(p.state in FINAL for p in results.points)
    if results.points and done and not any(r.status == PlanStatus.SUBMIT for r in plan.rows):
        keys = "\n".join(sorted(p.key for p in results.points))
        digest = hashlib.sha256(keys.encode()).hexdigest()[:16]
        events.append(Notice(f"finished:{digest}", sweep.name, _finished(results)))
    return events


def _finished(results: SweepResults) -> str:
    counts = {s: sum(1 for p in results.points if p.state == s) for s in FINAL}
    text = f"Sweep `{results.name}` finished: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    numeric = [
        m for m in results.metric_names if any(p.number(m) is not None for p in results.points)
    ]
    if numeric:
        top = best(results.points, lambda p: p.number(numeric[0]), Goal.MINIMIZE)
        if top is not None:
            text += (
                f". Best by lowest {numeric[0]}: `{top.experiment}` ({top.number(numeric[0]):g})"
            )
    if results.group is not None and results.group.url:
        text += f". Group: {results.group.url}"
    return text


def messages(events: Sequence[Notice]) -> list[tuple[str, tuple[Notice, ...]]]:
    """The Slack messages to send: one per stop or finish, the failures batched into one."""
    failed = [e for e in events if e.id.startswith("failed:")]
    out: list[tuple[str, tuple[Notice, ...]]] = [
        (e.text, (e,)) for e in events if not e.id.startswith("failed:")
    ]
    if failed:
        lines = [f"{len(failed)} point(s) failed:", *(f"• {e.text}" for e in failed[:LISTED])]
        if len(failed) > LISTED:
            lines.append(f"…and {len(failed) - LISTED} more")
        out.append(("\n".join(lines), tuple(failed)))
    return out


def post(url: str, text: str, timeout: float = TIMEOUT) -> str:
    """One webhook call: 'sent', 'refused' (surely not delivered) or 'unknown' (reply lost)."""
    body = json.dumps({"text": text}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            reply.read()
        return SENT
    except urllib.error.HTTPError:
        return REFUSED  # the server answered: it did not take the message
    except urllib.error.URLError as exc:
        return REFUSED if isinstance(exc.reason, ConnectionRefusedError) else LOST
    except (TimeoutError, ConnectionError, OSError):
        return LOST


def _mark(root: Path, events: Sequence[Notice], state: str | None) -> None:
    by_sweep: dict[str, dict[str, str | None]] = {}
    for event in events:
        by_sweep.setdefault(event.sweep, {})[event.id] = state
    for sweep, updates in by_sweep.items():
        headers.set_notified(ledger.ledger_path(root, sweep), sweep, updates)


@dataclass(frozen=True)
class Announced:
    """What `announce` did: messages sent of those due, and a warning per one not delivered."""

    sent: int = 0
    due: int = 0
    warnings: tuple[str, ...] = ()

    def summary(self) -> str:
        """The job summary's line; empty when nothing was due."""
        return f"Notifications: {self.sent} of {self.due} message(s) sent.\n" if self.due else ""


def webhook_url(environ: Mapping[str, str] = os.environ) -> str:
    """The webhook notifications go to (`SWEEP_SLACK_WEBHOOK`); empty: none are sent."""
    return environ.get(WEBHOOK_ENV, "").strip()


def announce(observer: Observer, plans: Sequence[SweepPlan], root: Path, url: str) -> Announced:
    """After the submit: send what is new to the webhook, from each sweep's look after the
    creates (`observer`) and the plans as the run recorded them. Never raises for the
    webhook: a failure is a warning in the result."""
    new: list[Notice] = []
    for plan in plans:
        recorded = ledger.read(ledger.ledger_path(root, plan.sweep.name), plan.sweep.name)
        if plan.sweep.draft or not recorded.entries:
            continue
        found = observer.observe(plan).results
        events = sweep_events(plan, collect(plan, observer.backend, root, found=found))
        new += [e for e in events if e.id not in recorded.notified]
    sent, warnings = 0, []
    for text, batch in messages(new):
        _mark(root, batch, SENDING)  # before the call: a lost reply must not send it twice
        outcome = post(url, text)
        _mark(root, batch, {SENT: SENT, REFUSED: None}.get(outcome, SENDING))
        sent += outcome == SENT
        if outcome != SENT:
            said = (
                "not delivered; retried next run"
                if outcome == REFUSED
                else ("reply lost; not resent (it may or may not have arrived)")
            )
            warnings.append(f"warning: notification webhook: {said}")
    return Announced(sent, len(messages(new)), tuple(warnings))
