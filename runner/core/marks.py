"""Where each value of a manifest was written: lines and columns by path, for one-line errors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KeyPath = tuple[str | int, ...]
Pos = tuple[int, int]  # (line, col), 1-based; Mark objects are made only when asked for
_PLAIN_KEY = re.compile(r"[^.\[\]\s\"']+")


@dataclass(frozen=True)
class Mark:
    """A 1-based line and column in the source text."""

    line: int
    col: int


_START = Mark(1, 1)


class Marks:
    """Positions of every mapping key and value, and every sequence item, by path."""

    __slots__ = ("_keys", "_values")

    def __init__(self, values: Mapping[KeyPath, Pos], keys: Mapping[KeyPath, Pos]) -> None:
        self._values = values
        self._keys = keys

    def value(self, path: KeyPath) -> Mark:
        """Where the value at ``path`` starts, else where its nearest existing ancestor starts."""
        for end in range(len(path), 0, -1):
            pos = self._values.get(path[:end])
            if pos is not None:
                return Mark(*pos)
        return _START

    def key(self, path: KeyPath) -> Mark:
        """Where the mapping key naming ``path`` is written; falls back like ``value``."""
        pos = self._keys.get(path)
        return Mark(*pos) if pos is not None else self.value(path)


@dataclass(frozen=True)
class Document:
    """A loaded manifest: a dict of plain Python values, and where each of them was written."""

    data: Any
    marks: Marks
    source: str


def field_path(path: KeyPath) -> str:
    """Render ``("tasks", 0, "image")`` as ``tasks[0].image``; the empty path is ``(root)``."""
    if not path:
        return "(root)"
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif not _PLAIN_KEY.fullmatch(part):
            parts.append(f"[{json.dumps(part, ensure_ascii=False)}]")
        else:
            parts.append(f".{part}" if parts else part)
    return "".join(parts)
