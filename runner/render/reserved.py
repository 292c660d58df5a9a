"""The variable names a task may not set itself: those the runner and Beaker set in every task
(SWEEP_*, BEAKER_*, RESULTS_DIR), and one name set twice (in env and in secrets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.core.marks import KeyPath


def env_name_problems(task: Mapping[str, Any], path: KeyPath) -> list[tuple[KeyPath, str]]:
    """One problem per reserved or doubly set variable name of a task, with where it is set."""
    out: list[tuple[KeyPath, str]] = []
    env_names = list(task.get("env", {})) + list(task.get("secrets", {}))
    if "beaker_token_secret" in task:
        env_names.append("BEAKER_TOKEN")
    for i, name in enumerate(env_names):
        key = "env" if i < len(task.get("env", {})) else "secrets"
        if name == "BEAKER_TOKEN" and i == len(env_names) - 1 and "beaker_token_secret" in task:
            continue  # the explicit opt-in
        where = (*path, key, name)
        if name == "BEAKER_TOKEN":
            said = (
                "BEAKER_TOKEN is reserved; to give the task a Beaker token (a job that launches"
                " jobs), name its Beaker secret in `beaker_token_secret: NAME` instead"
            )
        elif name.startswith(("SWEEP_", "BEAKER_")):
            said = f"{name} is reserved (SWEEP_* and BEAKER_* are set by the runner and Beaker)"
        elif name == "RESULTS_DIR":
            said = "RESULTS_DIR is reserved: every task gets it, set to its `result` path"
        elif name in env_names[:i]:
            said = f"{name} is set both in env and in secrets"
        else:
            continue
        out.append((where, said))
    return out
