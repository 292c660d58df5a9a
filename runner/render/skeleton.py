"""A JSON document with holes, serialised canonically once, so that each point only fills holes.

Every point of a sweep renders to nearly the same spec: a few templated strings differ, the rest
(image, clusters, resources, multi-node settings...) is the same for all of them. Encoding the
whole document for every point cost more than everything else a point needs; a skeleton encodes
the constant parts once, in exactly the bytes `runner.core.values.canonical_json` would write (sorted
keys, compact separators, UTF-8 kept), and leaves a hole wherever a value depends on the point.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from runner.core.values import canonical_json

C = TypeVar("C")

json_string: Callable[[str], str] = json.encoder.encode_basestring
"""A str as a JSON string literal, as `canonical_json` writes it (non-ASCII kept, C speed)."""


class Hole(Generic[C]):
    """A value that differs per point: `fill(context)` returns its JSON text."""

    __slots__ = ("fill",)

    def __init__(self, fill: Callable[[C], str]) -> None:
        self.fill = fill


class Skeleton(Generic[C]):
    def __init__(self, document: object, unhashed: Hole[C] | None = None) -> None:
        pieces: list[str | Hole[C]] = []
        _encode(document, pieces)
        texts: list[str | None] = [""]
        holes: list[Callable[[C], str]] = []
        self._unhashed: int | None = None
        for piece in pieces:
            if isinstance(piece, Hole):
                if piece is unhashed:
                    self._unhashed = 2 * len(holes) + 1
                holes.append(piece.fill)
                texts += [None, ""]
            else:
                texts[-1] = (texts[-1] or "") + piece
        self._texts = texts
        """Constant text, with None where each hole goes: every other item from the second."""
        self._holes = tuple(holes)

    @property
    def holes(self) -> int:
        return len(self._holes)

    def fill(self, context: C) -> str:
        """The canonical JSON text of the document for one point."""
        out = self._texts.copy()
        out[1::2] = [fill(context) for fill in self._holes]
        return "".join(out)  # type: ignore[arg-type]  # every None was just replaced

    def fill_hashed(self, context: C) -> tuple[str, str]:
        """The text, and the text with the `unhashed` hole written as "" (what the hash covers)."""
        out = self._texts.copy()
        out[1::2] = [fill(context) for fill in self._holes]
        text = "".join(out)  # type: ignore[arg-type]
        if self._unhashed is None:
            return text, text
        out[self._unhashed] = '""'
        return text, "".join(out)  # type: ignore[arg-type]


def _encode(node: object, out: list[str | Hole[Any]]) -> None:
    if isinstance(node, Hole):
        out.append(node)
    elif isinstance(node, Mapping):
        out.append("{")
        for i, (key, value) in enumerate(sorted(node.items())):
            out.append(("," if i else "") + json_string(key) + ":")
            _encode(value, out)
        out.append("}")
    elif isinstance(node, Sequence) and not isinstance(node, str):
        out.append("[")
        for i, item in enumerate(node):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        out.append(canonical_json(node))
