"""Proof that beaker-py's typed spec carries a rendered document without loss, once per shape.

The renderer writes exactly the JSON that `BeakerExperimentSpec.to_json()` produces, so the
document can be posted as the text it already is. What could break that is beaker-py's types
dropping or changing a field. Whether they do depends on the document's *shape* (which keys
are present and the JSON type of each value), not on the values of its strings and numbers, so
the round trip through beaker-py's types runs once per shape, not once per point.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from beaker import BeakerExperimentSpec

Shape = tuple[Any, ...] | str


class SpecMismatch(Exception):
    """beaker-py's types would silently change the spec (e.g. drop a field it does not know)."""


def to_beaker_spec(document: Mapping[str, Any]) -> BeakerExperimentSpec:
    """The typed spec for a rendered document, refusing any lossy conversion."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 'preemptible' is deprecated but valid
        spec = BeakerExperimentSpec.from_json(json.loads(json.dumps(document)))
        back: dict[str, Any] = spec.to_json()
    if _canonical(back) != _canonical(document):
        raise SpecMismatch(
            f"beaker-py does not round-trip this spec: {_canonical(document)} != {_canonical(back)}"
        )
    return spec


def shape_of(value: Any) -> Shape:
    """The structure of a JSON value: keys and value types, with every scalar's value erased."""
    if isinstance(value, Mapping):
        return ("{", *((k, shape_of(v)) for k, v in sorted(value.items())))
    if isinstance(value, list):
        return ("[", *(shape_of(v) for v in value))
    return type(value).__name__


class ShapeProofs:
    """Shapes proven lossless so far (thread-safe); `check` proves a new shape on first sight."""

    def __init__(self) -> None:
        self._proven: set[Shape] = set()
        self._lock = threading.Lock()

    def check(self, document: Mapping[str, Any]) -> None:
        """Raise SpecMismatch (or beaker-py's TypeError/ValueError) for a lossy document."""
        shape = shape_of(document)
        with self._lock:
            if shape in self._proven:
                return
        to_beaker_spec(document)
        with self._lock:
            self._proven.add(shape)

    def __len__(self) -> int:
        return len(self._proven)


def _canonical(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True)
