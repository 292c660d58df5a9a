"""Drift: whether a submitted point's spec still matches what would run now, and what changed.

The spec hash covers a canonical form of the spec (`runner.core.keys.canonical_spec`: env vars as a
set, no description, so no manifest path), so moving a manifest or reordering `env` or the grid
changes nothing. Entries written before that (hash version 1) hashed the document as rendered
then; `legacy_hash` rebuilds that document from today's rendering (env in the order written,
without the RESULTS_DIR the runner adds now), so such a ledger drifts only where what runs
changed. Entries since version 2 store the canonical spec they submitted, so a `~` can say,
field by field, what changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.core.keys import SPEC_HASH_VERSION, canonical_spec, unpack_spec
from runner.core.model import Rendered
from runner.core.values import canonical_json
from runner.ledger import Entry

ADDED_BY_VERSION_2 = frozenset({"RESULTS_DIR"})
"""Env vars that version 1 did not set: their absence in an old entry is not drift."""
_MISSING = object()


@dataclass(frozen=True)
class FieldChange:
    """One field of the spec that differs: before and after as JSON text, None when absent."""

    field: str
    before: str | None
    after: str | None

    def __str__(self) -> str:
        if self.before is None:
            return f"+ {self.field}: {self.after}"
        if self.after is None:
            return f"- {self.field}: {self.before}"
        return f"~ {self.field}: {self.before} -> {self.after}"


def matches(entry: Entry, rendered: Rendered, legacy_env: Sequence[Sequence[str]]) -> bool:
    """Whether the entry's spec is the one that would be submitted now."""
    if entry.hash_version == SPEC_HASH_VERSION:
        return entry.spec_hash == rendered.spec_hash
    if entry.hash_version == 1:
        return entry.spec_hash == legacy_hash(rendered.spec, legacy_env)
    return False  # written by a newer runner: shown as drift, with a note saying why


def legacy_hash(spec: Mapping[str, Any], legacy_env: Sequence[Sequence[str]]) -> str:
    """The version 1 hash of today's spec: each task's env vars in the order version 1 wrote
    them (`legacy_env`, per task), without those version 2 added, over the whole document."""
    tasks = []
    for task, order in zip(spec["tasks"], legacy_env, strict=True):
        rank = {name: i for i, name in enumerate(order)}
        env = [v for v in task["envVars"] if v["name"] not in ADDED_BY_VERSION_2]
        env.sort(key=lambda var: rank.get(var["name"], len(rank)))
        tasks.append({**task, "envVars": env})
    return hashlib.sha256(canonical_json({**spec, "tasks": tasks}).encode()).hexdigest()


def changes(entry: Entry, rendered: Rendered) -> tuple[tuple[FieldChange, ...], str | None]:
    """The field-by-field difference of a drifted point, or a note saying why there is none."""
    before = unpack_spec(entry.spec)
    if before is None:
        if entry.hash_version > SPEC_HASH_VERSION:
            return (), f"submitted by a newer runner (spec hash version {entry.hash_version})"
        return (), "submitted before the ledger kept specs (hash version 1): no field diff"
    old, new = _flatten(before), _flatten(canonical_spec(rendered.spec))
    out = []
    for field in sorted(old.keys() | new.keys()):
        a, b = old.get(field, _MISSING), new.get(field, _MISSING)
        if a != b:
            out.append(FieldChange(field, _text(a), _text(b)))
    return tuple(out), None


def _text(value: object) -> str | None:
    return None if value is _MISSING else json.dumps(value, ensure_ascii=False)


def _flatten(node: Any, path: str = "") -> dict[str, Any]:
    """Leaves by field path (`tasks[0].image.beaker`); env vars by name, not by position."""
    out: dict[str, Any] = {}
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f"{path}.{key}" if path else str(key)
            if key == "envVars" and isinstance(value, list):
                for var in value:
                    rest = {k: v for k, v in var.items() if k != "name"}
                    leaf = rest.get("value", rest) if len(rest) == 1 else rest
                    out.update(_flatten(leaf, f"{child}.{var['name']}"))
            elif key == "description" and value == "":
                continue
            else:
                out.update(_flatten(value, child))
    elif isinstance(node, list) and node:
        for i, item in enumerate(node):
            out.update(_flatten(item, f"{path}[{i}]"))
    else:
        out[path] = node
    return out
