"""Plan pinning: a merge submits only the points that a reviewed plan showed.

A pull request's plan comment carries one hidden pin per sweep with points to submit: the sweep's
name, how many, and a digest of them (one line per sweep, whatever its size; past `PIN_ROOM`
characters a single pin `sweep=*` stands for every sweep). On merge, the submit workflow reads
the plan comments of the pull requests of the pushed commits (and of recently merged ones, so a
dropped run is repaired by the next) with a read-only token, and submits a `+` point only when a
pin covers it. Anything else (the cross-term of two pull requests that each changed one axis,
say) is held back and listed as "not in a reviewed plan".

The comment is text anyone with write access can edit, and GitHub keeps its author when they do.
So it is evidence, not authority: it names the pull request's head commit it was planned for
(`head_line`), and the reviewed job (`runner.commands.reviewed`) reads that head with git and
recomputes every point it defines, offline and deterministically (the code of `expand --plan`).
A comment whose head is not the merged head approves nothing; a pin approves only the points of
its sweep that the merged head defines (a token covers the point's key and its rendered spec, so
a template edited after review is not covered), whatever the ledger said when it was planned,
and the budget approval only while the pull request has the approval label. Editing the text can
drop approvals, never add one.

`approvals` turns what the merged heads approve into the pins the submit job gets: per sweep, a
digest of its `+` points when all are approved, and a token per approved point only where some
are not (a partial set, such as a grid with a held-back cross-term).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from runner.plan import Row, SweepPlan, envelope
from runner.plan.budget import Verdict

PIN_MARK = "beaker-sweep-runner:reviewed"
HEAD_MARK = "beaker-sweep-runner:planned"
NO_DIGEST = "0" * 64
"""The digest of a checked pin: it approves by its tokens only (no real digest is all zeros)."""
_HEAD = re.compile(r"<!-- " + re.escape(HEAD_MARK) + r" head=([0-9a-f]{7,64}) -->")
TOKEN_HEX = 16
EVERY_SWEEP = "*"
"""The sweep of the one pin of a plan with too many sweeps to pin one by one."""
PIN_ROOM = 20_000
"""Characters of pins a plan comment may carry (about 150 sweeps); past that, one `*` pin."""
_PIN = re.compile(
    r"<!-- " + re.escape(PIN_MARK) + r" sweep=(\S+) points=(\d+) sha256=([0-9a-f]{64})"
    r"( approved=budget)?(?: envelope=([0-9a-f]{64}))?(?: tokens=([0-9a-f,]*))? -->"
)


@dataclass(frozen=True)
class Pin:
    """What one plan showed for one sweep."""

    sweep: str
    points: int
    digest: str
    tokens: frozenset[str]
    approved: bool = False
    """The plan was approved over the budget policy (its pull request had the approval label)."""
    envelope: str = ""
    """An automatic search's envelope digest (`runner.plan.envelope`): the rounds inside it are
    approved too, each once it replays."""


def _full_token(row: Row) -> str:
    spec = row.rendered.spec_hash if row.rendered else ""
    return hashlib.sha256(f"{row.key}:{spec}".encode()).hexdigest()


def token(row: Row) -> str:
    return _full_token(row)[:TOKEN_HEX]


def digest(rows: Iterable[Row]) -> str:
    return hashlib.sha256("\n".join(sorted(_full_token(r) for r in rows)).encode()).hexdigest()


def pins(plans: Sequence[SweepPlan]) -> list[Pin]:
    """The pins of a plan: one per sweep that would submit something, now or in a top-up, with
    a digest of its points and no token (its size does not grow with the points); an automatic
    search's carries its envelope (even with no point to submit: the envelope is approved)."""
    found = []
    for plan in plans:
        rows, auto = plan.pending, plan.sweep.search.auto and not plan.sweep.draft
        if rows or auto:
            sealed = envelope.digest(plan) if auto else ""
            found.append(
                Pin(plan.sweep.name, len(rows), digest(rows), frozenset(), envelope=sealed)
            )
    return found


def comment_pins(found: Sequence[Pin], room: int = PIN_ROOM) -> str:
    """The pin lines of a plan comment: one per sweep, or past `room` characters one pin for
    every sweep (`sweep=*`, approved over the budget only if every sweep was)."""
    text = pin_lines(found)
    if len(text) <= room:
        return text
    every = Pin(
        EVERY_SWEEP,
        sum(p.points for p in found),
        hashlib.sha256("\n".join(sorted(p.digest for p in found)).encode()).hexdigest(),
        frozenset(),
        all(p.approved for p in found),
    )
    sealed = [dataclasses.replace(p, points=0, digest=NO_DIGEST) for p in found if p.envelope]
    return pin_lines([every, *sealed])  # an envelope has no `*`: each is pinned by name


def pin_lines(found: Sequence[Pin]) -> str:
    """Hidden lines for the comment (HTML comments do not render)."""
    lines = []
    for pin in found:
        tokens = f" tokens={','.join(sorted(pin.tokens))}" if pin.tokens else ""
        approved = " approved=budget" if pin.approved else ""
        sealed = f" envelope={pin.envelope}" if pin.envelope else ""
        lines.append(
            f"<!-- {PIN_MARK} sweep={pin.sweep} points={pin.points} sha256={pin.digest}"
            f"{approved}{sealed}{tokens} -->"
        )
    return "".join(line + "\n" for line in lines)


def head_line(sha: str) -> str:
    """The hidden line naming the pull request's head commit the plan was made for."""
    return f"<!-- {HEAD_MARK} head={sha} -->\n" if sha else ""


def planned_head(text: str) -> str:
    found = _HEAD.search(text)
    return found[1] if found else ""


def parse_pins(text: str) -> list[Pin]:
    return [
        Pin(
            m[1],
            int(m[2]),
            m[3],
            frozenset(t for t in (m[6] or "").split(",") if t),
            bool(m[4]),
            m[5] or "",
        )
        for m in _PIN.finditer(text)
    ]


def uncovered(plan: SweepPlan, found: Iterable[Pin]) -> frozenset[str]:
    """The keys of the plan's pending points these pins do not cover: none when a pin of its
    sweep has the digest of them all, else those whose token no pin of its sweep lists."""
    rows = plan.pending
    mine = [p for p in found if p.sweep == plan.sweep.name]
    if not rows or any(p.digest == digest(rows) for p in mine):
        return frozenset()
    tokens = frozenset().union(*(p.tokens for p in mine))
    left = frozenset(r.key for r in rows if token(r) not in tokens)
    return left - sealed(plan, mine)


def sealed(plan: SweepPlan, found: Iterable[Pin]) -> frozenset[str]:
    """The keys of an automatic search's points that its envelope covers: those automatic
    rounds chose, when a pin carries the sweep's envelope (the rounds' replay is checked before
    anything is created: `runner.apply.advancing`); none while it is paused (`review`)."""
    return envelope.automatic(plan) if approves_envelope(plan, found) else frozenset()


def approves_envelope(plan: SweepPlan, found: Iterable[Pin]) -> bool:
    """Whether a pin approves the automatic search's envelope as the sweep has it now."""
    if not plan.sweep.search.auto:
        return False
    sealed = envelope.digest(plan)
    return any(p.sweep == plan.sweep.name and p.envelope == sealed for p in found)


def approve_pins(found: Sequence[Pin], verdict: Verdict) -> list[Pin]:
    """The pins a plan comment carries: marked approved when the approval label is set."""
    return [dataclasses.replace(p, approved=verdict.approved) for p in found]


# -- checking them against the merged heads ---------------------------------------------------


@dataclass(frozen=True)
class Head:
    """What a merged head defines, as the plan comment would pin it."""

    tokens: Mapping[str, frozenset[str]]
    """The token of every point each sweep defines."""
    envelopes: Mapping[str, str]
    """Each automatic search's envelope digest (`runner.plan.envelope`)."""


def defined(
    files: Mapping[str, str], names: Collection[str] | None = None
) -> dict[str, frozenset[str]]:
    """The token of every point each sweep defines in these files (`at_head`'s tokens)."""
    return dict(at_head(files, names).tokens)


def at_head(files: Mapping[str, str], names: Collection[str] | None = None) -> Head:
    """The token of every point each sweep defines in these files (path -> text), as
    `expand --plan` renders them against an empty ledger, and each automatic search's envelope;
    a sweep with problems defines none, and a draft none (it is never submitted). `names`: only
    these sweeps are rendered."""
    import tempfile
    from pathlib import Path

    from runner.plan import catalog

    with tempfile.TemporaryDirectory(prefix="sweeps-at-head-") as tmp:
        for path, text in files.items():
            target = Path(tmp, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        Path(tmp, "sweeps").mkdir(exist_ok=True)
        cat = catalog.load(Path(tmp), [])
        if names is not None:
            cat = dataclasses.replace(cat, sweeps=tuple(s for s in cat.sweeps if s.name in names))
        plans, _ = cat.readable_plans()
        plans = [p for p in plans if not p.sweep.draft]
        tokens = {p.sweep.name: frozenset(token(r) for r in p.rows if r.rendered) for p in plans}
        sealed = {p.sweep.name: envelope.digest(p) for p in plans if p.sweep.search.auto}
        return Head(tokens, sealed)


def named(pins: Sequence[Pin]) -> frozenset[str] | None:
    """The sweeps these pins name; None (every sweep) when one is a `*` pin."""
    found = frozenset(p.sweep for p in pins)
    return None if EVERY_SWEEP in found else found


def checked(
    shown: Sequence[Pin],
    tokens: Mapping[str, frozenset[str]],
    labeled: bool,
    envelopes: Mapping[str, str] | None = None,
) -> list[Pin]:
    """The pins a comment shows, cut down to the points the head defines: listed tokens that it
    defines (a comment written before pins had no tokens), or every point its sweep defines (a
    `*` pin: of every sweep); approved over the budget only while the pull request has the
    label; an envelope only where it is the one the head's sweep has (`envelopes`)."""
    out = []
    for pin in shown:
        names = sorted(tokens) if pin.sweep == EVERY_SWEEP else [pin.sweep]
        for name in names:
            mine = tokens.get(name, frozenset())
            kept = pin.tokens & mine if pin.tokens else mine
            at_head = (envelopes or {}).get(name, "")
            sealed = pin.envelope if pin.envelope and pin.envelope == at_head else ""
            out.append(Pin(name, len(kept), NO_DIGEST, kept, pin.approved and labeled, sealed))
    return out


def approvals(plans: Sequence[SweepPlan], found: Iterable[Pin]) -> list[Pin]:
    """What the checked pins approve of these plans' `+` points, as the submit job's pins: per
    sweep, the digest of its `+` points when the pins cover all of them, else a token per
    covered point; and likewise for the points approved over the budget."""
    found = list(found)
    out = []
    for plan in plans:
        if plan.sweep.search.auto:  # its envelope, as a pin of its own (no point)
            sealed = envelope.digest(plan)
            for approved in sorted(
                {p.approved for p in found if p.sweep == plan.sweep.name and p.envelope == sealed}
            ):
                out.append(Pin(plan.sweep.name, 0, NO_DIGEST, frozenset(), approved, sealed))
        rows = plan.pending
        for approved in (False, True):
            mine = [p for p in found if p.sweep == plan.sweep.name and (p.approved or not approved)]
            tokens = frozenset().union(*(p.tokens for p in mine))
            covered = [r for r in rows if token(r) in tokens]
            if not covered:
                continue
            listed = frozenset() if len(covered) == len(rows) else frozenset(map(token, covered))
            out.append(Pin(plan.sweep.name, len(covered), digest(covered), listed, approved))
    return out
