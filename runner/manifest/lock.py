"""The lock file of a `params.sample` section: sampled points as data in the repository.

`sweep-runner lock` (or `propose`, round by round) writes the points beside the manifest,
`NAME.lock.json`; everything else (validate, expand, plan, submit) reads them and never samples.
The lock belongs to one sample section: its `sample` digest covers method, seed, digits and space
(not `n`: growing `n` appends, keeping every locked point as it is). Its `digest` covers the
whole content, so a hand-edited lock is refused. Both are checked on every load. A successive
halving's promoted points are its optional `rungs` key (a grid's halving has a lock of its own
with only that); a lock without it reads as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.errors import Problem
from runner.core.invoked import invoked
from runner.core.marks import Document
from runner.core.model import Cell
from runner.core.values import InvalidValue, canonical_json, checked
from runner.manifest.fidelity import RUNGS, RungLock, parse_rungs, rungs_json, rungs_text
from runner.manifest.sample import Method, Sample, row_identity

LOCK_SUFFIX = ".lock.json"
LOCK_FORMAT = 1


def lock_path(manifest: Path) -> Path:
    """`sweeps/x.yaml` -> `sweeps/x.lock.json` (not a manifest: the catalog reads .yaml files)."""
    return manifest.with_name(manifest.name.rsplit(".", 1)[0] + LOCK_SUFFIX)


def lock_text(
    sample: Sample | None,
    rows: Sequence[Sequence[Cell]],
    command: str,
    rounds: Sequence[int] | None = None,
    rungs: RungLock | None = None,
) -> str:
    """The lock's bytes: deterministic, one point a line, a header that says how to remake it.
    `rounds`: an adaptive search's round of each point (0 first); `rungs`: a successive
    halving's promoted points (`runner.manifest.fidelity`; a grid's lock has only those)."""
    body: dict[str, Any] = {"format": LOCK_FORMAT}
    if sample is not None:
        body.update(
            sample=sample.digest,
            method=sample.method,
            seed=sample.seed,
            params=list(sample.names),
            points=[list(r) for r in rows],
        )
    if rounds is not None:
        body["rounds"] = list(rounds)
    if rungs is not None:
        body[RUNGS] = rungs_json(rungs)
    sections = ["sample"] * (sample is not None) + ["fidelity"] * (rungs is not None)
    what = " and ".join(
        f"the {'points' if s == 'sample' else 'rungs'} of params.{s}" for s in sections
    )
    head = {
        "//": f"Written by `{command}`: {what}. Do not edit: change the"
        f" {' or '.join(sections)} section and run that command again.",
        **{k: v for k, v in body.items() if k not in ("points", "rounds", RUNGS)},
        "digest": _digest(body),
    }
    if rounds is not None:
        head["rounds"] = list(rounds)
    entries = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in head.items()]
    if rungs is not None:
        entries.append(f"  {json.dumps(RUNGS)}: {rungs_text(rungs)}")
    if sample is not None:
        points = ",\n".join("    " + json.dumps(list(r), ensure_ascii=False) for r in rows)
        entries.append('  "points": [\n' + points + "\n  ]")
    return "{\n" + ",\n".join(entries) + "\n}\n"


def _digest(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


@dataclass(frozen=True)
class Locked:
    """A lock file that reads back as it was written."""

    sample: str
    rows: tuple[tuple[Cell, ...], ...]
    """None where a conditional parameter is absent (null in the lock)."""
    rounds: tuple[int, ...] = ()
    """An adaptive search's round of each point; empty otherwise (all round 0)."""
    rungs: RungLock | None = None
    """A successive halving's promoted points (`runner.manifest.fidelity`), when proposed."""


def read_lock(path: Path, names: Sequence[str]) -> Locked | None:
    """The lock's points, or None when it is missing, unreadable, edited by hand or written for
    other parameters: every such lock is out of date."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return parse_lock(text, names)


def parse_lock(text: str, names: Sequence[str]) -> Locked | None:
    """`read_lock` of a lock's text (`names`: the sample's; none for a grid's halving)."""
    try:
        data = json.loads(text)
        body = {"format": data["format"]}
        if names or "sample" in data:
            body.update({k: data[k] for k in ("sample", "method", "seed", "params", "points")})
        body.update({k: data[k] for k in ("rounds", RUNGS) if k in data})
        if data.get("digest") != _digest(body) or body["format"] != LOCK_FORMAT:
            return None
        if list(body.get("params", ())) != list(names):
            return None
        rows = tuple(
            tuple(None if v is None else checked(v) for v in row) for row in body.get("points", ())
        )
        rungs = parse_rungs(body[RUNGS]) if RUNGS in body else None
    except (ValueError, KeyError, TypeError, InvalidValue):
        return None
    if any(len(r) != len(names) for r in rows):
        return None
    rounds = tuple(int(k) for k in body.get("rounds", ()))
    if rounds and len(rounds) != len(rows):
        return None
    return Locked(str(body.get("sample", "")), rows, rounds, rungs)


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
        if self.text is not None:
            return parse_lock(self.text, names)
        return read_lock(self.path, names)
