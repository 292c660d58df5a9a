"""Which backend a command talks to: Beaker when asked or when credentials exist, the local one
otherwise (never silently in CI). The one module that imports both adapters, each only once
chosen."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from runner.backends import Backend, BackendKind
from runner.core.clock import Bounds
from runner.core.errors import SubmitError

CHOICES = ("auto", *BackendKind)
"""What `--backend` takes (`runner.commands.common.BACKEND_CHOICES` spells the same for argparse):
`auto` is Beaker when credentials exist, else local."""


def in_ci() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS"))


def open_backend(
    choice: str,
    root: Path,
    notify: Callable[[str], None],
    *,
    http_timeout: float | None = None,
    refuse_local: str = "",
    bounds: Bounds | None = None,
) -> Backend:
    """Beaker when asked or when credentials exist; local otherwise (never silently in CI).

    `bounds`: the command's deadline and unreachable limit, which every Beaker call is held to
    (`runner.backends.beaker.gateway`); the local backend calls no service.

    `auto` falling back to the local backend says so through `notify`. `refuse_local`: why
    `auto` must not fall back (e.g. a sweep that is not a draft would run on this machine);
    then missing credentials are an error that names it and `--backend local`.
    """
    if choice not in CHOICES:
        raise SubmitError(f"unknown backend {choice!r} (choose from {', '.join(CHOICES)})")
    if choice in ("auto", "beaker"):
        # Each adapter is imported only when chosen: beaker-py and grpc cost a local command
        # a third of its start-up.
        from runner.backends.beaker import TOKEN_HELP, BeakerBackend, credentials

        config = credentials()
        if config is not None:
            return BeakerBackend(config, http_timeout=http_timeout, bounds=bounds)
        if choice == "beaker" or in_ci():
            raise SubmitError(
                TOKEN_HELP + (" (CI never falls back to the local backend)" if in_ci() else "")
            )
        if refuse_local:
            raise SubmitError(
                f"{TOKEN_HELP}; {refuse_local}, so pass --backend local to run it here"
            )
        notify("no Beaker credentials found: using the local backend (this machine)")
    from runner.backends.local import LocalBackend

    return LocalBackend(root, notify)
