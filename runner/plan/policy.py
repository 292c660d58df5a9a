"""The repository's budget policy, `sweeps/policy.yaml`: limits a plan is judged by.

Not a manifest (the catalog skips it). Loaded like one: YAML 1.2 with positions, then its own
schema (`schemas/policy.schema.json`), so a bad policy is one `file:line:col: field: message`.
No policy file means no limits: nothing is blocked, the costs are still shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runner.core.errors import ManifestError
from runner.core.marks import Document, Marks
from runner.core.model import Priority
from runner.manifest.schema import POLICY_SCHEMA, schema_problems
from runner.yaml12 import load, load_file

POLICY_PATH = "sweeps/policy.yaml"
"""Where the policy lives, relative to the repository root."""
DEFAULT_LABEL = "sweep-budget-approved"


@dataclass(frozen=True, order=True)
class Allotment:
    """A team's allocation (`priority_allocation`): at most `gpus` GPUs of the workspace's
    queued and running work at `priority` on `cluster` (`runner.plan.allocation`)."""

    cluster: str
    priority: Priority
    gpus: int


@dataclass(frozen=True)
class Policy:
    source: str
    """The file it was read from (shown in messages), e.g. 'sweeps/policy.yaml@abc123'."""
    max_gpu_hours_per_merge: float | None = None
    max_gpu_hours_per_sweep: float | None = None
    max_gpus_per_point: int | None = None
    approval_priorities: tuple[str, ...] = ()
    approval_clusters: tuple[str, ...] = ()
    approval_label: str = DEFAULT_LABEL
    marks: Marks | None = None
    priority_allocation: tuple[Allotment, ...] = ()

    @property
    def limits_anything(self) -> bool:
        return any(
            (
                self.max_gpu_hours_per_merge is not None,
                self.max_gpu_hours_per_sweep is not None,
                self.max_gpus_per_point is not None,
                self.approval_priorities,
                self.approval_clusters,
            )
        )


NO_POLICY = Policy("(no policy file)")


def _from(doc: Document) -> Policy:
    problems = schema_problems(doc, POLICY_SCHEMA)
    if problems:
        raise ManifestError(problems)
    data = doc.data
    return Policy(
        doc.source,
        data.get("max_gpu_hours_per_merge"),
        data.get("max_gpu_hours_per_sweep"),
        data.get("max_gpus_per_point"),
        tuple(data.get("approval_priorities", ())),
        tuple(data.get("approval_clusters", ())),
        data.get("approval_label", DEFAULT_LABEL),
        doc.marks,
        tuple(
            sorted(
                Allotment(cluster, Priority(priority), int(gpus))
                for cluster, levels in (data.get("priority_allocation") or {}).items()
                for priority, gpus in levels.items()
            )
        ),
    )


def parse(text: str | None, source: str = POLICY_PATH) -> Policy:
    """A policy from its text; None (no file): NO_POLICY. ManifestError names file and line."""
    if text is None:
        return NO_POLICY
    return _from(load(text, source))


def read(root: Path) -> Policy:
    """The policy of the working tree at `root` (what `validate` and `submit` judge by)."""
    path = root / POLICY_PATH
    if not path.exists():
        return NO_POLICY
    return _from(load_file(path, POLICY_PATH))
