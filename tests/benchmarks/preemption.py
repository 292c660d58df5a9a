"""16. A capped sweep on a cluster that preempts it: the soak of issue 48 (`tests/soak.py`).

2 000 points under `max_running: 64` (1 000 with --quick), driven by the scheduled submit every
15 virtual minutes against the fake at the port; 10 % of the points preempted (a quarter of
those twice, a fifth resumed by Beaker itself) and 1 % lost to a node failure. Figures: the
scheduled submits it took, the runs (attempts started), the restarts by cause, the duplicates
and lost points (targets: none), the most queued or running at once (target: the cap), and the
wall time of the whole soak in this process (planning, the looks and the ledger writes of
every submit)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.benchmarks.common import Config, Row, verdict
from tests.soak import soak


def run(config: Config) -> list[Row]:
    points = 1000 if config.quick else 2000
    with tempfile.TemporaryDirectory(prefix="soak-", dir=config.workdir) as tmp:
        f = soak(Path(tmp), points=points, max_running=64)
    events = f.events
    causes = (
        f"{events['preempt']} after a preemption, {events['node']} after a lost node"
        f" (the runner); {events['resumed']} resumed by Beaker, counted"
    )
    config.note(
        f"soak: {f.ticks} scheduled submits, {f.runs} runs; restarts by cause: {causes};"
        f" ledger: {f.ledger_preemptions} preemptions, {f.ledger_restarts} restarts."
    )
    exact = f.duplicates == 0 and f.lost == 0 and f.resumed == events["preempt"] + events["node"]
    size = f"{points:_}".replace("_", " ")
    return [
        Row(
            "17",
            f"soak: {size} points, max_running 64, 10 % preempted, 1 % lost nodes",
            f"{f.seconds:.1f} s; {f.ticks} submits, {f.runs} runs, {f.resumed} resumed by the"
            f" runner ({events['preempt']} after a preemption, {events['node']} after a lost"
            f" node), {events['resumed']} by Beaker; {f.duplicates} duplicates, {f.lost} points"
            f" lost, at most {f.most_live} live",
            f"each preemption and lost node resumed once: {events['preempt'] + events['node']}",
            "",
            "0 duplicates, 0 lost, ≤ 64 live, all succeeded",
            verdict(exact and f.most_live <= 64),
        )
    ]
