"""The lab: a discrete-event simulation of GPUs, Beaker's queue, the workflows' schedules and
the reviewers, in which the runner's own search functions decide (issue 47). `world` is the lab,
`searches` the searches it drives, `families` the learning curves, `figures` what is measured,
`bench` the benchmark group (`python -m tests.benchmarks --only lab`)."""

from __future__ import annotations

from tests.benchmarks.lab.bench import run

__all__ = ["run"]
