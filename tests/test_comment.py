"""The plan comment of a pull request (runner/report/comment.py) fits GitHub's limit for any merge."""

from __future__ import annotations

from pathlib import Path

from runner.plan import COMMENT_MARKER
from runner.plan.catalog import load
from runner.repo import review
from runner.report import comment
from runner.report.plan import size
from tests.helpers import SWEEP, write_manifest


def _documents(root: Path, sweeps: int, seeds: int, tag: str = "x") -> comment.Documents:
    for i in range(sweeps):
        text = SWEEP.replace("name: exact", f"name: s{i:03}").replace(
            "seed: [1, 2]", f"seed: {list(range(seeds))}\n    tag: [{tag!r}]"
        )
        write_manifest(root, text, f"s{i:03}.yaml")
    plans = load(root).plans()
    pins = review.comment_pins(review.pins(plans)) + review.head_line("a" * 40)
    return comment.documents(plans, None, "", pins)


def test_four_hundred_sweeps_fit_one_comment_and_the_summary_has_every_point(
    tmp_path: Path,
) -> None:
    made = _documents(tmp_path, 400, 2, tag="🚀" * 20)  # 2 UTF-16 units each, as GitHub counts
    assert size(made.comment) <= comment.COMMENT_LIMIT < size(made.full)
    assert made.comment.startswith(COMMENT_MARKER) and "more sweep(s) with" in made.comment
    (pin,) = review.parse_pins(made.comment)  # past the pins' room: one for every sweep
    assert pin.sweep == review.EVERY_SWEEP and pin.points == 2400
    assert review.planned_head(made.comment) == "a" * 40
    assert made.full.count("| `+` ") == 2400 and "more points" not in made.full


def test_a_small_plan_is_shown_whole_and_unfolded(tmp_path: Path) -> None:
    made = _documents(tmp_path, 1, 2)
    assert made.comment == made.full and "<details>" not in made.comment
    assert made.comment.count("| `+` ") == 6 and len(review.parse_pins(made.comment)) == 1
