"""Idempotency keys, experiment names and spec hashes."""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from collections.abc import Mapping
from typing import Any

from runner.core.model import FORMAT_VERSION
from runner.core.values import Value, canonical_json

NAME_HEX = 12
MAX_NAME = 128


def point_key(sweep: str, workspace: str, revision: int, params: Mapping[str, Value]) -> str:
    """sha256 of the canonical JSON of everything that makes a point the same experiment.

    The task template is deliberately not part of it: editing the image shows as drift in the
    plan instead of silently re-running every point. Bump `revision` to re-run.
    """
    identity = {
        "format": FORMAT_VERSION,
        "sweep": sweep,
        "workspace": workspace,
        "revision": revision,
        "params": {k: _key_form(v) for k, v in params.items()},
    }
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def _key_form(value: Value) -> Value:
    """`normalize`, inlined for the common types: 3e6 and 3000000 are one key."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def experiment_name(sweep: str, key: str, prefix: str | None = None) -> str:
    """`<sweep>-<first 12 hex of the key>`, or `<prefix>-<12 hex>` from an `experiment_name`
    template: the key's hex is always there, so names stay unique. At most 128 characters (a long
    prefix is cut)."""
    head = sweep if prefix is None else prefix[: MAX_NAME - NAME_HEX - 1]
    return f"{head}-{key[:NAME_HEX]}"


SPEC_HASH_VERSION = 2
"""How `spec_hash` reads a spec. 1: the whole document as rendered (env in the order written,
the manifest's path in the description). 2: the canonical form (`canonical_spec`)."""


def canonical_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What the spec hash covers: the spec without its description (which names the manifest's
    path and is not what runs). The renderer already writes env vars sorted by name."""
    return {**spec, "description": ""}


def spec_hash(spec: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a spec's canonical form (hash version 2)."""
    return hashlib.sha256(canonical_json(canonical_spec(spec)).encode()).hexdigest()


def pack_spec(spec: Mapping[str, Any]) -> str:
    """A spec as one short ledger field: canonical JSON, zlib, base64 (about 600 characters)."""
    raw = zlib.compress(canonical_json(spec).encode(), 6)  # 9 cost ~1 ms a create for ~2% less
    return base64.b64encode(raw).decode("ascii")


def unpack_spec(packed: str) -> Mapping[str, Any] | None:
    """The spec `pack_spec` stored, or None when there is none (or it cannot be read)."""
    if not packed:
        return None
    try:
        data = json.loads(zlib.decompress(base64.b64decode(packed)))
    except (ValueError, zlib.error):
        return None
    return data if isinstance(data, dict) else None
