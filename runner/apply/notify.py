"""Notifications: a Slack incoming webhook told when a sweep finishes, stops, or has points fail.

Optional: set `SWEEP_SLACK_WEBHOOK` (a secret of the `beaker` environment) and every submit run
that creates or reconciles (the merge's, the schedule's) sends what is new since the last one:

- a sweep finished (every point submitted and final): counts, best point, group link;
- a sweep stopped by its failure budget or its target (`runner.apply.guardrails`);
- points that failed (by their own doing: a non-zero exit, a timeout; never a preemption or a
  cancel), batched into one message per run, each with why.
- an automatic search's round (`advance: auto`) submitted inside its reviewed envelope, with no
  person's review: what it chose, and that its lock records how (`replay` recomputes it).

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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner import ledger
from runner.analysis.aiming import winner
from runner.backends import ExperimentState
from runner.core.aims import Goal
from runner.core.search import Search
from runner.ledger.store import LedgerStore
from runner.locking.decision import history
from runner.observe.looks import Observer
from runner.observe.model import Observation
from runner.plan import PlanStatus, SweepPlan

WEBHOOK_ENV = "SWEEP_SLACK_WEBHOOK"
TIMEOUT = 10.0
FINAL = tuple(s for s in ExperimentState if s.final)
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


def sweep_events(observed: Observation) -> list[Notice]:
    """What is worth telling about one sweep now (sent or not): pure, from its observation."""
    events, stop = [], observed.stop
    if stop is not None:
        kind = "stop_when" if stop.point else "max_failures"
        limit = stop.limit
        text = f"Sweep `{observed.name}` {stop.reason}: no new points are created."
        events.append(Notice(f"stopped:{kind}:{limit}", observed.name, text))
    for point in observed.points:
        if point.failed:
            text = f"`{observed.name}/{point.experiment}` ({point.why or point.state}) {point.url}"
            events.append(Notice(f"failed:{point.key[:16]}:{point.restarts}", observed.name, text))
    events += _rounds(observed)
    done = all(p.has_ended for p in observed.points)  # a point a submit resumes is not done
    submitted = not any(p.status == PlanStatus.SUBMIT for p in observed.points)
    if observed.points and done and submitted:
        keys = "\n".join(sorted(p.key for p in observed.points))
        digest = hashlib.sha256(keys.encode()).hexdigest()[:16]
        events.append(Notice(f"finished:{digest}", observed.name, finished_text(observed)))
    return events


def _rounds(observed: Observation) -> list[Notice]:
    """Each automatic round the lock records: approved by the envelope, not by a person."""
    search = observed.search
    lock = search.lock
    word = "rung" if search.halving is not None else "round"
    out = []
    for d in lock.decisions if lock is not None else ():
        chose = hashlib.sha256(repr(d.chose).encode()).hexdigest()[:16]
        text = (
            f"Sweep `{observed.name}`: {word} {d.round} ({len(d.chose)} point(s)) submitted"
            " inside its reviewed envelope, approved by the envelope and not by a person; its"
            " lock records what it read and how it chose (`replay` recomputes it)."
        )
        out.append(Notice(f"advanced:{d.round}:{chose}", observed.name, text))
    return out


def finished_text(observed: Observation) -> str:
    """A finished sweep's message: its counts, its best point by the sweep's own objective (an
    adaptive search's metric and goal, or its `stop_when`), or, when it declares none, the
    lowest and highest of its first numeric metric (which is better, only the sweep can say),
    and its group."""
    counts = {s: sum(1 for p in observed.points if p.state == s) for s in FINAL}
    said = [f"{n} {s}" for s, n in counts.items()]
    canceled = ExperimentState.CANCELED  # by whom or what: a timeout, a preemption, a person
    causes = Counter(str(p.ending) for p in observed.points if p.state == canceled and p.ending)
    if set(causes) - {canceled.value}:
        said[-1] += " (" + ", ".join(f"{n} {c}" for c, n in sorted(causes.items())) + ")"
    text = f"Sweep `{observed.name}` finished: " + ", ".join(said)
    objective = observed.objective
    if objective is not None:
        top = _extreme(observed, objective.metric, objective.goal)
        way = "lowest" if objective.goal is Goal.MINIMIZE else "highest"
        text += f". Best by {way} {top}" if top else ""
    elif observed.numeric_metrics:
        metric = observed.numeric_metrics[0]
        low, high = (_extreme(observed, metric, goal) for goal in Goal)
        text += f". Lowest {low}; highest {high}" if low else ""
    approved = approved_by(observed.search)
    text += f". {approved}" if approved else ""
    if observed.group is not None and observed.group.url:
        text += f". Group: {observed.group.url}"
    return text


def approved_by(search: Search) -> str:
    """Who approved each round of an automatic search (`rung 0: a person; rungs 1, 2: the
    envelope`); empty for another."""
    lock = search.lock
    if not search.auto and not (lock is not None and lock.decisions):
        return ""
    word = "Rung" if search.halving is not None else "Round"
    said = ", ".join(f"{k} {who}" for k, who in history(search).items())
    return f"{word}s approved by: {said}"


def _extreme(observed: Observation, metric: str, goal: Goal) -> str:
    """'loss: `name` (1.5)': the point best by `metric` that way, among those that keep the
    sweep's constraints; empty when none has it."""
    top = winner(observed, metric, goal)
    return "" if top is None else f"{metric}: `{top.experiment}` ({top.number(metric):g})"


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
    """One webhook call: 'sent', 'refused' (surely not delivered) or 'lost' (reply lost)."""
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


def _mark(store: LedgerStore, events: Sequence[Notice], state: str | None) -> None:
    by_sweep: dict[str, dict[str, str | None]] = {}
    for event in events:
        by_sweep.setdefault(event.sweep, {})[event.id] = state
    for sweep, updates in by_sweep.items():
        store.set_notified(sweep, updates)


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


def announce(
    observer: Observer, plans: Sequence[SweepPlan], store: LedgerStore, url: str
) -> Announced:
    """After the submit: send what is new to the webhook, from each sweep's observation after
    the creates (`observer`) and the plans as the run recorded them. Never raises for the
    webhook: a failure is a warning in the result."""
    new: list[Notice] = []
    for plan in plans:
        recorded = store.read(plan.sweep.name)
        if plan.sweep.draft or not recorded.entries:
            continue
        events = sweep_events(observer.observation(plan))
        new += [e for e in events if e.id not in recorded.notified]
    sent, warnings = 0, []
    for text, batch in messages(new):
        _mark(store, batch, SENDING)  # before the call: a lost reply must not send it twice
        outcome = post(url, text)
        _mark(store, batch, {SENT: SENT, REFUSED: None}.get(outcome, SENDING))
        sent += outcome == SENT
        if outcome != SENT:
            said = (
                "not delivered; retried next run"
                if outcome == REFUSED
                else ("reply lost; not resent (it may or may not have arrived)")
            )
            warnings.append(f"warning: notification webhook: {said}")
    return Announced(sent, len(messages(new)), tuple(warnings))
