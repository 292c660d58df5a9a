"""12. One `submit --restart-failed` of a capped, guarded sweep: the Beaker calls it makes.

The acceptance figure of issue 31: the restarts, the max_running cap, the failure budget and the
adoption read one look at the sweep before the creates, and the duplicate check one after, so
the sweep is listed twice and the organization resolved once (it was 6 listings and 4
resolutions). The sweep (6 points, max_running 2, max_failures 4) is submitted, one point fails
and one succeeds; then one `python -m runner submit --restart-failed` is run in-process on a
fresh fake Beaker and its calls are counted by kind. The probe runs in a process of its own, as
the status group's does. `PYTHONPATH=<an older tree> python -m tests.benchmarks.restart` prints
the same figures for another version of the runner.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import tempfile
from pathlib import Path

from tests.benchmarks.common import (
    PROJECT,
    WORKSPACE,
    Config,
    Row,
    fake_beaker,
    python,
    verdict,
    write_sweep,
)

SWEEP = f"""\
version: 1
name: capped
max_running: 2
max_failures: 4
beaker:
  workspace: {WORKSPACE}
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py, "--lr={{lr}}", "--seed={{seed}}"]
params:
  grid:
    lr: [0.1, 0.01, 0.001]
    seed: [1, 2]
"""


def probe() -> dict[str, int]:
    """Set up, then count the calls of one `submit --restart-failed` (in a fresh process)."""
    from runner.cli import main

    with (
        tempfile.TemporaryDirectory(prefix="restart-bench-") as tmp,
        fake_beaker(Path(tmp)) as fake,
    ):
        root = Path(tmp) / "repo"
        write_sweep(root, "capped", SWEEP)
        argv = ["-C", str(root), "submit", "--backend", "beaker"]
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            assert main(argv) == 0
            first, second = sorted(fake.experiments(), key=lambda e: e.name)[:2]
            fake.set_job_status(first.id, "failed", exit_code=3)
            fake.set_job_status(second.id, "succeeded")
            fake.reset_calls()
            assert main([*argv, "--restart-failed"]) == 0
        return dict(fake.calls)


def run(config: Config) -> list[Row]:
    code = "import json; from tests.benchmarks.restart import probe; print(json.dumps(probe()))"
    done = subprocess.run(
        python("-c", code), cwd=PROJECT, capture_output=True, text=True, check=True, timeout=600
    )
    calls: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
    config.note(f"`submit --restart-failed` of a capped, guarded sweep: {by_kind}.")
    listings, orgs = calls.get("ListWorkloads", 0), calls.get("ResolveOrganizationName", 0)
    return [
        Row(
            "12",
            "`submit --restart-failed` of a capped, guarded 6-point sweep",
            f"{sum(calls.values())} calls; ListWorkloads {listings}, ResolveOrganizationName {orgs}",
            "the runner before issue 31 (6e17279): 21 calls; ListWorkloads 6,"
            " ResolveOrganizationName 4",
            "",
            "≤ 2 ListWorkloads, 1 organization resolution",
            verdict(listings <= 2 and orgs <= 1),
        )
    ]


if __name__ == "__main__":  # pragma: no cover - a manual entry point
    print(json.dumps(probe()))
