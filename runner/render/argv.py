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


LAUNCHER_FLAGS = {
    "torchrun": (
        "--nnodes",
        "--node-rank",
        "--node_rank",
        "--nproc-per-node",
        "--nproc_per_node",
        "--master-addr",
        "--master_addr",
        "--master-port",
        "--master_port",
        "--rdzv-endpoint",
        "--rdzv_endpoint",
    ),
    "accelerate": (
        "--num_machines",
        "--num-machines",
        "--machine_rank",
        "--machine-rank",
        "--num_processes",
        "--num-processes",
        "--main_process_ip",
        "--main-process-ip",
        "--main_process_port",
        "--main-process-port",
    ),
}
"""What each launcher's line sets from Beaker's variables: the same flag in the task's own argv
(from a per-node mason or gantry command) would come after it and win, with the wrong world size."""


def launcher_flag(launcher: str, item: str) -> str | None:
    """The problem with one argv item under a launcher: a flag the launcher sets itself."""
    flag = item.split("=", 1)[0]
    if flag not in LAUNCHER_FLAGS[launcher]:
        return None
    return (
        f"{flag} is set by `launcher: {launcher}` from Beaker's replica variables; delete it here"
        " (after the launcher's own, it would win with a per-node value)"
    )


def launch_prefix(launcher: str, setup: tuple[str, ...] = ()) -> list[str]:
    """The argv a launcher puts before the task's own: `bash -c SCRIPT <launcher>`; setup
    commands run first, each having to succeed (`set -e`)."""
    script = LAUNCHERS[launcher]
    if setup:
        script = "set -e; " + "; ".join(setup) + "; " + script
    return ["bash", "-c", script, launcher]


CODE_DIR = "/sweep-code"
CODE_MARK = "sweep-code"
"""argv[0] of the `code:` line's script ($0), which finds the task's own argv after it."""
_CODE = (
    'set -e; dir="${SWEEP_CODE_DIR:-/sweep-code}"; '
    'if [ ! -e "$dir/.git" ]; then '
    'command -v git >/dev/null 2>&1 || { echo "code: git is not in this image: add it to the'
    ' image, or run without code:" >&2; exit 127; }; '
    'if [ -n "${SWEEP_CODE_SOURCE:-}" ]; then '
    'git clone -q --shared --no-checkout "$SWEEP_CODE_SOURCE" "$dir"; '
    'else url="$SWEEP_CODE_REPO"; '
    '[ -z "${SWEEP_CODE_TOKEN:-}" ] || url="https://x-access-token:${SWEEP_CODE_TOKEN}@${url#https://}"; '
    'git init -q "$dir"; git -C "$dir" fetch -q --depth 1 "$url" "$SWEEP_CODE_COMMIT"; fi; '
    'git -C "$dir" -c advice.detachedHead=false checkout -q "$SWEEP_CODE_COMMIT"; fi; '
    'cd "$dir"; '
)
"""`code:`: check out the commit (once per container), then run the task's argv ("$@") in it.
SWEEP_CODE_COMMIT and (unless the manifest names it) SWEEP_CODE_REPO are set at submit time;
locally SWEEP_CODE_SOURCE names this repository, cloned without a network."""


def code_prefix(setup: Sequence[str] = ()) -> list[str]:
    """The argv `code:` puts before the task's own (and its launcher's): `bash -c SCRIPT`."""
    steps = "".join(f"{step}; " for step in setup)
    return ["bash", "-c", _CODE + steps + 'exec "$@"', CODE_MARK]


_GITHUB_REPO = r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+"
CODE_REPO_PATTERN = rf"^({_GITHUB_REPO}|https://[^\s/@]+(/\S*)?)$"
"""What `code.repo` may be (the schema's pattern): owner/name on GitHub, or an https URL without
credentials (the clone in the container fetches over https, with `code.secret`'s token)."""


def code_repo(repo: str) -> str:
    """A clone URL: owner/name is a GitHub repository."""
    if re.fullmatch(_GITHUB_REPO, repo):
        return f"https://github.com/{repo}.git"
    return repo


_BARE_FLAG = re.compile(r"-[^=\s]+")


def is_bare_flag(item: str) -> bool:
    """`--momentum`, a flag whose value, if any, is the next item (not `--momentum=...`)."""
    return _BARE_FLAG.fullmatch(item) is not None


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


def script_problem(text: str) -> str | None:
    """What is wrong with shell variables in the script of a `bash -c` line, or None: there
    `${NAME}` is read as the template `{NAME}`."""
    found = _BRACED.search(text)
    if found is None:
        return None
    name = found["name"]
    return (
        f"${{{name}}} reads as the template {{{name}}} here; write ${{{{{name}}}}} for the"
        f" shell variable (or ${name})"
    )


def variable_problem(text: str) -> str | None:
    """What is wrong with shell variables in an argv item outside a script, or None: no shell
    reads them there."""
    found = _VAR.search(text)
    if found is None:
        return None
    shown = found[0]
    return (
        f"{shown} is passed as literal text: Beaker runs argv without a shell. Read variables"
        " in a fixed `bash -c '... \"$@\"'` line and pass the values as its arguments,"
        " or use `launcher: torchrun`"
    )
