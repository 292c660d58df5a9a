"""Plan pinning (runner/repo/review.py): pins in a comment, what they approve, and reading them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import pytest

from runner.core.errors import RunnerError
from runner.plan import COMMENT_MARKER, Held, SweepPlan, holds
from runner.plan.catalog import load
from runner.repo import review
from tests.fake_github import FakeGitHub
from tests.helpers import SWEEP, write_manifest


def _plans(root: Path, text: str = SWEEP) -> list[SweepPlan]:
    write_manifest(root, text, "exact.yaml")
    return load(root).plans()


def _held_back(plans: Sequence[SweepPlan], found: Sequence[review.Pin]) -> Held:
    """What a submit with these pins holds back: the points they do not cover."""
    return holds.hold_back(plans, functools.partial(review.uncovered, found=found))


def test_pins_round_trip_and_approve_exactly_the_points_shown(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path)
    pins = review.parse_pins(review.pin_lines(review.pins([plan])))
    assert pins == review.pins([plan]) and pins[0].points == 6 and pins[0].tokens == frozenset()
    assert _held_back([plan], pins).held == ()
    (bigger,) = _plans(tmp_path, SWEEP.replace("seed: [1, 2]", "seed: [1, 2, 3]"))
    assert len(_held_back([bigger], pins).held) == 9  # a comment's digest: all or nothing
    # What the reviewed job hands on: the head defined the 6 shown; 3 of the 9 are not covered.
    shown = review.checked(pins, {"exact": frozenset(map(review.token, plan.rows))}, False)
    handed = review.approvals([bigger], shown)
    assert len(handed[0].tokens) == 6  # a partial set: a token per covered point
    held = _held_back([bigger], handed).held
    assert len(held) == 3 and {dict(r.params)["seed"] for _, r in held} == {3}
    # All covered: a digest, no token, however many points.
    assert review.approvals([plan], shown)[0].tokens == frozenset()
    assert _held_back([plan], review.approvals([plan], shown)).held == ()


def test_pins_do_not_grow_with_points_and_past_their_room_one_pin_stands_for_all(
    tmp_path: Path,
) -> None:
    (plan,) = _plans(tmp_path, SWEEP.replace("seed: [1, 2]", f"seed: {list(range(300))}"))
    assert len(plan.rows) == 900 and len(review.comment_pins(review.pins([plan]))) < 150
    many = [review.Pin(f"sweep-{i}", 96, "a" * 64, frozenset(), approved=True) for i in range(400)]
    text = review.comment_pins(many)
    (every,) = review.parse_pins(text)
    assert len(text) < 200 and every.sweep == review.EVERY_SWEEP and every.approved
    defined = {"a": frozenset({"1", "2"}), "b": frozenset({"3"})}
    assert {(p.sweep, p.tokens) for p in review.checked([every], defined, labeled=False)} == {
        ("a", frozenset({"1", "2"})),
        ("b", frozenset({"3"})),
    }


def test_holding_back_a_point_keeps_the_rest_of_the_plan_as_it_was(tmp_path: Path) -> None:
    """Its group's URL, say, which the run's summary links (it used to be dropped)."""
    import dataclasses

    (plan,) = _plans(tmp_path)
    plan = dataclasses.replace(plan, group="https://beaker.org/gr/01GROUP")
    some = review.Pin("exact", 1, review.NO_DIGEST, frozenset({review.token(plan.rows[0])}))
    checked = _held_back([plan], [some])
    assert len(checked.held) == 5 and checked.plans[0].group == plan.group


def test_an_edited_template_is_not_covered_by_the_old_pin(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path)
    pins = review.pins([plan])
    (edited,) = _plans(tmp_path, SWEEP.replace("org/image", "org/other-image"))
    assert len(_held_back([edited], pins).held) == 6


def test_reading_pins_needs_the_token_and_fails_closed(tmp_path: Path) -> None:
    from runner.commands.reviewed import reviewed_pins
    from runner.repo.github import Api

    api = FakeGitHub()
    try:
        api.merged(7, "abc")
        api.comment(
            7, f"{COMMENT_MARKER}\n<!-- {review.PIN_MARK} sweep=s points=1 sha256={'0' * 64} -->"
        )
        good = Api(api.url, api.repository, api.token)
        found = reviewed_pins(good, tmp_path, ["abc"], "main", "approved")
        assert found.pins == {} and list(found.refused) == [7]  # names no head: approves nothing
        wrong = Api(api.url, api.repository, "wrong")
        with pytest.raises(RunnerError, match=r"GitHub API GET .* failed"):
            reviewed_pins(wrong, tmp_path, ["abc"], "main", "approved")
        with pytest.raises(RunnerError, match="GITHUB_TOKEN"):
            Api.from_env({"GITHUB_REPOSITORY": "ai2/sweeps"})
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
    assert len(plan.to_submit) == 2 and plan.cap is not None and plan.waiting == 4
    pins = review.parse_pins(review.pin_lines(review.pins([plan])))
    assert pins[0].points == 6
    assert _held_back([plan], pins).held == ()
    # The first two are submitted: the schedule's plan has 4 `+` points, 2 of them not waiting.
    first = {r.key for r in plan.to_submit}
    rows = tuple(
        dataclasses.replace(r, status=PlanStatus.SUBMITTED) if r.key in first else r
        for r in plan.rows
    )
    later = capped(dataclasses.replace(plan, rows=rows), running=2)
    # The merged head defines all 6: the reviewed job approves the 4 left, by their digest.
    shown = review.checked(pins, {"exact": frozenset(map(review.token, plan.rows))}, False)
    handed = review.approvals([later], shown)
    assert handed[0].points == 4 and handed[0].tokens == frozenset()
    checked = _held_back([later], handed)
    assert checked.held == ()
    (kept,) = checked.plans
    assert len([r for r in kept.rows if r.status == PlanStatus.SUBMIT]) == 4
