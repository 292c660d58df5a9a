"""Pushing the ledger commit: the one thing here that races other runners.

A rejected push is rebuilt on the new remote head by merging ledger entries by key, then retried
with backoff, a bounded number of times. Never a force push, never a textual merge conflict,
never an entry lost: Beaker is the source of truth and the ledger its record.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner import ledger
from runner.core.errors import GitError
from runner.core.retry import RetryPolicy, retrying
from runner.ledger import headers
from runner.repo.gitrepo import (
    Target,
    commit_ledgers,
    open_repo,
    relative_path,
    rounds_in,
    run_git,
    sweep_of,
    text_at,
)

if TYPE_CHECKING:
    import git

SERVER_RACES = ("cannot lock ref", "failed to update ref", "incorrect old value")
"""How a server reports two pushes racing for one ref: retried like a rejected push."""


PUSH_POLICY = RetryPolicy(attempts=6, per_point_seconds=600.0, initial_wait=2.0, max_wait=30.0)
"""Backoff with jitter between rebuilt pushes, so racing runners do not retry in lockstep."""


class _Raced(Exception):
    """Another push reached the branch first: rebuild on the new remote head and push again."""


@dataclass(frozen=True)
class Pushed:
    sha: str | None
    """The commit now at the head of the remote branch; None when there was nothing to push."""
    attempts: int


def publish(
    root: Path, target: Target, policy: RetryPolicy | None = None, locks: Sequence[Path] = ()
) -> Pushed:
    """Push the ledger commits HEAD has over the remote branch (with the `locks` automatic
    rounds wrote, and nothing else); rebuild and retry on races."""
    policy = policy or PUSH_POLICY
    repo = open_repo(root)
    allowed = frozenset(relative_path(repo, p) for p in locks)
    tracking = f"refs/remotes/{target.remote}/{target.branch}"
    _fetch(repo, target)
    attempts = 0
    raced: Sequence[str] = ()

    def attempt() -> Pushed:
        nonlocal attempts, raced
        if raced:
            _rebuild(repo, root, target, raced)
        attempts += 1
        files = _ledger_commits(repo, tracking, root, allowed)
        if files is None:
            return Pushed(None, attempts - 1)
        if _push(repo, target):
            run_git(repo, "update-ref", tracking, "HEAD")
            return Pushed(repo.head.commit.hexsha, attempts)
        raced = files
        raise _Raced

    try:
        return retrying(policy, lambda: None, _Raced)(attempt)
    except _Raced:
        raise GitError(
            f"gave up pushing to {target.remote}/{target.branch} after {attempts} attempts, each"
            " overtaken by another push; the ledger commit is only local. Run submit again: it"
            " adopts what exists on Beaker and records it."
        ) from None


def _rebuild(repo: git.Repo, root: Path, target: Target, files: Sequence[str]) -> None:
    """Move HEAD to the new remote head and re-apply our ledger entries on top, merged by key,
    and an automatic round's lock as we wrote it, unless the remote changed that lock too (then
    the round is not ours to push: GitError; the next run decides again, from the new head)."""
    tracking = f"refs/remotes/{target.remote}/{target.branch}"
    locks = [f for f in files if not f.endswith(".jsonl")]
    written = {f: text_at(repo, "HEAD", f) for f in locks}
    rounds = rounds_in(str(repo.head.commit.message))
    base = run_git(repo, "merge-base", "HEAD", tracking).strip()  # what our round was built on
    based = {f: text_at(repo, base, f) for f in locks}
    files = [f for f in files if f.endswith(".jsonl")]
    ours = [ledger.parse(text_at(repo, "HEAD", f), f, sweep_of(f)) for f in files]
    _fetch(repo, target)
    moved = [f for f in locks if text_at(repo, tracking, f) != based[f]]
    if moved:
        raise GitError(
            f"{', '.join(moved)} changed on {target.remote}/{target.branch} while this run"
            " advanced it; the round is not pushed (its experiments are created: the next run"
            " decides again from the new head and adopts them where it makes the same choice)"
        )
    # --keep, not --hard: it refuses rather than discard uncommitted work in the checkout; our
    # own commit is not lost either, its entries are in `ours`.
    run_git(repo, "reset", "--keep", "--quiet", f"refs/remotes/{target.remote}/{target.branch}")
    top = Path(str(repo.working_tree_dir))
    for path, entries in zip(files, ours, strict=True):
        ledger.record(top / path, entries.sweep, entries.entries.values())
        headers.keep_header(top / path, entries.sweep, entries)  # the group, the notifications
    for path, text in written.items():
        (top / path).write_text(text, encoding="utf-8")
    commit_ledgers(root, [top / p for p in written], rounds)


def _fetch(repo: git.Repo, target: Target) -> None:
    refspec = f"+refs/heads/{target.branch}:refs/remotes/{target.remote}/{target.branch}"
    run_git(repo, "fetch", "--quiet", "--no-tags", target.remote, refspec)


def _ledger_commits(
    repo: git.Repo, tracking: str, root: Path, allowed: frozenset[str] = frozenset()
) -> list[str] | None:
    """Ledger files (and the `allowed` locks) changed by the commits HEAD has over the remote;
    None when it has none.

    Anything else in those commits (a manifest edit not yet reviewed, say) is refused: this
    pushes ledgers and an automatic round's lock, nothing else.
    """
    if not run_git(repo, "rev-list", "--max-count=1", f"{tracking}..HEAD"):
        return None
    files = run_git(repo, "diff", "--name-only", "--no-renames", f"{tracking}...HEAD").splitlines()
    directory = relative_path(repo, root / str(ledger.LEDGER_DIR)) + "/"
    others = [
        f
        for f in files
        if not (f.startswith(directory) and f.endswith(".jsonl")) and f not in allowed
    ]
    if others:
        raise GitError(
            f"HEAD has commits not on {tracking.removeprefix('refs/remotes/')} that change more"
            f" than ledgers ({', '.join(others[:5])}); only ledger commits are pushed by submit,"
            " so push those changes through a pull request first"
        )
    return files


def _push(repo: git.Repo, target: Target) -> bool:
    """True when pushed; False on a race (another push landed first); GitError otherwise."""
    from git import PushInfo

    # GitPython's push() does not raise when the remote rejects: the verdict is in the flags.
    # It also logs git's "error: failed to push some refs" as a warning, which reads like a
    # failure in the job log when the push is then rebuilt and succeeds; the verdict says it all.
    with _quiet("git.remote"):
        infos = repo.remote(target.remote).push(f"HEAD:refs/heads/{target.branch}")
    if not infos:
        error = str(infos.error or "no reply").strip()
        raise GitError(f"git push to {target.remote} failed: {error}")
    info = infos[0]
    if not info.flags & PushInfo.ERROR:
        return True
    summary = info.summary.strip()
    if info.flags & PushInfo.REJECTED:
        return False  # not a fast-forward: another push landed first
    if any(hint in summary for hint in SERVER_RACES):
        return False  # two pushes reached the server at the same moment
    raise GitError(
        f"the remote refused the push to {target.branch} ({summary}). If the branch is"
        " protected, let the submit workflow push ledger commits: see 'Branch protection' in"
        " docs/gitops.md"
    )


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    log = logging.getLogger(logger)
    before = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(before)


def raced_note(pushed: Pushed) -> str:
    """What to say after a push that another push overtook, then rebuilt and pushed again."""
    if pushed.attempts <= 1:
        return ""
    again = pushed.attempts - 1
    return f" (origin moved, merged and pushed again{f' {again} times' if again > 1 else ''})"


# -- what a pull request changes --------------------------------------------------------------
