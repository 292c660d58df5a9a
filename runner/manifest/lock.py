"""The lock file of a `params.sample` section: sampled points as data in the repository.

`sweep-runner lock` (or `propose`, round by round) writes the points beside the manifest,
`NAME.lock.json`; everything else (validate, expand, plan, submit) reads them and never samples.
The lock belongs to one sample section: its `sample` digest covers method, seed, digits and space
(not `n`: growing `n` appends, keeping every locked point as it is). Its `digest` covers the
whole content, so a hand-edited lock is refused. Both are checked on every load. A search's
known points are its first points (`enqueued`: how many), and a warm start's prior points its
`seeds` (`runner.manifest.seeds`); a lock without them reads as before.
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
from runner.manifest.sample import Method, Sample, row_identity
from runner.manifest.seeds import SEEDS, Seeds, parse_seeds, seeds_json, seeds_text

LOCK_SUFFIX = ".lock.json"
LOCK_FORMAT = 1


def lock_path(manifest: Path) -> Path:
    """`sweeps/x.yaml` -> `sweeps/x.lock.json` (not a manifest: the catalog reads .yaml files)."""
    return manifest.with_name(manifest.name.rsplit(".", 1)[0] + LOCK_SUFFIX)


def lock_text(
    sample: Sample,
    rows: Sequence[Sequence[Cell]],
    command: str,
    rounds: Sequence[int] | None = None,
    seeds: Seeds | None = None,
) -> str:
    """The lock's bytes: deterministic, one point a line, a header that says how to remake it.
    `rounds`: an adaptive search's round of each point (0 first); `seeds`: its prior points."""
    body: dict[str, Any] = {
        "format": LOCK_FORMAT,
        "sample": sample.digest,
        "method": sample.method,
        "seed": sample.seed,
        "params": list(sample.names),
        "points": [list(r) for r in rows],
    }
    if rounds is not None:
        body["rounds"] = list(rounds)
    if sample.enqueue:
        body["enqueued"] = len(sample.enqueue)
    if seeds is not None:
        body[SEEDS] = seeds_json(seeds)
    points = ",\n".join("    " + json.dumps(list(r), ensure_ascii=False) for r in rows)
    head = {
        "//": f"Written by `{command}`: the points of params.sample. Do not edit: change the"
        " sample section and run that command again.",
        **{k: v for k, v in body.items() if k not in ("points", "rounds", SEEDS)},
        "digest": _digest(body),
    }
    if rounds is not None:
        head["rounds"] = list(rounds)
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines += [f"  {json.dumps(SEEDS)}: {seeds_text(seeds)},"] if seeds is not None else []
    return "{\n" + "\n".join(lines) + '\n  "points": [\n' + points + "\n  ]\n}\n"


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
    seeds: Seeds | None = None
    """A warm start's prior points, once `propose` copied them."""


def read_lock(path: Path, names: Sequence[str]) -> Locked | None:
    """The lock's points, or None when it is missing, unreadable, edited by hand or written for
    other parameters: every such lock is out of date."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return parse_lock(text, names)


def parse_lock(text: str, names: Sequence[str]) -> Locked | None:
    """`read_lock` of a lock's text."""
    try:
        data = json.loads(text)
        body = {k: data[k] for k in ("format", "sample", "method", "seed", "params", "points")}
        body.update({k: data[k] for k in ("rounds", "enqueued", SEEDS) if k in data})
        if data.get("digest") != _digest(body) or body["format"] != LOCK_FORMAT:
            return None
        if list(body["params"]) != list(names):
            return None
        rows = tuple(
            tuple(None if v is None else checked(v) for v in row) for row in body["points"]
        )
        seeds = parse_seeds(body[SEEDS], len(names)) if SEEDS in body else None
    except (ValueError, KeyError, TypeError, InvalidValue):
        return None
    if any(len(r) != len(names) for r in rows):
        return None
    rounds = tuple(int(k) for k in body.get("rounds", ()))
    if rounds and len(rounds) != len(rows):
        return None
    return Locked(str(body["sample"]), rows, rounds, seeds)


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
