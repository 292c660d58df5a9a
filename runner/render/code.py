"""`code:` at submit time: the repository and the commit each point's experiment runs.

Rendering is pure, so a manifest's spec (and its hash, its key) never holds the commit; it is
added to the spec sent to the backend, as SWEEP_CODE_COMMIT (and SWEEP_CODE_REPO, unless the
manifest names the repository), in every task that has `code:`. The ledger records the commit
with each point (`Entry.commit`), and a restart reruns the experiment, so the same commit.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from runner.core.model import Rendered, Sweep
from runner.core.values import canonical_json


@dataclass(frozen=True)
class Code:
    commit: str
    """The commit the experiments check out: the one that submits them."""
    repo: str = ""
    """The clone URL, when the manifest names none ("" locally: the checkout is cloned)."""


def uses_code(sweep: Sweep) -> bool:
    return any("code" in task for task in sweep.tasks)


def at_commit(point: Rendered, code: Code) -> Rendered:
    """The point with the commit (and the repository) in each `code:` task's environment;
    `spec_hash` stays the manifest's."""
    spec = json.loads(point.spec_json)
    changed = False
    for task in spec.get("tasks", ()):
        env = task.get("envVars", [])
        names = {var["name"] for var in env}
        if "SWEEP_CODE_DIR" not in names:
            continue
        env.append({"name": "SWEEP_CODE_COMMIT", "value": code.commit})
        if code.repo and "SWEEP_CODE_REPO" not in names:
            env.append({"name": "SWEEP_CODE_REPO", "value": code.repo})
        task["envVars"] = sorted(env, key=lambda var: var["name"])
        changed = True
    return dataclasses.replace(point, spec_json=canonical_json(spec)) if changed else point
