"""`gpu_hours`, a value every finished point has without writing it: measured from its jobs.

On Beaker, each job's start and end × the GPUs it held, summed over every replica, task and
restart (`Backend.usage`); locally, the run's wall time × the GPUs its spec declared. It is put
among the point's metrics (replacing one a job wrote under that name), so it is usable as any
metric is: an objective or a constraint of a search, `stop_when`, `status`, `report`, the ranking.

It costs a job listing per task of each finished point on Beaker, so it is measured only for
the sweeps whose readers need it: a search judged by it (an objective or a constraint), a
`stop_when` on it, or a reader that asked for it by name (`status --best`, `report --metric`).
Plain `status` of any other sweep makes no call for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from runner.backends import Backend, Results
from runner.core.aims import GPU_HOURS
from runner.core.model import Sweep

SECONDS_PER_HOUR = 3600.0


def wanted(sweep: Sweep, asked: Collection[str]) -> bool:
    """Whether a reader of the sweep needs its points' GPU-hours: the sweep weighs them (an
    objective, a constraint, `stop_when`), or the reader asked for them."""
    names = set(asked) | set(sweep.search.aims.metrics)
    target = sweep.limits.stop_when
    names |= {target.metric} if target is not None else set()
    return GPU_HOURS in names


def measured(backend: Backend, sweep: Sweep, found: Results) -> Results:
    """The look with each finished experiment's `gpu_hours` among its metrics."""
    final = [e for e in found.experiments.values() if e.state.final]
    used = backend.usage(sweep, final) if final else {}
    experiments = {
        name: dataclasses.replace(
            e, metrics={**e.metrics, GPU_HOURS: used[e.id].gpu_seconds / SECONDS_PER_HOUR}
        )
        if e.id in used
        else e
        for name, e in found.experiments.items()
    }
    return dataclasses.replace(found, experiments=experiments)
