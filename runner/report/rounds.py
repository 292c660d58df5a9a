"""An adaptive search's step as text: the line `propose` prints (and `lock`'s, of a sample and of
the clusters a selector resolved to), and a proposed round as its pull request (the branch, title and description: the round before's results, the best point so far,
the new points; and the lock's content, as the Propose workflow's step output carries them)."""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Sequence

from runner.core.aims import Aims
from runner.core.model import Sweep
from runner.core.sample import Sample
from runner.core.values import StrEnum
from runner.locking.auto import Auto
from runner.locking.clusters import Resolved
from runner.locking.proposing import Drew, Proposed
from runner.locking.replay import Replayed
from runner.locking.step import Advanced
from runner.report.rungs import param_cell, result_cell, rung_line, rung_pull_request
from runner.search.points import Told
from runner.search.rounds import Next, Round, RoundVerdict
from runner.search.rungs import halving_of


class Listed(StrEnum):
    """How many of a warm start's left-out points `propose`'s lines name."""

    FEW = "few"
    EVERY = "every"
    """`propose --verbose`: each one, a line each."""


def proposed_lines(one: Proposed, listed: Listed = Listed.FEW) -> list[str]:
    """What `propose` did for one sweep: its line (a round's or a rung's), and, when a warm
    start's round 0 was written, what it learned from and the points it left out (`listed`)."""
    step, halving = one.done.step, halving_of(one.sweep)
    if one.inside:
        kind = "rung" if halving is not None else "round"
        return [
            f"{one.shown}: {kind} {step.number} is inside its envelope (advance: auto): the"
            " schedule's submit advances it, so no pull request is proposed"
        ]
    first = _step_line(one.shown, one.sweep, step)
    said = seeding_lines(step, listed) if one.done.text is not None else []
    return [first, *(f"{one.shown}: {s}" for s in said)]


def _step_line(shown: str, sweep: Sweep, step: Next) -> str:
    """A search's step in one line: a rung's (a halving) or a round's (a sample)."""
    halving, sample = halving_of(sweep), sweep.search.sample
    if halving is not None:
        return rung_line(shown, halving, step)
    if sample is None:
        raise ValueError(f"{shown}: no search to step")
    return line(shown, sample, step)


def auto_line(auto: Auto) -> str:
    """What `submit` did for one automatic search (`advance: auto`), in one line."""
    step, halving = auto.step, halving_of(auto.sweep)
    if auto.left:
        return f"{auto.shown}: {auto.left}"
    if halving is not None and auto.written and step.cuts:
        by_rung = Counter(k for k in step.rounds[len(step.rounds) - len(step.new) :])
        said = ", ".join(f"{n} to rung {k}" for k, n in sorted(by_rung.items()))
        first = f"{auto.shown}: promoted {len(step.new)} point(s) as their rungs ended ({said})"
    else:
        first = _step_line(auto.shown, auto.sweep, step)
    if not auto.written:
        return first
    return first + ": approved by its reviewed envelope (the decision is in its lock)"


def replay_line(shown: str, replayed: Sequence[Replayed]) -> str:
    """What `replay` found of one sweep's automatic rounds, in one line: the first that does
    not replay, with why."""
    bad = next((r for r in replayed if not r.ok), None)
    if bad is not None:
        return f"error: {shown}: {bad.name} does not replay: {bad.why}"
    if not replayed:
        return f"{shown}: no automatic round yet (each round so far a person merged)"
    rounds = ", ".join(str(r.decision.round) for r in replayed)
    return f"{shown}: {len(replayed)} automatic round(s) replay byte for byte ({rounds})"


def auto_label(auto: Auto) -> str:
    """A round written, as a commit message names it: `halving: rung 2`, `branin: round 3`."""
    word = "rung" if auto.sweep.search.halving is not None else "round"
    return f"{auto.sweep.name}: {word} {auto.step.number}"


def drew_line(one: Drew) -> str:
    """What `lock` did for one manifest's sample, in one line."""
    sample = one.sweep.search.sample
    if one.done is None or sample is None:
        return f"{one.shown}: {one.said}" if not one.failed else one.said
    return lock_line(one.shown, sample, one.done)


def line(shown: str, sample: Sample, step: Next) -> str:
    """What `propose` did for one sweep, in one line."""
    if step.verdict is RoundVerdict.COMPLETE:
        return f"{shown}: search complete: {len(step.rows)} of n={sample.n} points proposed"
    if step.verdict is RoundVerdict.WAITING:
        return (
            f"{shown}: round {step.number} has {step.ended} of {len(step.previous)} point(s)"
            " finished: the next round waits for it"
        )
    if step.verdict is RoundVerdict.STOPPED:
        return f"{shown}: the search {step.stop}: no round proposed"
    if step.verdict is RoundVerdict.EXHAUSTED:
        return f"{shown}: no new point left in the space after rounding: search complete"
    known = len(sample.enqueue) if step.number == 0 else 0
    return (
        f"{shown}: round {step.number}: proposed {len(step.new)} point(s)"
        + (f" ({known} enqueued)" if known else "")
        + f", {len(step.rows)} of n={sample.n}"
    )


SHOWN_LEFT_OUT = 5
"""Points left out named in `propose`'s lines (the pull request lists 50)."""


def seeding_lines(step: Next, listed: Listed = Listed.FEW) -> list[str]:
    """What a warm start learned from, and what it left out and why (`propose`, round 0): the
    first few, or every one, a line each."""
    seeding = step.seeding
    if seeding is None or step.number != 0:
        return []
    counts = Counter(s.sweep for s in seeding.seeds.points)
    used = ", ".join(f"{n} from {sweep}" for sweep, n in counts.items()) or "none"
    lines = [f"warm start: {len(seeding.seeds.points)} prior point(s) ({used})"]
    left = seeding.left_out
    if left and listed is Listed.EVERY:
        lines += [f"left out {len(left)}:", *(f"  {x.sweep}/{x.experiment}: {x.why}" for x in left)]
    elif left:
        named = "; ".join(f"{x.sweep}/{x.experiment}: {x.why}" for x in left[:SHOWN_LEFT_OUT])
        cut = len(left) - SHOWN_LEFT_OUT
        more = f"; and {cut} more (propose --verbose lists every one)" if cut > 0 else ""
        lines.append(f"left out {len(left)}: {named}{more}")
    return lines + list(seeding.notes)


def lock_line(shown: str, sample: Sample, done: Advanced) -> str:
    """What `lock` did for one drawn sample, in one line."""
    step, name = done.step, done.lock.name
    if done.text is None:
        return f"{shown}: {name} is up to date ({len(step.rows)} points)"
    if done.before:
        verb = f"kept {min(done.before, sample.n)}, drew {len(step.new)}"
    elif done.replaced:
        verb = f"a new sample: drew {len(step.rows)} (the sample section changed)"
    else:
        verb = f"drew {len(step.rows)}"
    return f"{shown}: wrote {name}: {verb} point(s) ({sample.method}, seed {sample.seed})"


def clusters_line(shown: str, done: Resolved) -> str:
    """What `lock` did for one cluster selector, in one line."""
    named = ", ".join(f"{c.name} ({c.gpu_type or 'no GPUs'})" for c in done.clusters)
    verb = "wrote the lock's clusters" if done.text is not None else "clusters up to date"
    return f"{shown}: {verb}: {named}"


def best_line(sample: Sample, aims: Aims, step: Next) -> str:
    """The best point so far (the Pareto set, with two or more objectives), as a line; empty
    before any result."""
    if step.front:
        metrics = ", ".join(a.metric for a in aims.objectives)
        points = "; ".join(_where(sample, t) + f" ({_values(t)})" for t in step.front)
        return f"the Pareto set by {metrics}: {points} ({step.finished} point(s) finished)"
    if step.best is None:
        return ""
    where = _where(sample, step.best)
    metric = aims.first.metric if aims.first is not None else "value"
    return f"{metric} {step.best.value:g} at {where} ({step.finished} point(s) finished)"


def pull_request(round_: Round) -> dict[str, object]:
    """One entry of the step output `rounds` (a successive halving's: `rung_pull_request`)."""
    search, name = round_.sweep.search, round_.sweep.name
    sample = search.sample
    if search.halving is not None or sample is None:
        return _entry(round_, *rung_pull_request(round_))
    step, names = round_.step, sample.names
    branch = f"sweep-propose/{name}-{sample.digest[:12]}-round-{step.number}"
    title = f"Propose round {step.number} of {name} ({len(step.new)} point(s))"
    rows = "".join("| " + " | ".join(param_cell(v) for v in row) + " |\n" for row in step.new)
    best = best_line(sample, search.aims, step)
    body = (
        f"Round {step.number} of the adaptive search `{name}`, proposed by"
        f" `sweep-runner propose` from the results so far. Merging it submits these points"
        f" through the usual plan; closing it unmerged stops the search until Propose is"
        f" dispatched or the manifest is edited.\n\n"
        + (f"Best so far: {best}\n\n" if best else "")
        + seeding_text(step)
        + _previous_table(round_, sample, search.aims)
        + f"Proposed in round {step.number}:\n\n"
        + f"| {' | '.join(names)} |\n|"
        + "---|" * len(names)
        + "\n"
        + rows
    )
    return _entry(round_, branch, title, body)


def _entry(round_: Round, branch: str, title: str, body: str) -> dict[str, object]:
    return {
        "sweep": round_.sweep.name,
        "round": round_.step.number,
        "lock": round_.lock,
        "content": base64.b64encode(round_.text.encode()).decode(),
        "branch": branch,
        "title": title,
        "body": body,
    }


def _previous_table(round_: Round, sample: Sample, aims: Aims) -> str:
    """The round before's points and results, as a markdown table (empty for round 0)."""
    previous = round_.step.previous
    if not previous:
        return ""
    names = sample.names
    metric = aims.first.metric if aims.first is not None else "value"
    head = f"| {' | '.join(names)} | {metric} |\n|" + "---|" * (len(names) + 1)
    rows = "".join(
        "| " + " | ".join(param_cell(v) for v in t.row) + f" | {result_cell(t)} |\n"
        for t in previous
    )
    return f"Results of round {round_.step.number - 1}:\n\n{head}\n{rows}\n"


PR_LEFT_OUT_CHARS = 40_000
"""The left-out table's most characters: every point is listed while the pull request's body
stays under GitHub's 65 536 characters with the rest of it."""
"""Points left out listed in a round's pull request; the rest are counted."""


def seeding_text(step: Next) -> str:
    """Round 0 of a warm start: what it learned from, and each point left out and why."""
    lines = seeding_lines(step)
    if not lines:
        return ""
    assert step.seeding is not None
    left = step.seeding.left_out
    rows = [f"| `{x.sweep}` | `{x.experiment}` | {x.why} |\n" for x in left]
    kept, size = 0, 0
    for row in rows:  # every row while the body stays under GitHub's limit
        if size + len(row) > PR_LEFT_OUT_CHARS:
            break
        kept, size = kept + 1, size + len(row)
    table = f"| sweep | point | left out because |\n|---|---|---|\n{''.join(rows[:kept])}"
    more = (
        f"\n…and {len(left) - kept} more, past what GitHub's body holds: `propose --verbose`"
        " lists every one.\n"
        if kept < len(left)
        else ""
    )
    notes = "".join(f"{n[0].upper()}{n[1:]}.\n\n" for n in step.seeding.notes)
    return f"{lines[0].capitalize()}.\n\n{notes}" + (f"{table}{more}\n" if rows else "")


def _where(sample: Sample, told: Told) -> str:
    return " ".join(
        f"{n}={v}" for n, v in zip(sample.names, told.row, strict=True) if v is not None
    )


def _values(told: Told) -> str:
    return ", ".join(f"{v:g}" for v in told.values or (told.value or 0.0,))
