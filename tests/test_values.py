from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.core.values import InvalidValue, Value, as_text, canonical_json, identity, normalize

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)


# --- normalize ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (3e6, 3000000),
        (3000000, 3000000),
        (-0.0, 0),
        (0.0, 0),
        (-2.0, -2),
        (1e16, 10**16),
    ],
)
def test_integral_floats_become_ints(raw: float, expected: int) -> None:
    value = normalize(raw)
    assert value == expected
    assert type(value) is int


def test_non_integral_floats_stay_floats() -> None:
    assert normalize(0.0003) == 0.0003
    assert type(normalize(0.0003)) is float
    assert type(normalize(2.5)) is float


def test_negative_zero_has_the_identity_of_zero() -> None:
    assert identity(normalize(-0.0)) == identity(normalize(0)) == "0"
    assert as_text(normalize(-0.0)) == "0"


@pytest.mark.parametrize("raw", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused(raw: float) -> None:
    with pytest.raises(InvalidValue, match="not allowed"):
        normalize(raw)


@pytest.mark.parametrize("raw", [None, [1], {"a": 1}, b"x", (1,)])
def test_other_types_are_refused(raw: object) -> None:
    with pytest.raises(InvalidValue, match="values are not allowed"):
        normalize(raw)


def test_invalid_value_is_a_value_error() -> None:
    assert issubclass(InvalidValue, ValueError)


def test_booleans_stay_booleans() -> None:
    assert normalize(True) is True
    assert normalize(False) is False


def test_true_is_never_the_same_value_as_one() -> None:
    assert identity(normalize(True)) != identity(normalize(1))
    assert identity(normalize(True)) != identity(normalize(1.0))
    assert identity(normalize(False)) != identity(normalize(0))
    assert identity(normalize(False)) != identity(normalize(-0.0))


def test_strings_are_not_numbers() -> None:
    assert normalize("1") == "1"
    assert identity("1") != identity(1)
    assert identity("true") != identity(True)


def test_identity_of_equal_numbers_is_equal_after_normalize() -> None:
    assert identity(normalize(3e6)) == identity(normalize(3000000))
    assert identity(normalize(1e-4)) == identity(normalize(0.0001))


@given(scalars)
@settings(max_examples=100, deadline=None)
def test_normalize_is_idempotent(raw: object) -> None:
    once = normalize(raw)
    twice = normalize(once)
    assert identity(once) == identity(twice)
    assert type(once) is type(twice)


@given(st.integers(min_value=-(2**53), max_value=2**53))
@settings(max_examples=100, deadline=None)
def test_an_int_written_as_float_is_the_same_value(n: int) -> None:
    assert identity(normalize(float(n))) == identity(normalize(n))


@given(scalars)
@settings(max_examples=100, deadline=None)
def test_identity_round_trips_through_json(raw: object) -> None:
    value = normalize(raw)
    back = json.loads(identity(value))
    assert back == value
    assert type(back) is type(value)


# --- as_text ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (0.0003, "0.0003"),
        (1e-05, "1e-05"),
        (2.5, "2.5"),
        (3000000, "3000000"),
        (-7, "-7"),
        ("abc", "abc"),
        ("", ""),
    ],
)
def test_as_text(value: Value, text: str) -> None:
    assert as_text(value) == text


def test_as_text_of_a_normalised_integral_float_has_no_decimal_point() -> None:
    assert as_text(normalize(3e6)) == "3000000"


# --- canonical_json -----------------------------------------------------------------------------


def test_canonical_json_is_sorted_and_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, 2], "c": {"z": True, "y": None}}) == (
        '{"a":[1,2],"b":1,"c":{"y":null,"z":true}}'
    )


def test_canonical_json_ignores_insertion_order() -> None:
    first = {"lr": 0.001, "bs": 512, "nested": {"x": 1, "y": "2"}}
    second = {"nested": {"y": "2", "x": 1}, "bs": 512, "lr": 0.001}
    assert canonical_json(first) == canonical_json(second)


def test_canonical_json_keeps_non_ascii_text() -> None:
    assert canonical_json({"name": "β-sweep"}) == '{"name":"β-sweep"}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_canonical_json_refuses_nan(bad: float) -> None:
    with pytest.raises(ValueError, match="Out of range float values"):
        canonical_json({"x": bad})
