"""`python -m tests.benchmarks`: run the benchmark groups, print the table, write RESULTS.md."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.benchmarks import (
    adaptive,
    expansion,
    halving,
    importance,
    lab,
    migration,
    planning,
    restart,
    search,
    signals,
    startup,
    status,
    submission,
    warm,
)
from tests.benchmarks.common import PROJECT, Config, Row, table

GROUPS: dict[str, Callable[[Config], list[Row]]] = {
    "expansion": expansion.run,
    "planning": planning.run,
    "submission": submission.run,
    "startup": startup.run,
    "status": status.run,
    "migration": migration.run,
    "search": search.run,
    "adaptive": adaptive.run,
    "halving": halving.run,
    "importance": importance.run,
    "restart": restart.run,
    "signals": signals.run,
    "warm": warm.run,
    "lab": lab.run,
}
RESULTS = PROJECT / "tests" / "benchmarks" / "RESULTS.md"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks",
        description="Measure expansion, planning, submission and start-up side by side with"
        " their alternatives, print a markdown table and write it to a file.",
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    parser.add_argument(
        "--only", action="append", choices=sorted(GROUPS), help="run only this group (repeatable)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        help=f"write the results here (default for a full run: {RESULTS.relative_to(PROJECT)};"
        " a --quick or --only run only prints unless given this)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names = args.only or list(GROUPS)
    output = args.output or (None if args.quick or args.only else RESULTS)
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="runner-bench-") as tmp:
        config = Config(quick=args.quick, workdir=Path(tmp))
        for name in names:
            print(f"running {name}...", file=sys.stderr, flush=True)
            group_started = time.perf_counter()
            rows += GROUPS[name](config)
            print(f"  {time.perf_counter() - group_started:.1f} s", file=sys.stderr, flush=True)
    text = document(rows, config.notes, args.quick, time.perf_counter() - started)
    sys.stdout.write(text)
    if output is not None:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output}", file=sys.stderr)
    return 0


def document(rows: Sequence[Row], notes: Sequence[str], quick: bool, elapsed: float) -> str:
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = (
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()},"
        f" {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
    )
    lines = [
        "<!-- Written by `python -m tests.benchmarks`; rerun it to regenerate. Do not edit. -->",
        "",
        f"Benchmarks{' (--quick)' if quick else ''}, {when}: {machine}; the run took {elapsed:.0f} s.",
        "Ratios compare figures measured in this same run on this same machine.",
        "",
        table(rows),
        "",
        *[f"- {note}" for note in notes],
    ]
    return "\n".join(lines) + "\n"
