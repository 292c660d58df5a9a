"""What `submit` asks of `runner.apply`: its arguments as `ApplyOptions`, with the checks that
need the open backend (a missing token must not run Beaker's sweeps on this machine)."""

from __future__ import annotations

import functools
from pathlib import Path

from runner.apply import ApplyOptions, notify
from runner.backends import Backend, Capability
from runner.backends.health import Wait
from runner.backends.opening import open_backend
from runner.commands.gitops import code_for, read_pins
from runner.commands.submit_args import SubmitArgs, name_the_manifests
from runner.core.clock import Bounds
from runner.core.defaults import DEFAULT_TIMEOUT
from runner.core.errors import SubmitError
from runner.plan.catalog import Catalog
from runner.repo import gitrepo
from runner.report.progress import Progress
from runner.submit import Clock


def not_drafts(cat: Catalog) -> str:
    """Why `--backend auto` must not run these sweeps locally: a sweep that is not a draft is
    meant for Beaker, and a missing token must not start it on this machine. Empty: all drafts."""
    names = [s.path.as_posix() for s in cat.sweeps if not s.draft]
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"{names[0]}{more} is not a draft (`draft: true`)" if names else ""


def apply_options(
    backend: Backend, cat: Catalog, args: SubmitArgs, started: float, clock: Clock
) -> ApplyOptions:
    """What `apply` is asked to do on this backend."""

    shared = Capability.SHARED in backend.capabilities
    if not shared and args.backend == "auto" and not args.paths:
        raise SubmitError(name_the_manifests())
    return ApplyOptions(
        root=cat.root,
        commit="uncommitted" if args.dry_run else gitrepo.head_commit(cat.root),
        dry_run=args.dry_run,
        restart_failed=args.restart_failed,
        restart_points=args.restart_points,
        pins=read_pins(Path(args.reviewed)) if args.reviewed is not None and shared else None,
        concurrency=args.concurrency,
        timeout=DEFAULT_TIMEOUT if args.timeout is None and shared else args.timeout,
        started=started,
        max_unreachable=args.max_unreachable,
        clock=clock,
        code=code_for(cat, shared, args.dry_run),  # `code:` sweeps: refused if not pushed
        webhook=notify.webhook_url(),
    )


def open_for(
    args: SubmitArgs, cat: Catalog, progress: Progress, clock: Clock, started: float
) -> Backend:
    """The backend, its calls held to the run's one deadline on its clock (the Beaker gateway
    holds every call to it; `apply_options` gives the submit loop the same timeout from the
    same start), its waits on the progress line from the first read on."""
    quiet = args.backend == "auto" and not args.paths  # refused below if it falls back to local
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    backend = open_backend(
        args.backend,
        cat.root,
        (lambda text: None) if quiet else progress.note,
        http_timeout=args.http_timeout,
        refuse_local=not_drafts(cat),
        bounds=Bounds.after(clock, timeout, args.max_unreachable, started),
    )
    backend.health.listen(functools.partial(_shown, progress, backend.health.service))
    return backend


def _shown(progress: Progress, service: str, wait: Wait | None) -> None:
    """A wait on the progress line (the submit loop shows its own too: the line is the same)."""
    if wait is not None:
        progress.wait(wait.text(service))
