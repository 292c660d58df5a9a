"""7. `status` of a 1 000-point sweep on Beaker: calls and wall time at 50 ms latency.

The sweep is submitted and grouped against a fake Beaker without latency (setup, untimed); every
point gets a state (1 in 250 failed) and metrics on the fake; then the latency is set and one
`python -m runner status --format json` is timed in-process, with the API calls it made counted
by kind. The whole probe runs in a process of its own: gRPC reads its CA file once per process,
and the submission group's standalone fake uses another one.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import (
    PROJECT,
    Config,
    Row,
    count,
    fake_beaker,
    manifest_text,
    python,
    write_sweep,
)
from tests.benchmarks.common import seconds as fmt_seconds

LATENCY = 0.05
POINTS = 1_000
QUICK_POINTS = 200
FAILED_EVERY = 250


def probe(points: int, latency: float) -> dict[str, object]:
    """Set up, then time one status; returns the figures (run in a fresh process)."""
    from runner.backends.beaker import BeakerBackend
    from runner.cli import main
    from runner.ledger.store import LedgerStore
    from runner.operate.membership import ensure_groups
    from runner.plan import catalog
    from runner.report.progress import Progress
    from runner.submit import Options, Submitter

    with (
        tempfile.TemporaryDirectory(prefix="status-bench-") as tmp,
        fake_beaker(Path(tmp)) as fake,
    ):
        root = Path(tmp) / "repo"
        write_sweep(root, "st", manifest_text("st", (10, 10, points // 100), max_points=points))
        plans = catalog.load(root, []).plans()
        backend = BeakerBackend()
        options = Options(root=root, commit="0" * 40, concurrency=16)
        Submitter(backend, options, Progress(io.StringIO(), io.StringIO())).run(plans)
        ensure_groups(backend, plans, LedgerStore(root))
        backend.close()
        for i, exp in enumerate(fake.experiments()):
            fake.set_job_status(exp.id, "failed" if i % FAILED_EVERY == 0 else "succeeded")
            fake.set_metrics(exp.id, {"loss": 1.0 / (1 + i), "tokens": i * 1000})
        fake.latency = latency
        fake.reset_calls()
        out = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out):
            main(["-C", str(root), "status", "--backend", "beaker", "--format", "json"])
        elapsed = time.perf_counter() - started
        shown = json.loads(out.getvalue())["sweeps"][0]["points"]
        return {
            "seconds": elapsed,
            "calls": dict(fake.calls),
            "points": len(shown),
            "with_metrics": sum(bool(p["metrics"]) for p in shown),
            "failed": sum(p["state"] == "failed" for p in shown),
        }


def run(config: Config) -> list[Row]:
    points = QUICK_POINTS if config.quick else POINTS
    code = f"import json; from tests.benchmarks.status import probe; print(json.dumps(probe({points}, {LATENCY})))"
    done = subprocess.run(
        python("-c", code), cwd=PROJECT, capture_output=True, text=True, check=True, timeout=600
    )
    figures = json.loads(done.stdout.splitlines()[-1])
    calls: dict[str, int] = figures["calls"]
    total = sum(calls.values())
    assert figures["points"] == figures["with_metrics"] == points, figures
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
    config.note(
        f"Status of {count(points)} points ({figures['failed']} failed): {total} calls ({by_kind});"
        " beaker-py pages listings 50 at a time; one job listing per failed point, for its exit code"
        " and duration (the organization is looked up once for them all)."
    )
    per_point = points * LATENCY
    return [
        Row(
            "7",
            f"status of a {count(points)}-point sweep, {LATENCY * 1e3:g} ms latency",
            f"{fmt_seconds(figures['seconds'])}; {total} calls",
            f"one call per point: {points} calls, {per_point:.0f} s",
            f"{total / points:.3f} calls a point",
            "O(pages) calls, not O(points)",
            "met" if total < points / 10 else "**missed**",
        )
    ]


def _main() -> None:  # pragma: no cover - a manual entry point
    print(json.dumps(probe(POINTS, LATENCY)))


if __name__ == "__main__":
    _main()
