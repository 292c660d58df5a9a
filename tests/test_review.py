"""Plan pinning (runner/repo/review.py): pins in a comment, what they approve, and reading them."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.core.errors import RunnerError
from runner.plan import COMMENT_MARKER, SweepPlan
from runner.plan.catalog import load
from runner.repo import review
from tests.fake_github import FakeGitHub
from tests.helpers import SWEEP, write_manifest


def _plans(root: Path, text: str = SWEEP) -> list[SweepPlan]:
    write_manifest(root, text, "exact.yaml")
    return load(root).plans()


def test_pins_round_trip_and_approve_exactly_the_points_shown(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path)
    pins = review.parse_pins(review.pin_lines(review.pins([plan])))
    assert pins == review.pins([plan]) and len(pins[0].tokens) == 6
    assert review.hold_back([plan], pins).held == ()
    (bigger,) = _plans(tmp_path, SWEEP.replace("seed: [1, 2]", "seed: [1, 2, 3]"))
    held = review.hold_back([bigger], pins).held
    assert len(held) == 3 and {dict(r.params)["seed"] for _, r in held} == {3}
    # Digest only (a summarised table): all or nothing.
    digest_only = review.pins([plan], listed=0)
    assert review.hold_back([plan], digest_only).held == ()
    assert len(review.hold_back([bigger], digest_only).held) == 9


def test_an_edited_template_is_not_covered_by_the_old_pin(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path)
    pins = review.pins([plan])
    (edited,) = _plans(tmp_path, SWEEP.replace("org/image", "org/other-image"))
    assert len(review.hold_back([edited], pins).held) == 6


def test_reading_pins_needs_the_token_and_fails_closed() -> None:
    api = FakeGitHub()
    try:
        api.merged(7, "abc")
        api.comment(
            7, f"{COMMENT_MARKER}\n<!-- {review.PIN_MARK} sweep=s points=1 sha256={'0' * 64} -->"
        )
        good = review.Api(api.url, api.repository, api.token)
        found = review.reviewed_pins(good, ["abc"], "main", "approved")
        assert found.pins == {} and list(found.refused) == [7]  # names no head: approves nothing
        wrong = review.Api(api.url, api.repository, "wrong")
        with pytest.raises(RunnerError, match=r"GitHub API GET .* failed"):
            review.reviewed_pins(wrong, ["abc"], "main", "approved")
        with pytest.raises(RunnerError, match="GITHUB_TOKEN"):
            review.Api.from_env({"GITHUB_REPOSITORY": "ai2/sweeps"})
    finally:
        api.close()


def test_the_plan_comment_marker_is_spelled_once() -> None:
    """The comment the plan writes and the one review reads for pins carry the same marker
    because there is one (two equal copies drift apart the day one is edited)."""
    package = Path(review.__file__).parent.parent
    spelled = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if "beaker-sweep-runner:plan -->" in path.read_text(encoding="utf-8")
    ]
    assert spelled == ["plan/__init__.py"]


def test_a_capped_sweep_pins_every_point_so_top_ups_submit_the_waiting_ones(
    tmp_path: Path,
) -> None:
    """The plan comment of a sweep with max_running 2 shows all 6 points (4 waiting): its
    pins approve all 6, so once the first 2 are recorded the next top-up may submit the rest."""
    import dataclasses

    from runner.plan import PlanStatus, capped

    (plan,) = _plans(tmp_path, "max_running: 2\n" + SWEEP)
    assert len(plan.to_submit) == 2 and plan.cap is not None and plan.cap.waiting == 4
    pins = review.parse_pins(review.pin_lines(review.pins([plan])))
    assert pins[0].points == 6 and len(pins[0].tokens) == 6
    assert review.hold_back([plan], pins).held == ()
    # The first two are submitted: the schedule's plan has 4 `+` points, 2 of them not waiting.
    first = {r.key for r in plan.to_submit}
    rows = tuple(
        dataclasses.replace(r, status=PlanStatus.SUBMITTED) if r.key in first else r
        for r in plan.rows
    )
    later = capped(dataclasses.replace(plan, rows=rows), running=2)
    checked = review.hold_back([later], pins)
    assert checked.held == ()
    (kept,) = checked.plans
    assert len([r for r in kept.rows if r.status == PlanStatus.SUBMIT]) == 4
