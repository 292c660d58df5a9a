"""Files the runner writes: atomically, under a directory lock, with UTC timestamps.

The ledger and the local backend's run state both rely on these: a reader never sees half a
file, and concurrent writers to one directory take turns.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file in the same directory, fsync, then rename over the target."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """An exclusive flock on a directory (created if missing), released when its fd closes."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def utc_now() -> str:
    """The current time as the ledger and run states write it: `2026-11-22T16:07:16Z`."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
