"""Git, through GitPython: the only module that imports it."""

from __future__ import annotations

from pathlib import Path


def head_commit(root: Path) -> str:
    """The commit the manifests were read at, or 'uncommitted' outside a git checkout."""
    import git

    try:
        return str(git.Repo(root, search_parent_directories=True).head.commit.hexsha)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return "uncommitted"
