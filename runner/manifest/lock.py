"""The lock file of a `params.sample` section: sampled points as data in the repository.

`sweep-runner lock` (or `propose`, round by round) writes the points beside the manifest,
`NAME.lock.json`; everything else (validate, expand, plan, submit) reads them and never samples.
The lock belongs to one sample section: its `sample` digest covers method, seed, digits and space
(not `n`: growing `n` appends, keeping every locked point as it is). Its `digest` covers the
whole content, every section, so a hand-edited lock is refused. Both are checked on every load.

Besides the sample's points a lock may hold sections of its own, each under one key, parsed by
its own module and kept as it is by a command that writes another (`clusters`: what a cluster
selector resolved to, `runner.manifest.clusters`; `rungs`: a successive halving's promoted points,
`runner.manifest.fidelity`; `seeds`: a warm start's prior points, `runner.manifest.seeds`;
`decisions`: the automatic rounds' records, `runner.manifest.decisions`). A grid
sweep with such a section has a lock without points. A search's known points are its first
points (`enqueued`: how many, part of the sample's).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.errors import Problem
from runner.core.invoked import invoked
from runner.core.locked import Locked
from runner.core.marks import Document
from runner.core.model import Cell
from runner.core.sample import Method, Sample, row_identity
from runner.core.values import InvalidValue, canonical_json, checked
from runner.manifest.decisions import DECISIONS, parse_decisions
from runner.manifest.fidelity import RUNGS, parse_rungs
from runner.manifest.seeds import SEEDS, parse_seeds

LOCK_SUFFIX = ".lock.json"
LOCK_FORMAT = 1


def lock_path(manifest: Path) -> Path:
    """`sweeps/x.yaml` -> `sweeps/x.lock.json` (not a manifest: the catalog reads .yaml files)."""
    return manifest.with_name(manifest.name.rsplit(".", 1)[0] + LOCK_SUFFIX)


SAMPLE_KEYS = ("format", "sample", "method", "seed", "params", "points", "rounds", "enqueued")
"""The keys of the sample's part of a lock; any other key but the header's is a section."""
_HEADER = ("//", "digest")


def lock_text(
    sample: Sample | None,
    rows: Sequence[Sequence[Cell]],
    command: str,
    rounds: Sequence[int] | None = None,
    sections: Mapping[str, Any] | None = None,
) -> str:
    """The lock's bytes: deterministic, one point a line, a header that says how to remake it.
    `rounds`: an adaptive search's round of each point (0 first). `sections`: the lock's other
    sections (`clusters`), kept as given; without a sample, the lock holds only those."""
    part: dict[str, Any] | None = None
    if sample is not None:
        part = {"sample": sample.digest, "method": sample.method, "seed": sample.seed}
        part.update(params=list(sample.names), points=[list(r) for r in rows])
        if rounds is not None:
            part["rounds"] = list(rounds)
        if sample.enqueue:
            part["enqueued"] = len(sample.enqueue)
    return _composed(part, command, sections or {})


def rewritten(content: Mapping[str, Any] | None, command: str, sections: Mapping[str, Any]) -> str:
    """A lock with the sample's part of `content` (a verified lock, or None) as it is, and
    `sections` as its other sections."""
    part = None
    if content is not None and "points" in content:
        part = {k: content[k] for k in SAMPLE_KEYS if k in content and k != "format"}
    return _composed(part, command, sections)


def _composed(part: Mapping[str, Any] | None, command: str, sections: Mapping[str, Any]) -> str:
    extra = dict(sorted(sections.items()))
    body: dict[str, Any] = {"format": LOCK_FORMAT, **(part or {})}
    what = [*(["the points of params.sample"] if part is not None else []), *map(_said, extra)]
    change = "the sample section" if not extra else "the manifest"
    head = {
        "//": f"Written by `{command}`: {' and '.join(what)}. Do not edit: change {change}"
        " and run that command again.",
        **{k: v for k, v in body.items() if k not in ("points", "rounds")},
        "digest": _digest({**body, **extra}),
    }
    if "rounds" in body:
        head["rounds"] = body["rounds"]
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines += [_section(key, value) for key, value in extra.items()]
    if part is None:
        return "{\n" + "\n".join(lines).rstrip(",") + "\n}\n"
    points = ",\n".join("    " + json.dumps(list(r), ensure_ascii=False) for r in body["points"])
    return "{\n" + "\n".join(lines) + '\n  "points": [\n' + points + "\n  ]\n}\n"


SECTION_WORDS = {
    "clusters": "the clusters beaker's cluster selector resolved to",
    RUNGS: "the rungs of params.fidelity",
    SEEDS: "the prior points params.sample.seed_from found",
    DECISIONS: "the decisions of the rounds its envelope approved (advance: auto)",
}
"""What each section holds, for the lock's header."""


def _said(key: str) -> str:
    return SECTION_WORDS.get(key, f"its {key}")


def _section(key: str, value: Any) -> str:
    """A section, one field a line and a list's items a line each (a reviewer reads its diff)."""
    if not isinstance(value, Mapping) or not value:
        return f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},"
    fields = []
    for name, item in value.items():
        if isinstance(item, list) and item:
            items = ",\n".join(f"      {json.dumps(i, ensure_ascii=False)}" for i in item)
            fields.append(f"    {json.dumps(name)}: [\n{items}\n    ]")
        else:
            fields.append(f"    {json.dumps(name)}: {json.dumps(item, ensure_ascii=False)}")
    return f"  {json.dumps(key)}: {{\n" + ",\n".join(fields) + "\n  },"


def _digest(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def verified(text: str) -> dict[str, Any] | None:
    """A lock's content, when it reads back as written (its digest covers every section and
    its format is this one); None for a lock that is unreadable or edited by hand."""
    try:
        data = json.loads(text)
        body = {k: v for k, v in data.items() if k not in _HEADER}
    except (ValueError, AttributeError):
        return None
    if data.get("digest") != _digest(body) or body.get("format") != LOCK_FORMAT:
        return None
    return body


def sections(body: Mapping[str, Any] | None) -> dict[str, Any]:
    """A verified lock's sections besides the sample's (kept by whoever writes the sample)."""
    return {k: v for k, v in (body or {}).items() if k not in SAMPLE_KEYS}


def parse_lock(text: str, names: Sequence[str]) -> Locked | None:
    """The lock's points (`names`: the sample's; none for a grid's halving), or None when it is
    unreadable, edited by hand or written for other parameters: every such lock is out of date."""
    return _locked(verified(text), names)


def _locked(body: Mapping[str, Any] | None, names: Sequence[str]) -> Locked | None:
    if body is None:
        return None
    try:
        if list(body.get("params", ())) != list(names):
            return None
        rows = tuple(
            tuple(None if v is None else checked(v) for v in row) for row in body.get("points", ())
        )
        rounds = tuple(int(k) for k in body.get("rounds", ()))
        sample = str(body.get("sample", ""))
        rungs = parse_rungs(body[RUNGS]) if RUNGS in body else None
        seeds = parse_seeds(body[SEEDS], len(names)) if SEEDS in body else None
        decisions = parse_decisions(body[DECISIONS]) if DECISIONS in body else ()
    except (ValueError, KeyError, TypeError, InvalidValue):
        return None
    if any(len(r) != len(names) for r in rows) or (rounds and len(rounds) != len(rows)):
        return None
    return Locked(sample, rows, rounds, rungs, seeds, decisions)


def locked_rows(sample: Sample, lock: Locked | None) -> tuple[tuple[Cell, ...], ...] | None:
    """The sample's points, when the lock belongs to it and holds exactly n of them (an
    adaptive search: the rounds proposed so far, at most n)."""
    if lock is None or lock.sample != sample.digest:
        return None
    if len(lock.rows) != sample.n and not (sample.adaptive and 0 < len(lock.rows) <= sample.n):
        return None
    return lock.rows


def stale_problem(doc: Document, shown: str, missing: bool = False) -> Problem:
    """The lock is missing (never written) or out of date: the command that writes it."""
    method = ((doc.data.get("params") or {}).get("sample") or {}).get("method")
    adaptive = method in {m for m in Method if m.adaptive}
    command = f"{invoked()} {'propose' if adaptive else 'lock'} {shown}"
    lock = lock_path(Path(shown)).name
    said = (
        f"the lock {lock} is missing: run {command} to write it"
        if missing
        else f"the lock is out of date: run {command}"
    )
    return Problem.at(doc.marks, doc.source, ("params", "sample"), said, key=True)


def collisions(rows: Sequence[Sequence[Cell]]) -> list[tuple[int, int]]:
    """(first, second) indices of points that share every value (after rounding)."""
    seen: dict[str, int] = {}
    found = []
    for i, row in enumerate(rows):
        ident = row_identity(row)
        if ident in seen:
            found.append((seen[ident], i))
        seen.setdefault(ident, i)
    return found


@dataclass(frozen=True)
class LockFile:
    """Where a manifest's lock is read from: the file beside it, or (`text`) the bytes a
    command is about to write there, checked with the manifest before they are written."""

    path: Path
    text: str | None = None

    def exists(self) -> bool:
        return self.text is not None or self.path.exists()

    def read(self, names: Sequence[str]) -> Locked | None:
        """The lock's points for `names` (`parse_lock`); None when missing or out of date."""
        return _locked(self.content(), names)

    def content(self) -> dict[str, Any] | None:
        """The whole lock, verified (`verified`); None when missing, unreadable or edited."""
        return self._body

    @functools.cached_property
    def _body(self) -> dict[str, Any] | None:
        """Read and verified once, whichever of the lock's readers asks first."""
        if self.text is not None:
            return verified(self.text)
        try:
            return verified(self.path.read_text(encoding="utf-8"))
        except OSError:
            return None
