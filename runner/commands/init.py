"""`init [DIR]`: make a git repository a sweeps repository.

It writes an example sweep (a draft that runs on this machine), the schema its modeline points
at, the plan, submit and status workflows (small callers of this repository's actions, by tag),
a `.pre-commit-config.yaml` entry, `.github/dependabot.yml` and `.runs/` in `.gitignore` (local
runs stay out of commits; a .gitignore of your own is extended, not replaced), then prints the
admin steps.
Run again, it changes nothing that is already right, and never overwrites a file you edited: it
names it and shows the difference (`--force` overwrites). Exit 0: every file is as init writes
it; 1: DIR is not a git repository (nothing written), or some file differs and was kept.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner import scaffold
from runner.core.errors import Exit, RunnerError
from runner.repo import gitrepo


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory) / args.dir
    return init(directory, ref=args.ref, branch=args.branch, force=args.force)


def init(
    directory: Path, ref: str | None = None, branch: str | None = None, force: bool = False
) -> int:

    root = gitrepo.toplevel(directory) if directory.is_dir() else None
    if root is None or root.resolve() != directory.resolve():
        raise RunnerError(
            f"{directory} is not the root of a git repository: run `git init` there first"
            " (init writes workflows, which only work at a repository's root)"
        )
    installed = scaffold.installed_version()
    settings = scaffold.Settings(
        ref=ref or scaffold.default_ref(installed, scaffold.built_commit()),
        version=installed,
        branch=branch or gitrepo.current_branch(root) or "main",
    )
    planned = scaffold.plan(root, settings, force)
    written = {item.path for item in scaffold.apply(root, planned)}
    kept = [item for item in planned if item.change is scaffold.Change.KEEP]
    for item in planned:
        verb = "wrote" if item.path in written else str(item.change.value)
        print(f"{verb:>15}  {item.path}", file=sys.stderr)
    for item in kept:
        print(
            f"\n{item.path} differs from what init writes; kept (--force overwrites):",
            file=sys.stderr,
        )
        print(item.diff, file=sys.stderr, end="" if item.diff.endswith("\n") else "\n")
    if settings.ref == scaffold.built_commit() and not scaffold.released(installed):
        print(
            f"\nnote: this beaker-sweep-runner is unreleased ({installed}): the workflows and the"
            f" hook call the commit it was built from, {settings.ref} (the release before it lacks"
            " what this one has); once a release has it, run init again with --ref <tag> --force.",
            file=sys.stderr,
        )
    elif not scaffold.pinned(settings.ref):
        print(
            f"\nnote: the workflows call beaker-sweep-runner's actions by the tag {settings.ref};"
            " to pin a commit (as zizmor asks), run init again with --ref <commit> --force."
            " Dependabot keeps either up to date.",
            file=sys.stderr,
        )
    print("\n" + scaffold.admin_steps(settings.branch), file=sys.stderr, end="")
    return Exit.USER_ERROR if kept else Exit.OK  # some files kept as they were
