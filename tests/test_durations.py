"""Our duration parser agrees with beaker-py's own, which is what Beaker's clients use."""

from __future__ import annotations

import pytest
from beaker.common import parse_duration
from hypothesis import given
from hypothesis import strategies as st

from runner.render.durations import to_nanoseconds

UNITS = ("ns", "ms", "s", "m", "h")
numbers = st.one_of(
    st.integers(0, 10_000).map(str),
    st.decimals(0, 1000, places=3, allow_nan=False, allow_infinity=False).map(str),
)
durations = st.lists(st.tuples(numbers, st.sampled_from(UNITS)), min_size=1, max_size=4).map(
    lambda parts: "".join(f"{value}{unit}" for value, unit in parts)
)


@given(durations)
def test_nanoseconds_equal_beaker_pys_parse_duration(text: str) -> None:
    assert to_nanoseconds(text) == parse_duration(text)


def test_microseconds_are_us_here_as_in_go() -> None:
    """beaker-py reads '5µs' as 5 seconds (its unit pattern is [a-z]*); we write ns, so it never
    sees our text. 'us' means microseconds, as in Go's time.ParseDuration on Beaker's side."""
    assert to_nanoseconds("5us") == parse_duration("0.005ms") == 5000
    assert parse_duration("5µs") == 5_000_000_000


def test_fractions_below_a_nanosecond_truncate_as_beaker_py_does() -> None:
    assert to_nanoseconds("0.0000000015s") == parse_duration("0.0000000015s") == 1


@pytest.mark.parametrize("bad", ["", "5", "5d", "1h 30m", "m5"])
def test_what_the_schema_refuses_is_refused_here_too(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        to_nanoseconds(bad)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(42.4, "42s"), (180, "3m"), (185, "3m05s"), (90, "1m30s"), (7380, "2h03m")],
)
def test_elapsed_time_has_one_format_everywhere(seconds: float, text: str) -> None:
    from runner.render.durations import elapsed_text as said
    from runner.report.status import duration

    assert said(seconds) == duration(seconds) == text
