"""Files the user names for the runner's output (`--output`, `--artifact`, `--save-specs`,
`--summary-json`, `--optuna-storage`): one that cannot be written is theirs to fix, so it is a
`RunnerError` naming it (`cannot write PATH: reason`, exit 1), never a traceback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from runner.core.errors import RunnerError


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Around writing `path` (a file, or a directory of files): an OSError becomes
    `cannot write PATH: reason`, naming the file that failed too where it is another (a file
    in the directory, a parent that is a file)."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename is not None and Path(exc.filename) != path:
            reason = f"{exc.filename}: {reason}"
        raise RunnerError(f"cannot write {path}: {reason}") from None


def write_text(path: Path, text: str) -> None:
    """The text to `path` as UTF-8 (`writing`'s error where it cannot be written)."""
    with writing(path):
        path.write_text(text, encoding="utf-8")
