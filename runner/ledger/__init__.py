"""The ledger: the repository's record of which experiments a sweep has on Beaker.

One file per sweep, `sweeps/ledger/<sweep>.jsonl`: a header line, then one JSON object per
experiment sorted by key. Line-per-entry keeps diffs and reviews readable; entries are merged by
key, never edited by hand. Writes are atomic (temp file + rename) under an exclusive lock on the
ledger directory, and every write re-reads and merges, so concurrent runners never lose an entry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from runner.core.errors import LedgerError
from runner.core.files import locked, write_atomic
from runner.core.keys import SPEC_HASH_VERSION, canonical_spec, pack_spec
from runner.core.model import Rendered
from runner.core.values import Value

LEDGER_DIR = PurePosixPath("sweeps/ledger")
"""Where the committed (Beaker) ledgers live, relative to the repository root."""

LEDGER_FORMAT = 1
FIELDS = ("key", "experiment", "url", "id", "spec_hash", "submitted_at", "commit", "params")
OPTIONAL: tuple[str, ...] = ("restarts", "restarted_at", "canceled_at", "restarting", "canceling")
OPTIONAL += ("preemptions", "resuming")
"""Written only when set, so entries that never had them keep their lines (and old ledgers parse)."""
_LINE_JSON = json.JSONEncoder(ensure_ascii=False)
INTENTS = ("restarting", "canceling")
NOTIFY_SENDING, NOTIFY_SENT = "sending", "sent"
"""A notification's state in the header: recorded before the webhook call, and after it."""


@dataclass(frozen=True)
class Entry:
    """One submitted experiment."""

    key: str
    experiment: str
    url: str
    id: str
    spec_hash: str
    submitted_at: str
    commit: str
    params: Mapping[str, Value] = field(default_factory=dict)
    restarts: int = 0
    """How many times `submit --restart-failed` restarted its failed tasks (same experiment)."""
    restarted_at: str | None = None
    canceled_at: str | None = None
    """When `cancel` canceled it; `--restart-failed` leaves such a point alone."""
    restarting: str = ""
    """Write-ahead: a restart is being sent; the experiment's job generation before it (the
    backend's token). The next `--restart-failed` counts it if the generation moved on since,
    and drops it if not (the request never reached the backend)."""
    canceling: str = ""
    """Write-ahead: a cancel is being sent, since this time. The next `cancel` or
    `--restart-failed` records it as canceled_at if the experiment is canceled, else drops it."""
    preemptions: int = 0
    """Preemptions (a lost node counts as one) the runner saw: those a plain `submit` resumed
    (`runner.operate.preempted`), and those Beaker resumed. Apart from `restarts`: not failures."""
    resuming: str = ""
    """Write-ahead of a resume, as `restarting` is of a restart (the job generation before it)."""
    hash_version: int = SPEC_HASH_VERSION
    """How spec_hash was computed (`runner.core.keys.SPEC_HASH_VERSION`); absent in older ledgers: 1."""
    spec: str = ""
    """The canonical spec that was submitted, packed (`pack_spec`), so drift can say what changed;
    empty in entries written before hash version 2."""

    @property
    def canceled(self) -> str | None:
        """When `cancel` canceled it, unless it was restarted since (`--restart --points`)."""
        if self.canceled_at and self.restarted_at and self.restarted_at > self.canceled_at:
            # `--restart --points` also clears canceled_at; this covers a stale copy merged in
            return None
        return self.canceled_at

    @classmethod
    def of(cls, point: Rendered, url: str, id: str, commit: str, at: str) -> Entry:
        """The entry of a point's experiment, recorded `at` (UTC text) for manifests at `commit`."""
        return cls(
            key=point.key,
            experiment=point.name,
            url=url,
            id=id,
            spec_hash=point.spec_hash,
            submitted_at=at,
            commit=commit,
            params=dict(point.params),
            hash_version=SPEC_HASH_VERSION,
            spec=pack_spec(canonical_spec(point.spec)),  # so drift can say what changed
        )

    def to_line(self) -> str:
        data: dict[str, Any] = {k: getattr(self, k) for k in FIELDS}
        data["params"] = dict(self.params)
        data.update({k: getattr(self, k) for k in OPTIONAL if getattr(self, k)})
        if self.hash_version != 1:
            data["hash_version"] = self.hash_version
        if self.spec:
            data["spec"] = self.spec
        return _LINE_JSON.encode(data)


@dataclass(frozen=True)
class Ledger:
    sweep: str
    entries: Mapping[str, Entry]
    """By key."""
    group: str = ""
    """The URL of the sweep's group on the backend, once it has one (kept in the header)."""
    notified: Mapping[str, str] = field(default_factory=dict)
    """Notifications by event id: 'sending' (recorded before the webhook call) or 'sent'
    (`runner.apply.notify`; kept in the header)."""

    def merged(self, new: Iterable[Entry]) -> Ledger:
        """This ledger plus new entries, by key.

        The same experiment recorded again (a second runner or a re-run adopting it) never
        rewrites history: the entry submitted first is kept, with its `submitted_at` and
        `commit`, while what was done to the experiment since only accumulates (the most
        restarts, with their time; the most preemptions; a cancellation), so a stale writer
        cannot wipe a restart, a resume or a cancel. For another experiment under the same key
        (a duplicate resolved to the older one), the later record wins.
        """
        entries = dict(self.entries)
        for entry in new:
            old = entries.get(entry.key)
            if old is None:
                entries[entry.key] = entry
            elif old.id == entry.id:
                entries[entry.key] = _same_experiment(old, entry)
            elif entry.submitted_at >= old.submitted_at:
                entries[entry.key] = entry
        return Ledger(self.sweep, entries, self.group, self.notified)


def _same_experiment(a: Entry, b: Entry) -> Entry:
    """Two records of one experiment: the first submission, with every action on it since."""
    first, other = (b, a) if b.submitted_at < a.submitted_at else (a, b)
    restarted = max(first, other, key=lambda e: (e.restarts, e.restarted_at or ""))
    canceled = max(c for c in (first.canceled_at, other.canceled_at, "") if c is not None)
    # An intent is set by either record and cleared only by what it led to (one more restart,
    # a cancellation) or by `set_intents`: a writer that never saw it cannot drop it.
    top = max(a.restarts, b.restarts)  # an intent at n restarts is for restart n + 1
    restarting = next((e.restarting for e in (b, a) if e.restarts == top and e.restarting), "")
    seen = max(a.preemptions, b.preemptions)  # the same for a resume and its intent
    resuming = next((e.resuming for e in (b, a) if e.preemptions == seen and e.resuming), "")
    merged = dataclasses.replace(
        first,
        restarts=restarted.restarts,
        restarted_at=restarted.restarted_at,
        canceled_at=canceled or None,
        restarting=restarting,
        canceling="" if canceled else (b.canceling or a.canceling),
        preemptions=seen,
        resuming=resuming,
    )
    return first if merged == first else merged


@dataclass(frozen=True)
class Layout:
    """Where one backend's ledgers live under a repository root: a relative path with `{sweep}`.
    The ledger knows only the committed one; a backend whose runs are recorded elsewhere (the
    local one, in its run directories) brings its own (`runner.backends.Backend.layout`)."""

    pattern: str

    def path(self, root: Path, sweep: str) -> Path:
        return root / self.pattern.format(sweep=sweep)


COMMITTED = Layout(f"{LEDGER_DIR}/{{sweep}}.jsonl")
"""Beaker's ledgers: committed under sweeps/ledger/, one file per sweep."""


def ledger_path(root: Path, sweep: str) -> Path:
    """The committed ledger of a sweep (sweeps/ledger/<sweep>.jsonl)."""
    return COMMITTED.path(root, sweep)


def header(sweep: str, group: str = "", notified: Mapping[str, str] | None = None) -> str:
    data = {
        "ledger": LEDGER_FORMAT,
        "sweep": sweep,
        "spec_hash_version": SPEC_HASH_VERSION,
        "about": "Experiments submitted for this sweep, one per line after this header, sorted by"
        " key. Written by `python -m runner submit`; merged by key; do not edit by hand.",
    }
    if group:
        data["group"] = group
    if notified:
        data["notified"] = dict(sorted(notified.items()))
    return json.dumps(data, ensure_ascii=False)


def read(path: Path, sweep: str) -> Ledger:
    """The ledger at path; an absent file is an empty ledger."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Ledger(sweep, {})
    return parse(text, str(path), sweep)


def parse(text: str, source: str, sweep: str) -> Ledger:
    entries: dict[str, Entry] = {}
    group = ""
    notified: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LedgerError(f"{source}:{number}: not valid JSON ({exc.msg})") from None
        if "ledger" in data:
            if data["ledger"] != LEDGER_FORMAT or data.get("sweep") != sweep:
                raise LedgerError(
                    f"{source}:{number}: header says ledger format {data.get('ledger')} for sweep"
                    f" {data.get('sweep')!r}; expected format {LEDGER_FORMAT} for {sweep!r}"
                )
            group = str(data.get("group") or "")
            notified = {str(k): str(v) for k, v in (data.get("notified") or {}).items()}
            continue
        try:
            entry = Entry(
                **{k: data[k] for k in FIELDS},
                **{k: data[k] for k in OPTIONAL if k in data},
                hash_version=data.get("hash_version", 1),
                spec=data.get("spec", ""),
            )
        except (KeyError, TypeError):
            missing = [k for k in FIELDS if k not in data]
            raise LedgerError(f"{source}:{number}: entry is missing {', '.join(missing)}") from None
        entries[entry.key] = entry
    return Ledger(sweep, entries, group, notified)


def render(ledger: Ledger) -> str:
    return _render(ledger, {})[0]


_Lines = dict[str, tuple[Entry, str]]
"""Each entry's line by key, with the entry it was encoded from."""


def _render(ledger: Ledger, known: _Lines) -> tuple[str, _Lines]:
    """The file text, reusing the lines of `known` entries that are the very same objects."""
    lines: _Lines = {}
    for key in sorted(ledger.entries):
        entry = ledger.entries[key]
        cached = known.get(key)
        lines[key] = cached if cached and cached[0] is entry else (entry, entry.to_line())
    text = (
        "\n".join(
            [
                header(ledger.sweep, ledger.group, ledger.notified),
                *(line for _, line in lines.values()),
            ]
        )
        + "\n"
    )
    return text, lines


@dataclass(frozen=True)
class Written:
    """What one write left in a file: its text, the ledger it holds and that ledger's lines."""

    text: str
    ledger: Ledger
    lines: _Lines


def record(path: Path, sweep: str, entries: Iterable[Entry]) -> Ledger:
    """Merge entries into the ledger file atomically; safe against concurrent writers."""
    return record_file(path, sweep, list(entries), None).ledger


def record_file(path: Path, sweep: str, new: list[Entry], last: Written | None) -> Written:
    """`record`, skipping the parse and re-encoding when the file still holds `last`'s text."""
    with locked(path.parent):
        try:
            text: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        if last is not None and text == last.text:
            current, known = last.ledger, last.lines
        else:  # first write, or another runner wrote in between
            current = Ledger(sweep, {}) if text is None else parse(text, str(path), sweep)
            known = {}
        ledger = current.merged(new)
        text, lines = _render(ledger, known)
        write_atomic(path, text)
    return Written(text, ledger, lines)
