"""Git, through GitPython: the only module that imports it.

Commit-back of ledgers after a submit: commit only the ledger files that changed, and push them
to the branch the manifests came from. Pushes race (two merges in a row, a person pushing in
between); a rejected push is rebuilt on the new remote head by merging ledger entries by key,
then retried with backoff, a bounded number of times. Never a force push, never a textual
merge conflict, never an entry lost: Beaker is the source of truth and the ledger its record.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from runner import ledger
from runner.core.errors import GitError
from runner.core.retry import RetryPolicy, retrying

if TYPE_CHECKING:
    import git

SKIP_CI = "[skip ci]"
SERVER_RACES = ("cannot lock ref", "failed to update ref", "incorrect old value")
"""How a server reports two pushes racing for one ref: retried like a rejected push."""


def head_commit(root: Path) -> str:
    """The commit the manifests were read at, or 'uncommitted' outside a git checkout."""
    import git

    try:
        return str(git.Repo(root, search_parent_directories=True).head.commit.hexsha)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return "uncommitted"


@dataclass(frozen=True)
class Target:
    """Where the ledger commit goes: a branch of a remote."""

    remote: str
    branch: str


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    files: tuple[str, ...]


PUSH_POLICY = RetryPolicy(attempts=6, per_point_seconds=600.0, initial_wait=2.0, max_wait=30.0)
"""Backoff with jitter between rebuilt pushes, so racing runners do not retry in lockstep."""


class _Raced(Exception):
    """Another push reached the branch first: rebuild on the new remote head and push again."""


@dataclass(frozen=True)
class Pushed:
    sha: str | None
    """The commit now at the head of the remote branch; None when there was nothing to push."""
    attempts: int


# -- opening and plumbing ---------------------------------------------------------------------


def _open(root: Path) -> git.Repo:
    import git

    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{root} is not inside a git repository; --commit needs a checkout of the repository"
        ) from None


def toplevel(path: Path) -> Path | None:
    """The root of the work tree path is in; None when it is in no git repository."""
    import git

    try:
        tree = git.Repo(path, search_parent_directories=True).working_tree_dir
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    return None if tree is None else Path(tree)


def current_branch(root: Path) -> str | None:
    """The branch checked out at root; None when HEAD is detached or unborn-less."""
    repo = _open(root)
    try:
        return str(repo.active_branch.name)
    except TypeError:  # detached HEAD
        return None


def _git(repo: git.Repo, command: str, *args: str) -> str:
    """Run one git command; its failure becomes a GitError quoting git's own message."""
    import git

    try:
        return str(getattr(repo.git, command)(*args))
    except git.GitCommandError as exc:
        detail = str(exc.stderr or exc.stdout or exc).strip()
        if detail.startswith("stderr: '") and detail.endswith("'"):
            detail = detail[len("stderr: '") : -1].strip()
        raise GitError(f"git {command} failed: {detail}") from None


def _relative(repo: git.Repo, path: Path) -> str:
    top = Path(str(repo.working_tree_dir)).resolve()
    try:
        return path.resolve().relative_to(top).as_posix()
    except ValueError:
        raise GitError(f"{path} is outside the repository at {top}") from None


def _changed(repo: git.Repo, pathspecs: Sequence[str]) -> list[str]:
    """Paths under pathspecs that differ from HEAD, untracked ones included."""
    out = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *pathspecs)
    changed, fields = [], iter(out.split("\0"))
    for item in fields:
        if len(item) < 4:
            continue
        changed.append(item[3:])
        if item[0] in "RC":
            next(fields, None)  # a rename's source path follows; the destination is what changed
    return sorted(set(changed))


def _text_at(repo: git.Repo, rev: str, path: str) -> str:
    """A file's text at a revision; empty when it did not exist there."""
    try:
        blob = repo.commit(rev).tree / path
    except KeyError:
        return ""
    return bytes(blob.data_stream.read()).decode("utf-8")


def _sweep_of(path: str) -> str:
    return PurePosixPath(path).stem


# -- before submitting ------------------------------------------------------------------------


def ensure_committed(root: Path, manifests: Iterable[Path]) -> None:
    """Refuse when a manifest on disk differs from HEAD: the ledger must record what was merged."""
    repo = _open(root)
    paths = [_relative(repo, p) for p in manifests]
    dirty = _changed(repo, paths) if paths else []
    if dirty:
        raise GitError(
            "these manifests differ from the commit checked out: " + ", ".join(dirty) + "; "
            "--commit only records sweeps as committed (commit or restore them first)"
        )


def resolve_target(root: Path, branch: str | None = None) -> Target:
    """The branch to push to (given, or the one checked out) and its remote (upstream or origin)."""
    repo = _open(root)
    tracking = None
    if branch is None:
        if repo.head.is_detached:
            raise GitError("HEAD is detached: check out the branch the ledger commit should go to")
        branch = repo.active_branch.name
        tracking = repo.active_branch.tracking_branch()
    if tracking is not None and tracking.remote_name != ".":
        return Target(tracking.remote_name, tracking.remote_head)
    names = [r.name for r in repo.remotes]
    if "origin" in names:
        return Target("origin", branch)
    if len(names) == 1:
        return Target(names[0], branch)
    raise GitError(f"cannot tell which remote to push {branch} to; set its upstream branch")


# -- committing -------------------------------------------------------------------------------


def commit_message(counts: dict[str, int]) -> str:
    """E.g. 'Record 15 Beaker experiments for exact (12), other (3) [skip ci]', counting the
    entries new on the branch; 'Update the Beaker ledger of exact [skip ci]' when none is."""
    total = sum(counts.values())
    if not total:
        return f"Update the Beaker ledger of {', '.join(sorted(counts))} {SKIP_CI}"
    sweeps = ", ".join(f"{name} ({count})" for name, count in sorted(counts.items()) if count)
    noun = "experiment" if total == 1 else "experiments"
    return f"Record {total} Beaker {noun} for {sweeps} {SKIP_CI}"


def commit_ledgers(root: Path) -> Commit | None:
    """Commit the Beaker ledger files that differ from HEAD, and nothing else; None if none do."""
    repo = _open(root)
    directory = _relative(repo, root / str(ledger.LEDGER_DIR))
    files = [f for f in _changed(repo, [directory]) if f.endswith(".jsonl")]
    files = [f for f in files if (Path(str(repo.working_tree_dir)) / f).exists()]
    if not files:
        return None
    counts = {}
    for path in files:
        sweep = _sweep_of(path)
        before = ledger.parse(_text_at(repo, "HEAD", path), f"HEAD:{path}", sweep).entries
        after = ledger.read(Path(str(repo.working_tree_dir)) / path, sweep).entries
        counts[sweep] = sum(
            1 for key, entry in after.items() if key not in before or before[key].id != entry.id
        )
    message = commit_message(counts)
    _git(repo, "add", "--", *files)
    # --only: whatever else is staged stays out of this commit. --no-verify: a machine-made
    # commit of generated files must not be rewritten or refused by a developer's local hooks.
    _git(repo, "commit", "--only", "--no-verify", "--quiet", "-m", message, "--", *files)
    return Commit(repo.head.commit.hexsha, message, tuple(files))


# -- pushing ----------------------------------------------------------------------------------


def publish(root: Path, target: Target, policy: RetryPolicy | None = None) -> Pushed:
    """Push the ledger commits HEAD has over the remote branch; rebuild and retry on races."""
    policy = policy or PUSH_POLICY
    repo = _open(root)
    tracking = f"refs/remotes/{target.remote}/{target.branch}"
    _fetch(repo, target)
    attempts = 0
    raced: Sequence[str] = ()

    def attempt() -> Pushed:
        nonlocal attempts, raced
        if raced:
            _rebuild(repo, root, target, raced)
        attempts += 1
        files = _ledger_commits(repo, tracking, root)
        if files is None:
            return Pushed(None, attempts - 1)
        if _push(repo, target):
            _git(repo, "update-ref", tracking, "HEAD")
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
    """Move HEAD to the new remote head and re-apply our ledger entries on top, merged by key."""
    ours = [ledger.parse(_text_at(repo, "HEAD", f), f, _sweep_of(f)) for f in files]
    _fetch(repo, target)
    # --keep, not --hard: it refuses rather than discard uncommitted work in the checkout; our
    # own commit is not lost either, its entries are in `ours`.
    _git(repo, "reset", "--keep", "--quiet", f"refs/remotes/{target.remote}/{target.branch}")
    top = Path(str(repo.working_tree_dir))
    for path, entries in zip(files, ours, strict=True):
        ledger.record(top / path, entries.sweep, entries.entries.values())
        ledger.keep_header(top / path, entries.sweep, entries)  # the group, the notifications
    commit_ledgers(root)


def _fetch(repo: git.Repo, target: Target) -> None:
    refspec = f"+refs/heads/{target.branch}:refs/remotes/{target.remote}/{target.branch}"
    _git(repo, "fetch", "--quiet", "--no-tags", target.remote, refspec)


def _ledger_commits(repo: git.Repo, tracking: str, root: Path) -> list[str] | None:
    """Ledger files changed by the commits HEAD has over the remote; None when it has none.

    Anything else in those commits (a manifest edit not yet reviewed, say) is refused: this
    pushes ledgers, nothing else.
    """
    if not _git(repo, "rev-list", "--max-count=1", f"{tracking}..HEAD"):
        return None
    files = _git(repo, "diff", "--name-only", "--no-renames", f"{tracking}...HEAD").splitlines()
    directory = _relative(repo, root / str(ledger.LEDGER_DIR)) + "/"
    others = [f for f in files if not (f.startswith(directory) and f.endswith(".jsonl"))]
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


def changed_since(root: Path, base: str) -> set[str] | None:
    """Paths (relative to the repository top) that differ between `base` and the working tree;
    None when `base` is not in this checkout (a shallow clone without it)."""
    import git

    repo = _open(root)
    try:
        repo.commit(base)
    except (git.BadName, git.BadObject, ValueError):
        return None
    return set(_git(repo, "diff", "--name-only", "--no-renames", base, "--").splitlines())


def file_at(root: Path, rev: str, path: str) -> str | None:
    """A file's text at `rev` (e.g. a pull request's base), None when it is not there; a GitError
    when `rev` is not in this checkout (a shallow clone without it)."""
    import git

    repo = _open(root)
    try:
        commit = repo.commit(rev)
    except (git.BadName, git.BadObject, ValueError):
        raise GitError(f"{rev} is not in this checkout: fetch it (fetch-depth: 2)") from None
    try:
        blob = commit.tree / path
    except KeyError:
        return None
    return bytes(blob.data_stream.read()).decode("utf-8")
