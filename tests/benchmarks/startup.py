"""6. Cold start: a fresh interpreter running the CLI, and gantry's when it is installed.

"Cold" means a new process each time, with bytecode already compiled and files in the page
cache (one unmeasured warm-up run first): what a user or a CI step sees on its second run. A
PYTHONDONTWRITEBYTECODE=1 in the environment is lifted for these processes (see
`common.bytecode_cached_env`), or each would compile our modules from source.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.benchmarks.common import (
    PROJECT,
    Config,
    Row,
    bytecode_cached_env,
    python,
    ratio,
    seconds,
    time_process,
    verdict,
)

TARGET = 0.300
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def gantry() -> str | None:
    """`$GANTRY`, else gantry next to this interpreter, else on PATH."""
    beside = Path(sys.executable).with_name("gantry")
    return os.environ.get("GANTRY") or (str(beside) if beside.exists() else shutil.which("gantry"))


def run(config: Config) -> list[Row]:
    repeat = 5 if config.quick else 15  # this VM's start-up times jitter by ±30%
    floor = time_process(python("-c", "pass"), repeat)
    commands = {
        "`python -m runner --help`": python("-m", "runner", "--help"),
        "`python -m runner expand --plan` (the examples)": python(
            "-m", "runner", "-C", str(PROJECT), "expand", "--plan"
        ),
        "`python -c 'import beaker'` (for reference)": python("-c", "import beaker"),
    }
    found = gantry()
    if found:
        commands["`gantry --help`"] = [found, "--help"]
    else:
        config.note("gantry is not installed here, so its start-up was not measured.")
    rows = []
    for name, argv in commands.items():
        times = time_process(argv, repeat)
        is_plan = "expand --plan" in name
        rows.append(
            Row(
                "6",
                f"cold start {name}",
                f"{seconds(times.median)} (median of {times.runs}; best {seconds(times.best)})",
                f"`python -c pass`: {seconds(floor.median)}",
                ratio(times.median, floor.median),
                f"< {TARGET * 1e3:g} ms" if is_plan else "",
                verdict(times.median < TARGET) if is_plan else "",
            )
        )
    config.note("Imports of `expand --plan` (`python -X importtime`): " + import_profile())
    return rows


def import_profile(top: int = 8) -> str:
    """The heaviest modules `expand --plan` imports itself (cumulative), as one line of text."""
    done = subprocess.run(
        python("-X", "importtime", "-m", "runner", "-C", str(PROJECT), "expand", "--plan"),
        cwd=PROJECT,
        env=bytecode_cached_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    heaviest: dict[str, int] = defaultdict(int)
    total, stack = 0, list[str]()
    # importtime prints a module after the modules it imported; reversed, parents come first.
    for line in reversed(done.stderr.splitlines()):
        match = _IMPORT_LINE.match(line)
        if not match:
            continue
        cumulative, depth, name = int(match[2]), len(match[3]) // 2, match[4]
        stack = [*stack[:depth], name]
        parent = stack[depth - 1] if depth else None
        if depth == 0:
            total += cumulative
        ours = name.split(".")[0] == "runner"
        if not ours and (parent is None or parent.split(".")[0] == "runner"):
            heaviest[name] += cumulative
    ranked = sorted(heaviest.items(), key=lambda item: -item[1])[:top]
    listed = ", ".join(f"{name} {us / 1e3:.0f} ms" for name, us in ranked)
    return f"{total / 1e3:.0f} ms in all (with importtime's own overhead); heaviest: {listed}."
