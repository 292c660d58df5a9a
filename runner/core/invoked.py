"""How the runner was started, for the messages and file headers that say what to run next."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = "sweep-runner"
"""The console script (pyproject.toml's [project.scripts]): what a research repository runs."""
MODULE = "python -m runner"
"""This checkout's way (in a research repository it may import the repository's own `runner/`)."""


def invoked() -> str:
    """`sweep-runner` when this process is the console script (sys.argv[0] is it, as for the
    pre-commit hook and the workflows), else `python -m runner`: the command to print."""
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return SCRIPT if script.startswith(SCRIPT) else MODULE
