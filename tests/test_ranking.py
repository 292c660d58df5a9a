"""The search's pure statistics (runner/search/ranking.py)."""

from __future__ import annotations

from runner.core.sample import Distribution, Kind
from runner.search.ranking import spanned


def test_the_space_values_span_is_a_range_of_numbers_else_the_choices_seen() -> None:
    """What fANOVA is told of a parameter the manifest gave no distribution (a grid axis)."""
    assert spanned("seed", [3, 1, 9, 1]) == Distribution("seed", Kind.INT, (1, 9))
    assert spanned("lr", [0.1, 1, 0.01]) == Distribution("lr", Kind.UNIFORM, (0.01, 1.0))
    assert spanned("optim", ["sgd", "adamw", "sgd"]) == Distribution(
        "optim", Kind.CHOICE, ("sgd", "adamw")
    )
    assert spanned("flag", [True, False]) == Distribution("flag", Kind.CHOICE, (True, False))
    assert spanned("mixed", [1, "a"]) == Distribution("mixed", Kind.CHOICE, (1, "a"))
