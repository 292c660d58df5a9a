"""Clusters asked for by what they are: `beaker.gpu_type`, `beaker.cluster_tags` and globs in
`beaker.clusters` (gantry's `--gpu-type`, `--tag` and cluster patterns).

A selector is resolved once, with a token, by `lock` (`runner.locking.clusters`), into the lock's
`clusters` section: the selector as it was resolved and each cluster with its GPU type. Every
other command reads that section and never asks Beaker: the spec lists the locked clusters, so
it renders byte for byte as the same manifest with that list written out, and the plan (which
has no token) shows them. A selector that no longer matches its section makes the lock out of
date, as a changed sample does; a draft's is not resolved until `lock` runs with a token, and
meanwhile ignored (a draft runs on this machine only, where clusters mean nothing): a note says
so, and its specs list no cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.errors import Problem
from runner.core.invoked import invoked
from runner.core.marks import Document, KeyPath
from runner.core.model import ClusterSelector, LockedCluster
from runner.manifest.lock import LockFile, lock_path

SECTION = "clusters"
"""The lock's key for what a selector resolved to."""
SELECTOR_FIELDS = ("gpu_type", "cluster_tags", "clusters")
GLOB = "*"


def selector(beaker: Mapping[str, Any]) -> ClusterSelector | None:
    """The sweep's cluster selector (schema-valid `beaker` section), or None when it lists
    clusters by name only (they go into the spec as written)."""
    patterns = tuple(beaker.get("clusters", ()))
    gpu_types = tuple(beaker.get("gpu_type", ()))
    tags = tuple(beaker.get("cluster_tags", ()))
    if not gpu_types and not tags and not any(GLOB in p for p in patterns):
        return None
    return ClusterSelector(patterns, gpu_types, tags)


def section(asked: ClusterSelector, found: tuple[LockedCluster, ...]) -> dict[str, Any]:
    """The lock's `clusters` section: the selector and what it resolved to, sorted by name."""
    resolved = [{"name": c.name, "gpu_type": c.gpu_type} for c in sorted(found)]
    return {"selector": asked.as_json(), "resolved": resolved}


def locked(content: Mapping[str, Any] | None, asked: ClusterSelector) -> tuple[LockedCluster, ...]:
    """The clusters the lock resolved this very selector to; () when it holds none for it (a
    missing lock, another selector's section, or one that names no cluster)."""
    found = (content or {}).get(SECTION)
    if not isinstance(found, Mapping) or found.get("selector") != asked.as_json():
        return ()
    try:
        clusters = tuple(
            LockedCluster(str(c["name"]), str(c.get("gpu_type", ""))) for c in found["resolved"]
        )
    except (KeyError, TypeError, AttributeError):
        return ()
    return clusters


@dataclass(frozen=True)
class Selected:
    """A sweep's clusters as its manifest and its lock say them."""

    selector: ClusterSelector | None
    clusters: tuple[LockedCluster, ...] = ()
    """With a selector: what the lock resolved it to (empty when missing or out of date)."""
    problems: tuple[Problem, ...] = ()
    stale: Problem | None = None
    """The lock is missing or out of date for the selector (what `lock` mends)."""
    note: Problem | None = None
    """A draft's selector not resolved: ignored on this machine, said once (a warning)."""


def check(doc: Document, lock: LockFile) -> Selected:
    """The sweep's selector and its locked clusters, and what is wrong: hostnames beside a
    selector (gantry refuses them too), a lock missing or out of date for the selector, or a
    section left by a selector since removed."""
    beaker = doc.data["beaker"]
    asked = selector(beaker)
    content = lock.content()
    if asked is None:
        left = content is not None and SECTION in content
        said = "the lock's clusters are out of date (no selector asks for them)"
        return Selected(None, stale=_stale(doc, ("beaker", "clusters"), said) if left else None)
    path: KeyPath = ("beaker", next(f for f in SELECTOR_FIELDS if f in beaker))
    out = []
    if "hostnames" in beaker:
        message = (
            f"hostnames cannot be combined with {path[-1]}: the selector picks clusters, a host"
            " list pins machines (as gantry refuses); drop one"
        )
        out.append(Problem.at(doc.marks, doc.source, ("beaker", "hostnames"), message, key=True))
    found = locked(content, asked)
    if found:
        return Selected(asked, found, tuple(out))
    name = lock_path(Path(doc.source)).name
    if not lock.exists():
        said = f"the lock {name} is missing"
    elif content is not None and SECTION not in content:
        said = f"the lock {name} has no clusters yet"
    else:
        said = "the lock's clusters are out of date"
    if doc.data.get("draft") is True:  # never submitted to Beaker, where the clusters count
        return Selected(asked, (), tuple(out), note=draft_note(doc, path, said))
    return Selected(asked, (), tuple(out), _stale(doc, path, said))


def draft_note(doc: Document, path: KeyPath, said: str) -> Problem:
    """A draft's selector that no lock resolves: a warning, not a problem (the local backend
    ignores clusters, and Beaker never runs a draft)."""
    message = (
        f"warning: {said}: this draft's cluster selector is ignored on this machine (the local"
        f" backend uses no cluster); before it goes to Beaker, run {invoked()} lock {doc.source}"
        " with a Beaker token"
    )
    return Problem.at(doc.marks, doc.source, path, message, key=True)


def _stale(doc: Document, path: KeyPath, said: str) -> Problem:
    command = f"{invoked()} lock {doc.source}"
    message = f"{said}: run {command} (with a Beaker token) to resolve the clusters"
    return Problem.at(doc.marks, doc.source, path, message, key=True)
