from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.core.values import canonical_json
from runner.render.skeleton import Hole, Skeleton, json_string

SCALARS = (
    st.text()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=25,
)


def _punch(node: Any, chosen: list[bool]) -> Any:
    """The document with some string leaves (as `chosen` says, in turn) made holes.

    A hole fills in its original text plus the point's suffix, as a JSON string.
    """
    if isinstance(node, dict):
        return {k: _punch(v, chosen) for k, v in node.items()}
    if isinstance(node, list):
        return [_punch(v, chosen) for v in node]
    if isinstance(node, str) and chosen and chosen.pop():
        return Hole(functools.partial(_fill, node))
    return node


def _fill(text: str, suffix: str) -> str:
    return json_string(text + suffix)


def _materialise(node: Any, suffix: str) -> Any:
    if isinstance(node, Hole):
        return json.loads(node.fill(suffix))
    if isinstance(node, dict):
        return {k: _materialise(v, suffix) for k, v in node.items()}
    if isinstance(node, list):
        return [_materialise(v, suffix) for v in node]
    return node


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(DOCUMENTS, st.lists(st.booleans(), max_size=30), st.text())
def test_a_filled_skeleton_is_the_canonical_json_of_the_filled_document(
    document: Any, chosen: list[bool], suffix: str
) -> None:
    punched = _punch(document, chosen)
    skeleton: Skeleton[str] = Skeleton(punched)
    assert skeleton.fill(suffix) == canonical_json(_materialise(punched, suffix))


def test_holes_at_both_ends_side_by_side_and_as_values() -> None:
    hole: Hole[str] = Hole(json_string)
    skeleton: Skeleton[str] = Skeleton([hole, hole, {"b": hole, "a": [hole]}, hole])
    assert skeleton.holes == 5
    assert skeleton.fill('é"') == '["é\\"","é\\"",{"a":["é\\""],"b":"é\\""},"é\\""]'


def test_a_document_without_holes_is_its_canonical_json() -> None:
    document = {"z": [1, 2.5, None, True], "a": {"é": "ü", "b": []}}
    skeleton: Skeleton[None] = Skeleton(document)
    assert skeleton.holes == 0
    assert skeleton.fill(None) == canonical_json(document)
