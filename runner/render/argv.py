"""A task's argv: the `$VAR` rule, and the launchers that wrap it in a fixed `bash -c` line.

Beaker runs argv directly, without a shell: `--machine_rank $BEAKER_REPLICA_RANK` reaches the
program as that literal text. Variables are only read inside a `bash -c`/`sh -c` script, whose
own argv arrives as "$@". A launcher (`torchrun`, `accelerate`) writes that script for you.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash"})
_SCRIPT_FLAG = re.compile(r"^-[a-zA-Z]*c[a-zA-Z]*$")
_VAR = re.compile(
    r"\$(?:\{\{?(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}?\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
)
_BRACED = re.compile(r"(?<!\{)\$\{(?!\{)(?P<name>[A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")
RENDEZVOUS_PORT = 29400
"""Fixed, never random: the same manifest must render the same spec, byte for byte."""

_NPROC = 'nproc="${BEAKER_ASSIGNED_GPU_COUNT:-0}"; [ "$nproc" -gt 0 ] || nproc=1; '
_NODES = (
    'nodes="${BEAKER_REPLICA_COUNT:-1}"; rank="${BEAKER_REPLICA_RANK:-0}"; '
    'leader="${BEAKER_LEADER_REPLICA_HOSTNAME:-127.0.0.1}"; '
)
LAUNCHERS = {
    "torchrun": (
        _NODES
        + _NPROC
        + 'exec torchrun --nnodes="$nodes" --node-rank="$rank" --nproc-per-node="$nproc"'
        + f' --master-addr="$leader" --master-port={RENDEZVOUS_PORT} "$@"'
    ),
    "accelerate": (
        _NODES
        + _NPROC
        + 'exec accelerate launch --num_machines="$nodes" --machine_rank="$rank"'
        + ' --num_processes="$((nodes * nproc))" --main_process_ip="$leader"'
        + f' --main_process_port={RENDEZVOUS_PORT} "$@"'
    ),
}
"""The `bash -c` line of each launcher: reads Beaker's variables at run time, then runs the
launcher with the task's own argv ("$@") after the rendezvous arguments."""


def launch_prefix(launcher: str) -> list[str]:
    """The argv a launcher puts before the task's own: `bash -c SCRIPT <launcher>`."""
    return ["bash", "-c", LAUNCHERS[launcher], launcher]


def script_index(argv: Sequence[object]) -> int | None:
    """Position of the script in `bash -c SCRIPT ...`, or None when argv is not such a line."""
    if not argv or str(argv[0]) not in SHELLS:
        return None
    for i, item in enumerate(argv[1:], start=1):
        text = str(item)
        if _SCRIPT_FLAG.match(text):
            return i + 1 if i + 1 < len(argv) else None
        if not text.startswith("-"):
            return None
    return None


def variable_problem(text: str, in_script: bool) -> str | None:
    """What is wrong with shell variables in one argv item, or None."""
    if in_script:
        found = _BRACED.search(text)
        if found is None:
            return None
        name = found["name"]
        return (
            f"${{{name}}} reads as the template {{{name}}} here; write ${{{{{name}}}}} for the"
            f" shell variable (or ${name})"
        )
    found = _VAR.search(text)
    if found is None:
        return None
    shown = found[0]
    return (
        f"{shown} is passed as literal text: Beaker runs argv without a shell. Read variables"
        " in a fixed `bash -c '... \"$@\"'` line and pass the values as its arguments,"
        " or use `launcher: torchrun`"
    )
