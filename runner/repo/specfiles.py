"""`--save-specs`: each rendered point as a YAML spec file that `BeakerExperimentSpec.from_file` reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runner import yaml12
from runner.core.invoked import invoked
from runner.plan import SweepPlan


def save(directory: Path, plans: Sequence[SweepPlan]) -> int:
    """Write DIR/<sweep>/<experiment>.yaml for every point; returns how many were written."""
    written = 0
    for plan in plans:
        target = directory / plan.sweep.name
        target.mkdir(parents=True, exist_ok=True)
        for row in plan.rows:
            if row.rendered is None:
                continue
            head = (
                f"# Beaker experiment spec for {row.name} (sweep {plan.sweep.name}, {plan.sweep.path}).\n"
                f"# Rendered by `{invoked()} expand --save-specs`; key {row.key}.\n"
            )
            (target / f"{row.name}.yaml").write_text(
                head + yaml12.dump(row.rendered.spec), encoding="utf-8"
            )
            written += 1
    return written
