"""`lock`'s placement step: resolve a sweep's cluster selector with gantry's rules, from one
cluster listing per organization, into the lock's `clusters` section.

gantry's rules (`gantry run --cluster/--tag/--gpu-type`): a cluster whose maximum task timeout is
0 takes no tasks and is left out; each pattern of `beaker.clusters` matches names and aliases
(a glob with `*`, else the exact name) within its organization, and a pattern that matches no
cluster is an error; every tag of `cluster_tags` must be the cluster's; a `gpu_type` matches
whole words of the cluster's GPU type, in any case (`h100` matches `NVIDIA H100`, `a100 80gb`
matches `NVIDIA A100 80GB`, but `a10` is not `A100` nor `l4` `L40S`: gantry's substring would
take those). Nothing left is an error too. The lock lists what is left by name, each with its
GPU type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from runner.backends.placing import Cluster, Placing
from runner.core.errors import ManifestError, Problem
from runner.core.files import write_atomic
from runner.core.model import ClusterSelector, LockedCluster, Sweep
from runner.manifest import Loaded, Locks, relock
from runner.manifest.clusters import SECTION, section
from runner.manifest.lock import LockFile, lock_path, rewritten, sections


@dataclass(frozen=True)
class Resolved:
    """What `lock` did to one sweep's clusters: what they resolved to, and the lock's new text
    (None: unchanged)."""

    clusters: tuple[LockedCluster, ...]
    text: str | None = None


def resolve(sweep: Sweep, found: Sequence[Cluster]) -> tuple[LockedCluster, ...]:
    """The clusters the sweep's selector picks from `found`, sorted by name; ManifestError (one
    line per pattern that matches nothing, or one when nothing is left)."""
    asked = sweep.placement.selector
    assert asked is not None
    open_ = [c for c in found if c.takes_tasks]
    problems: list[Problem] = []
    picked: dict[str, Cluster] = {}
    for i, pattern in enumerate(asked.patterns):
        matches = [c for c in open_ if _matches(c, pattern)]
        if not matches:
            said = f"{pattern!r} matches no cluster that takes tasks"
            problems.append(
                Problem.at(sweep.marks, str(sweep.path), ("beaker", "clusters", i), said)
            )
        picked.update((c.full_name, c) for c in matches)
    if problems:
        raise ManifestError(problems)
    left = [c for c in picked.values() if _fits(c, asked)]
    if not left:
        said = _wanted(asked)
        field = "gpu_type" if asked.gpu_types else "cluster_tags"
        raise ManifestError([Problem.at(sweep.marks, str(sweep.path), ("beaker", field), said)])
    return tuple(sorted(LockedCluster(c.full_name, c.gpu_type) for c in left))


def _matches(cluster: Cluster, pattern: str) -> bool:
    org, _, name = pattern.partition("/")
    if cluster.org != org:
        return False
    names = (cluster.name, *cluster.aliases)
    if "*" in name:
        return any(fnmatchcase(n, name) for n in names)
    return name in names


def _fits(cluster: Cluster, asked: ClusterSelector) -> bool:
    if not all(tag in cluster.tags for tag in asked.tags):
        return False
    return not asked.gpu_types or any(_names(g, cluster.gpu_type) for g in asked.gpu_types)


def _names(asked: str, gpu_type: str) -> bool:
    """Whether `asked` is whole words of `gpu_type`, in order (any case, `-` or `_` as spaces)."""
    words, found = _words(asked), _words(gpu_type)
    return bool(words) and any(
        found[i : i + len(words)] == words for i in range(len(found) - len(words) + 1)
    )


def _words(text: str) -> list[str]:
    return text.casefold().replace("-", " ").replace("_", " ").split()


def _wanted(asked: ClusterSelector) -> str:
    said = [f"tagged {', '.join(asked.tags)}"] if asked.tags else []
    said += [f"with {' or '.join(asked.gpu_types)} GPUs"] if asked.gpu_types else []
    return f"no cluster of {', '.join(asked.patterns)} that takes tasks is {' and '.join(said)}"


def orgs(asked: ClusterSelector) -> list[str]:
    """The organizations the selector's patterns name: one cluster listing each."""
    return sorted({p.partition("/")[0] for p in asked.patterns})


def lock_clusters(loaded: Loaded, path: Path, command: str, placing: Placing) -> Resolved:
    """Resolve the sweep's selector and write it into the lock at `path` (the manifest's), the
    lock's other sections kept; nothing is written when nothing changed, nor when the manifest
    would not load with the new lock (ManifestError). `command`: what the lock says wrote it."""
    sweep = loaded.sweep
    asked = sweep.placement.selector
    assert asked is not None
    found = resolve(sweep, placing.clusters(orgs(asked)))
    target = lock_path(path)
    content = LockFile(target).content()
    text = rewritten(content, command, {**sections(content), SECTION: section(asked, found)})
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return Resolved(found)
    # A sample not drawn yet is `lock`'s next step (or `propose`'s): not a problem here.
    sampled = loaded.sweep.search.sample is not None
    relock(loaded, path, text, Locks.MAY_BE_STALE if sampled else Locks.CURRENT)
    write_atomic(target, text)
    return Resolved(found, text)


def drop_clusters(path: Path, command: str) -> bool:
    """The manifest at `path` asks for clusters by name now: drop its lock's `clusters`
    section (the lock file too, when nothing else is in it). Whether anything was dropped."""
    target = lock_path(path)
    content = LockFile(target).content()
    if content is None or SECTION not in content:
        return False
    kept = {k: v for k, v in sections(content).items() if k != SECTION}
    if "points" not in content and not kept:
        target.unlink()
        return True
    write_atomic(target, rewritten(content, command, kept))
    return True
