"""The direct table writer is exactly tabulate's `simple` format wherever it takes over."""

from __future__ import annotations

import string
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from runner.report.tables import simple_table
from tests.conftest import PROJECT

cells = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + " -=+~._:/", max_size=12),
    st.integers(-1000, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(str),
    st.sampled_from(["", "True", "False", "1,000", " padded ", "1e-4", "0x10"]),
)


@pytest.mark.slow
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.lists(cells, min_size=n, max_size=n),
            st.lists(st.lists(cells, min_size=n, max_size=n), max_size=8),
        )
    )
)
@settings(max_examples=400, deadline=None)
def test_simple_table_is_tabulates_simple_format(table: tuple[list[str], list[list[str]]]) -> None:
    headers, rows = table
    assert simple_table(rows, headers) == tabulate(rows, headers=headers, tablefmt="simple")


PLAIN = (["", "experiment", "key", "params"], [["+", "s-0123456789ab", "0123abcd", "lr=0.1"]] * 3)


def test_plain_table_is_written_directly_and_matches() -> None:
    headers, rows = PLAIN
    assert simple_table(rows, headers) == tabulate(rows, headers=headers, tablefmt="simple")
    code = (
        "import sys\n"
        "from runner.report.tables import simple_table\n"
        f"simple_table({rows!r}, {headers!r})\n"
        "print('tabulate' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout == "False\n", done.stderr  # written directly: tabulate never imported
