"""Git, through GitPython: the only module that imports it.

Commit-back of ledgers after a submit: commit only the ledger files that changed, and push them
(`push.publish`) to the branch the manifests came from.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from runner import ledger
from runner.core.errors import GitError

if TYPE_CHECKING:
    import git

SKIP_CI = "[skip ci]"


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


# -- opening and plumbing ---------------------------------------------------------------------


def open_repo(root: Path) -> git.Repo:
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
    repo = open_repo(root)
    try:
        return str(repo.active_branch.name)
    except TypeError:  # detached HEAD
        return None


def run_git(repo: git.Repo, command: str, *args: str) -> str:
    """Run one git command; its failure becomes a GitError quoting git's own message."""
    import git

    try:
        return str(getattr(repo.git, command)(*args))
    except git.GitCommandError as exc:
        detail = str(exc.stderr or exc.stdout or exc).strip()
        if detail.startswith("stderr: '") and detail.endswith("'"):
            detail = detail[len("stderr: '") : -1].strip()
        raise GitError(f"git {command} failed: {detail}") from None


def relative_path(repo: git.Repo, path: Path) -> str:
    top = Path(str(repo.working_tree_dir)).resolve()
    try:
        return path.resolve().relative_to(top).as_posix()
    except ValueError:
        raise GitError(f"{path} is outside the repository at {top}") from None


def _changed(repo: git.Repo, pathspecs: Sequence[str]) -> list[str]:
    """Paths under pathspecs that differ from HEAD, untracked ones included."""
    out = run_git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *pathspecs)
    changed, fields = [], iter(out.split("\0"))
    for item in fields:
        if len(item) < 4:
            continue
        changed.append(item[3:])
        if item[0] in "RC":
            next(fields, None)  # a rename's source path follows; the destination is what changed
    return sorted(set(changed))


def text_at(repo: git.Repo, rev: str, path: str) -> str:
    """A file's text at a revision; empty when it did not exist there."""
    try:
        blob = repo.commit(rev).tree / path
    except KeyError:
        return ""
    return bytes(blob.data_stream.read()).decode("utf-8")


def sweep_of(path: str) -> str:
    return PurePosixPath(path).stem


# -- before submitting ------------------------------------------------------------------------


def ensure_committed(root: Path, manifests: Iterable[Path]) -> None:
    """Refuse when a manifest on disk differs from HEAD: the ledger must record what was merged."""
    repo = open_repo(root)
    paths = [relative_path(repo, p) for p in manifests]
    dirty = _changed(repo, paths) if paths else []
    if dirty:
        raise GitError(
            "these manifests differ from the commit checked out: " + ", ".join(dirty) + "; "
            "--commit only records sweeps as committed (commit or restore them first)"
        )


def changed_tracked(root: Path) -> list[str]:
    """The tracked files that differ from HEAD (staged or not), as `git status` names them."""
    status = run_git(open_repo(root), "status", "--porcelain", "--untracked-files=no")
    return [line[3:] for line in status.splitlines()]


def shown_paths(paths: list[str], most: int = 5) -> str:
    return ", ".join(paths[:most]) + (", ..." if len(paths) > most else "")


def code_commit(root: Path, repository: str = "") -> tuple[str, str]:
    """For `code:` on Beaker: the clone URL and the commit the experiments check out (HEAD).
    Refused, as gantry does, when tracked files differ from it (they would not be in the run)
    or when no remote branch has it (the experiments could not fetch it). `repository`:
    GITHUB_REPOSITORY in Actions; else the origin remote's URL, an SSH one as https."""
    repo = open_repo(root)
    commit = run_git(repo, "rev-parse", "HEAD")
    dirty = changed_tracked(root)
    if dirty:
        raise GitError(
            f"code: tracked files differ from the commit {commit[:12]} ({shown_paths(dirty)});"
            " the experiments would run the commit without them: commit and push first"
        )
    if not run_git(repo, "branch", "--remotes", "--contains", commit).strip():
        raise GitError(
            f"code: commit {commit[:12]} is on no remote branch, so the experiments could not"
            " fetch it: push it first"
        )
    if repository:
        return f"https://github.com/{repository}.git", commit
    url = run_git(repo, "remote", "get-url", "origin").strip()
    if url.startswith("git@") and ":" in url:  # git@github.com:owner/name.git
        host, path = url[len("git@") :].split(":", 1)
        url = f"https://{host}/{path}"
    return url, commit


def resolve_target(root: Path, branch: str | None = None) -> Target:
    """The branch to push to (given, or the one checked out) and its remote (upstream or origin)."""
    repo = open_repo(root)
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


ADVANCE, INSIDE = "Advance ", " inside the reviewed envelope"
"""How a commit of automatic rounds names them: `Advance halving: rung 2 inside the ...`."""


def rounds_in(message: str) -> list[str]:
    """The automatic rounds a commit message names (`commit_message`'s), for a rebuilt one."""
    if not message.startswith(ADVANCE) or INSIDE not in message:
        return []
    return message[len(ADVANCE) : message.index(INSIDE)].split(", ")


def commit_message(counts: dict[str, int], rounds: Sequence[str] = ()) -> str:
    """E.g. 'Record 15 Beaker experiments for exact (12), other (3) [skip ci]', counting the
    entries new on the branch; 'Update the Beaker ledger of exact [skip ci]' when none is.
    `rounds`: the automatic rounds whose locks it commits too ('halving: rung 2'), said first."""
    total = sum(counts.values())
    said = f"{ADVANCE}{', '.join(rounds)}{INSIDE}; " if rounds else ""
    if not total:
        if not counts:
            return f"{said.removesuffix('; ')} {SKIP_CI}"
        update = f"Update the Beaker ledger of {', '.join(sorted(counts))}"
        return f"{said}{update[0].lower() if said else update[0]}{update[1:]} {SKIP_CI}"
    sweeps = ", ".join(f"{name} ({count})" for name, count in sorted(counts.items()) if count)
    noun = "experiment" if total == 1 else "experiments"
    record = f"{'record' if said else 'Record'} {total} Beaker {noun} for {sweeps}"
    return f"{said}{record} {SKIP_CI}"


def commit_ledgers(
    root: Path, locks: Sequence[Path] = (), rounds: Sequence[str] = ()
) -> Commit | None:
    """Commit the Beaker ledger files that differ from HEAD, and the `locks` an automatic round
    wrote (`rounds` says which), nothing else; None if none differ."""
    repo = open_repo(root)
    directory = relative_path(repo, root / str(ledger.LEDGER_DIR))
    files = [f for f in _changed(repo, [directory]) if f.endswith(".jsonl")]
    files = [f for f in files if (Path(str(repo.working_tree_dir)) / f).exists()]
    written = _changed(repo, [relative_path(repo, p) for p in locks]) if locks else []
    if not files and not written:
        return None
    counts = {}
    for path in files:
        sweep = sweep_of(path)
        before = ledger.parse(text_at(repo, "HEAD", path), f"HEAD:{path}", sweep).entries
        after = ledger.read(Path(str(repo.working_tree_dir)) / path, sweep).entries
        counts[sweep] = sum(
            1 for key, entry in after.items() if key not in before or before[key].id != entry.id
        )
    message = commit_message(counts, rounds if written else ())
    files += written
    run_git(repo, "add", "--", *files)
    # --only: whatever else is staged stays out of this commit. --no-verify: a machine-made
    # commit of generated files must not be rewritten or refused by a developer's local hooks.
    run_git(repo, "commit", "--only", "--no-verify", "--quiet", "-m", message, "--", *files)
    return Commit(repo.head.commit.hexsha, message, tuple(files))


# -- pushing ----------------------------------------------------------------------------------


def changed_since(root: Path, base: str) -> set[str] | None:
    """Paths (relative to the repository top) that differ between `base` and the working tree;
    None when `base` is not in this checkout (a shallow clone without it)."""
    import git

    repo = open_repo(root)
    try:
        repo.commit(base)
    except (git.BadName, git.BadObject, ValueError):
        return None
    return set(run_git(repo, "diff", "--name-only", "--no-renames", base, "--").splitlines())


def file_at(root: Path, rev: str, path: str) -> str | None:
    """A file's text at `rev` (e.g. a pull request's base), None when it is not there; a GitError
    when `rev` is not in this checkout (a shallow clone without it)."""
    import git

    repo = open_repo(root)
    try:
        commit = repo.commit(rev)
    except (git.BadName, git.BadObject, ValueError):
        raise GitError(f"{rev} is not in this checkout: fetch it (fetch-depth: 2)") from None
    try:
        blob = commit.tree / path
    except KeyError:
        return None
    return bytes(blob.data_stream.read()).decode("utf-8")


# -- reading other commits ----------------------------------------------------------------------


def fetch_commits(root: Path, shas: Sequence[str], token: str = "") -> None:
    """Bring these commits (e.g. merged pull requests' heads) into the checkout with one fetch
    from `origin`, those missing only; shallow when the checkout is. `token`: GitHub's job token,
    sent as a header through git's environment (a checkout without persisted credentials)."""
    import git

    if not shas:
        return
    repo = open_repo(root)
    missing = []
    for sha in shas:
        try:
            repo.commit(sha).tree  # noqa: B018 (is it here?)
        except (git.BadName, git.BadObject, ValueError):
            missing.append(sha)
    if not missing:
        return
    depth = ["--depth=1"] if run_git(repo, "rev-parse", "--is-shallow-repository") == "true" else []
    env = {}
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env = {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
        }
    with repo.git.custom_environment(**env):
        run_git(repo, "fetch", "--quiet", "--no-tags", *depth, "origin", *missing)


def files_at(root: Path, sha: str, directory: str, skip: str = "") -> dict[str, str]:
    """The text of every file under `directory` at commit `sha` (of any size), by path from the
    repository's top, except those under `skip`."""
    import git

    repo = open_repo(root)
    try:
        commit = repo.commit(sha)
        commit.tree  # noqa: B018 (is it here?)
    except (git.BadName, git.BadObject, ValueError):
        raise GitError(f"{sha} is not in this checkout: fetch it first") from None
    try:
        tree = commit.tree / directory
    except KeyError:
        return {}
    files = {}
    for item in tree.traverse():
        path = str(item.path)  # type: ignore[union-attr]
        if item.type == "blob" and not (skip and path.startswith(skip.rstrip("/") + "/")):  # type: ignore[union-attr]
            files[path] = bytes(item.data_stream.read()).decode("utf-8")  # type: ignore[union-attr]
    return files
