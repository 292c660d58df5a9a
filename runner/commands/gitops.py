"""The git and GitHub side of the commands that change a sweep (`submit`, `cancel`): refusing
uncommitted manifests, committing and pushing the ledgers, and plan pinning."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import stderr
from runner.core.errors import RunnerError
from runner.plan.catalog import Catalog
from runner.render.code import Code, uses_code
from runner.repo import github, gitrepo, review
from runner.repo.gitrepo import Target, push
from runner.repo.review import Pin


def check_commit(
    root: Path,
    manifests: Sequence[Path],
    branch: str | None,
    *,
    commit: bool,
    push: bool,
    dry_run: bool = False,
) -> Target | None:
    """Before anything is created: refuse uncommitted manifests; find where to push."""
    if push and not commit:
        raise RunnerError("--push pushes the ledger commit: use it with --commit")
    if not commit or dry_run:
        return None

    gitrepo.ensure_committed(root, manifests)
    return gitrepo.resolve_target(root, branch) if push else None


def commit_back(
    root: Path, target: Target | None, locks: Sequence[Path] = (), rounds: Sequence[str] = ()
) -> None:
    """Commit (and push) the ledgers after a submit, with the `locks` automatic rounds wrote
    (`rounds` says which), and say what happened, also in the summary."""

    made = gitrepo.commit_ledgers(root, locks, rounds)
    lines = [f"Committed {made.sha[:12]}: {made.message}" if made else "No ledger changed."]
    if target is not None:
        pushed = push.publish(root, target, locks=locks)
        where = f"{target.remote}/{target.branch}"
        if pushed.sha:
            lines.append(f"Pushed {pushed.sha[:12]} to {where}{push.raced_note(pushed)}.")
        elif made:  # rebuilt on the remote's head, nothing of it was new there
            lines.append(f"{where} records these experiments already: nothing to push.")
        else:
            lines.append(f"{where} is up to date.")
        github.set_outputs({"commit": pushed.sha or ""})
    for line in lines:
        stderr(line)
    github.append_summary("\n" + "\n\n".join(lines) + "\n")


def code_for(cat: Catalog, shared: bool, dry_run: bool) -> Code | None:
    """The commit `code:` sweeps run, checked: on Beaker the tree must be clean and the commit
    pushed (the experiments fetch it); locally HEAD is cloned as it is committed, and the tracked
    files that differ from it are named in a warning. None when no
    sweep has `code:` (or in a dry run, which creates nothing)."""
    import os

    if dry_run or not any(uses_code(s) for s in cat.sweeps):
        return None
    if shared:
        repo, commit = gitrepo.code_commit(cat.root, os.environ.get("GITHUB_REPOSITORY", ""))
        return Code(commit, repo)
    commit = gitrepo.head_commit(cat.root)
    if commit == "uncommitted":
        raise RunnerError("code: runs the sweep's repository at a commit: commit it first")
    dirty = gitrepo.changed_tracked(cat.root)
    if dirty:  # on Beaker a refusal; here the runs go ahead, as they would run: committed
        stderr(
            f"warning: code: tracked files differ from the commit {commit[:12]}"
            f" ({gitrepo.shown_paths(dirty)}); the runs clone the commit, so they run without"
            " these changes (as on Beaker, which refuses them): commit them to run them"
        )
    return Code(commit)


def read_pins(path: Path) -> list[Pin]:
    """The plan pins of `--reviewed FILE` (the reviewed plans' hidden records)."""

    try:
        return review.parse_pins(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RunnerError(f"cannot read the reviewed plans at {path}: {exc}") from None
