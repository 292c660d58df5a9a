"""Whether a successive halving's promoted points can resume: `status`'s note on checkpoints.

With `params.fidelity.checkpoint`, each promoted point's spec names where its parent wrote its
checkpoint (`SWEEP_PARENT_CHECKPOINT`). Nothing here reads remote storage; two things are
checked:

- where the backend keeps that storage on this machine (`SeesCheckpoints`: the local backend,
  `.runs/<sweep>/checkpoints/`), that something is at each path, for every promoted point that
  has not succeeded (to submit, running, or failed): a parent that wrote nothing there leaves a
  point that would start over, or fail;
- anywhere (Beaker too), a promoted point that failed saying the trainer's missing-checkpoint
  line (`[sweep-checkpoint-missing] PATH`, `runner.observe.live`), from the one bounded read of
  its log the reader makes (`failed`: each reader that reads logs reads these).

What is not checked: on Beaker, a checkpoint before a promoted point runs (the runner cannot
see weka or a dataset), nor whether what is there is a whole, loadable checkpoint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from runner.backends import Backend, Experiment, ExperimentState, Results, SeesCheckpoints
from runner.observe.tails import Tailed
from runner.plan import Row, SweepPlan
from runner.render.shape import PARENT_CHECKPOINT_VAR, PARENT_KEY

SHOWN = 3
"""Points a note names before it counts the rest."""


def _resumes(row: Row) -> Mapping[str, str]:
    """A promoted point's parent's key and checkpoint, as its spec says them ({} for others)."""
    if row.rendered is None or PARENT_CHECKPOINT_VAR not in row.rendered.spec_json:
        return {}
    (task, *_) = row.rendered.spec["tasks"]
    found = {v["name"]: v.get("value", "") for v in task.get("envVars", ())}
    if PARENT_CHECKPOINT_VAR not in found:
        return {}
    return {"parent": found.get(PARENT_KEY, ""), "path": found[PARENT_CHECKPOINT_VAR]}


def failed(plan: SweepPlan, found: Results) -> dict[str, Experiment]:
    """The failed promoted points of a halving that names its checkpoints: their logs say
    whether the trainer found its parent's checkpoint missing."""
    ladder = plan.sweep.space.ladder
    if ladder is None or ladder.checkpoint is None:
        return {}
    out = {}
    for row in plan.rows:
        experiment = found.experiments.get(row.experiment)
        if experiment is not None and experiment.state is ExperimentState.FAILED and _resumes(row):
            out[row.experiment] = experiment
    return out


def checked(backend: Backend, plan: SweepPlan, found: Results, read: Tailed) -> Tailed:
    """What was read, with a note naming each promoted point whose parent's checkpoint is not
    where the manifest says (seen here, or said by its failed run)."""
    ladder, sweep = plan.sweep.space.ladder, plan.sweep
    if ladder is None or ladder.checkpoint is None:
        return read
    names = {row.key: row.experiment for row in plan.rows}
    lost: list[str] = []
    for row in plan.rows:
        resumes = _resumes(row)
        if not resumes:
            continue
        experiment = found.experiments.get(row.experiment)
        parent = names.get(resumes["parent"], "its parent")
        said = read.missing.get(row.experiment, "")
        if said:
            lost.append(f"{row.experiment} (failed: no checkpoint at {said})")
        elif experiment is not None and experiment.state is ExperimentState.SUCCEEDED:
            continue
        elif isinstance(backend, SeesCheckpoints) and not backend.has_checkpoint(
            sweep, resumes["path"]
        ):
            lost.append(f"{row.experiment} ({parent} left nothing at {resumes['path']})")
    if not lost:
        return read
    shown = "; ".join(lost[:SHOWN]) + (
        f"; and {len(lost) - SHOWN} more" if len(lost) > SHOWN else ""
    )
    note = (
        f"{len(lost)} promoted point(s) without their parent's checkpoint where"
        f" params.fidelity.checkpoint says: {shown}"
    )
    return dataclasses.replace(read, note="; ".join(n for n in (read.note, note) if n))
