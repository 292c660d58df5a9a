"""Which manifests a command acts on: the paths given, or every manifest under sweeps/."""

from __future__ import annotations

from pathlib import Path

from runner.errors import RunnerError

SWEEPS_DIR = "sweeps"
SKIP_DIRS = {"ledger"}


def find_root(start: Path) -> Path:
    """The repository root: the nearest directory at or above start that has sweeps/."""
    for candidate in (start, *start.parents):
        if (candidate / SWEEPS_DIR).is_dir():
            return candidate
    raise RunnerError(
        f"no {SWEEPS_DIR}/ directory at or above {start}; run from the repository root"
    )


def manifests(root: Path, paths: list[str]) -> list[Path]:
    """Manifest files, sorted; a directory argument means every manifest in it."""
    if not paths:
        paths = [str(root / SWEEPS_DIR)]
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not path.is_absolute():
            path = Path.cwd() / path
        if path.is_dir():
            found.update(
                p
                for pattern in ("*.yaml", "*.yml")
                for p in path.rglob(pattern)
                if not SKIP_DIRS.intersection(p.relative_to(path).parts[:-1])
            )
        elif path.exists():
            found.add(path)
        else:
            raise RunnerError(f"{raw}: no such file or directory")
    return sorted(found)


def display(root: Path, path: Path) -> str:
    """The path shown in messages and descriptions: relative to the root when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
