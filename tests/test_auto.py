"""An automatic search (`advance: auto`): the envelope approved once, each round a decision the
lock records before its points are created, recomputed (`replay`) before anything is acted on.

On the fake at the port (tests/fake_backend.py): a halving's rung written by `submit`'s
planning step with what it read, how it chose and what it chose; a promoted point edited in the
lock, or inputs forged to match it, refused with exit 4 and nothing created; a round past the
envelope's GPU-hours never written. Then on this machine (the local backend): a halving run to its
last rung by `submit` alone, and an adaptive (TPE) search's rounds, each replaying.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from runner.analysis.findings import find
from runner.apply import Applied, ApplyOptions, apply, notify
from runner.cli import main
from runner.commands.propose import same_code
from runner.core.aims import Goal
from runner.core.errors import ManifestError
from runner.core.locked import Heard
from runner.core.search import Advance, Mode, Promotion
from runner.locking import decision as records
from runner.locking.proposing import Proposed, proposals
from runner.locking.replay import replay
from runner.manifest import Locks, load
from runner.manifest.lock import rewritten, sections, verified
from runner.observe import sweeps
from runner.plan import PlanStatus, budget, catalog
from runner.plan.envelope import digest, envelope
from runner.plan.envelope import envelope as envelope_of
from runner.plan.policy import Policy
from runner.repo import review
from runner.report import status
from runner.report.page import as_json as page_json
from runner.report.page import markdown
from runner.report.rounds import proposed_lines
from runner.search import rungs
from runner.search.points import Result
from tests.conftest import PROJECT
from tests.fake_backend import FakeBackend
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import (
    BRANIN_SEARCH,
    OBJECTIVE_HEAD,
    Quiet,
    finish_rung,
    halving,
    head,
    write_manifest,
)

SHOWN = "sweeps/halving.yaml"
AUTO = halving() + "advance: auto\n"
LOSS: dict[tuple[float, float], float | None] = {  # lr 0.1 is bad; one of its points fails
    (0.1, 0.0): 3.0, (0.1, 0.1): None, (0.1, 0.2): 2.9,
    (0.01, 0.0): 0.7, (0.01, 0.1): 0.4, (0.01, 0.2): 0.6,
    (0.001, 0.0): 0.8, (0.001, 0.1): 0.5, (0.001, 0.2): 0.45,
}  # fmt: skip
COMMIT = "c0ffee" * 6 + "c0fe"


def _submit(root: Path, backend: FakeBackend) -> Applied:
    plans = catalog.load(root, ()).plans()
    return apply(plans, backend, ApplyOptions(root, commit=COMMIT), Quiet())


class Witness(FakeBackend):
    """A fake that notes, at each create, whether the lock already recorded a decision."""

    def __init__(self, lock: Path) -> None:
        super().__init__()
        self.lock = lock
        self.recorded_first: list[bool] = []

    def create(self, sweep: Any, point: Any) -> Any:
        text = self.lock.read_text() if self.lock.exists() else ""
        if dict(point.params)["rung"] == 1:
            self.recorded_first.append('"decisions"' in text and point.name not in text)
        return super().create(sweep, point)


def _rung_1(root: Path, text: str = AUTO) -> tuple[Witness, Applied]:
    """The automatic halving's rung 0 submitted and ended with LOSS, then one submit: rung 1."""
    write_manifest(root, text, "halving.yaml")
    backend = Witness(root / "sweeps" / "halving.lock.json")
    first = _submit(root, backend)
    assert len(backend.made) == 9 and not first.advanced
    finish_rung(root, backend, 0, LOSS)
    return backend, _submit(root, backend)


def test_advance_is_parsed_and_auto_needs_a_search_with_rounds(tmp_path: Path) -> None:
    path = write_manifest(
        tmp_path, AUTO.replace("metric: loss}", "metric: loss, promotion: async}")
    )
    search = load(path, "sweeps/sweep.yaml").sweep.search
    assert search.advance.mode is Mode.AUTO and search.auto and search.advance.max_gpu_hours is None
    assert search.halving is not None and search.halving.promotion is Promotion.ASYNC
    capped = write_manifest(tmp_path, halving() + "advance: {mode: auto, max_gpu_hours: 40}\n")
    assert load(capped).sweep.search.advance.max_gpu_hours == 40.0

    grid = head("grid") + '    command: [python, train.py, "--lr={lr}"]\nparams:\n  grid:\n'
    grid += "    lr: [0.1]\nadvance: auto\n"
    with pytest.raises(ManifestError) as caught:
        load(write_manifest(tmp_path, grid, "grid.yaml"), "sweeps/grid.yaml")
    assert str(caught.value) == (
        "sweeps/grid.yaml:13:1: advance: auto needs a search with rounds, and grid has none: an"
        " adaptive sample (method tpe or gp) or params.fidelity (a successive halving)"
    )
    with pytest.raises(ManifestError) as caught:
        load(write_manifest(tmp_path, halving() + "advance: {mode: often}\n", "bad.yaml"))
    assert 'advance.mode: "often" is not allowed (allowed: review, auto)' in str(caught.value)


def test_the_envelope_digest_covers_what_a_round_may_not_change_and_prices_the_whole_search(
    tmp_path: Path,
) -> None:
    def enveloped(text: str) -> tuple[str, float, float]:
        write_manifest(tmp_path, text, "halving.yaml")
        (plan,) = catalog.load(tmp_path, [SHOWN]).plans()
        found = envelope(plan)
        return found.digest, found.projected, found.limit

    first, projected, limit = enveloped(AUTO)
    # rung 0: 9 × 2 GPUs × 1 h (100 / 900 of 9 h); rung 1: 3 × 2 × 3 h; rung 2: 1 × 2 × 9 h
    assert projected == limit == 18 + 18 + 18
    capped = enveloped(halving() + "advance: {mode: auto, max_gpu_hours: 40}\n")
    assert capped[1:] == (54, 40) and capped[0] != first
    for edit in (
        ("eta: 3", "eta: 2"),
        ("[0.0, 0.1, 0.2]", "[0.0, 0.1]"),
        ("metric: loss}", "metric: loss, promotion: async}"),
        ("gpus: 2", "gpus: 4"),
        ("timeout: 9h", "timeout: 8h"),
    ):
        assert enveloped(AUTO.replace(*edit))[0] != first, edit
    assert _rung_1(tmp_path)[1].advanced  # a round in the lock moves nothing the review saw
    assert enveloped(AUTO)[:2] == (first, projected)


def test_an_automatic_rung_records_its_decision_before_its_points_are_created_and_replays(
    tmp_path: Path,
) -> None:
    backend, done = _rung_1(tmp_path)
    assert len(done.advanced) == 1
    assert backend.recorded_first == [True, True, True]  # write-ahead: the lock came first
    assert len(backend.made) == 12 and done.exit_code == 0
    lock = json.loads((tmp_path / "sweeps" / "halving.lock.json").read_text())
    (record,) = lock["decisions"]["rounds"]
    # the best 9 // 3 = 3 by loss: 0.4, 0.45, 0.5
    assert record["chose"] == [[1, [0.01, 0.1]], [1, [0.001, 0.2]], [1, [0.001, 0.1]]]
    assert lock["rungs"]["points"] == record["chose"]
    assert record["round"] == 1 and record["before"] == 0 and record["ledger"] == COMMIT
    told = record["told"]
    assert len(told) == 9 and [t[0] for t in told] == sorted(t[0] for t in told)
    assert sorted(t[3] for t in told) == ["done"] * 8 + ["failed"]
    loaded = load(tmp_path / SHOWN, SHOWN)
    halved = rungs.halving_of(loaded.sweep)
    assert halved is not None
    by_key = {t[0]: records.told(Heard(t[0], t[1], tuple(t[2]), t[3], tuple(t[4]))) for t in told}
    ranked = rungs.ranked(halved, [dataclasses.replace(t, row=t.row[:2]) for t in by_key.values()])
    ((rung, ended, kept, keys),) = record["cuts"]
    assert (rung, ended, kept) == (0, 9, 3) and keys == [t.key for t in ranked]
    assert by_key[keys[-1]].result is Result.FAILED  # failed: ranked last
    (plan,) = catalog.load(tmp_path, [SHOWN]).plans()
    assert record["envelope"] == digest(plan) and record["gpu_hours"] == 18 + 18
    assert [r.ok for r in replay(loaded)] == [True]
    assert records.history(loaded.sweep.search) == {0: "person", 1: "envelope"}

    again = _submit(tmp_path, backend)  # rung 1 still runs: nothing new, no byte changed
    assert not again.advanced and len(backend.made) == 12


def _forge(root: Path, edit: Any) -> None:
    """Rewrite the lock's sections with `edit(sections)`, the digest recomputed (anyone can)."""
    path = root / "sweeps" / "halving.lock.json"
    body = verified(path.read_text())
    assert body is not None
    found = sections(body)
    edit(found)
    path.write_text(rewritten(body, "python -m runner submit", found))


def test_a_promoted_point_edited_in_the_lock_does_not_replay_and_nothing_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backend, _ = _rung_1(tmp_path)

    def swap(found: dict[str, Any]) -> None:  # the third promotion: lr 0.01 wd 0.2 (0.6)
        found["rungs"]["points"][2] = [1, [0.01, 0.2]]

    _forge(tmp_path, swap)
    assert main(["-C", str(tmp_path), "validate"]) == 0  # the digest holds: it loads
    (bad,) = replay(load(tmp_path / SHOWN, SHOWN))
    assert bad.why.startswith("the lock's points of this round are not the 1:[0.01, 0.1]")
    assert main(["-C", str(tmp_path), "replay", SHOWN]) == 4
    assert "error: sweeps/halving.yaml: round 1 (after 0 point(s)) does not replay" in (
        capsys.readouterr().err
    )
    backend.calls.clear()
    refused = _submit(tmp_path, backend)
    assert refused.exit_code == 4 and refused.stop is not None
    assert "does not replay" in refused.stop.reason
    assert [c for c, _ in backend.calls if c == "create"] == []


def test_inputs_forged_to_match_a_promotion_replay_but_the_backend_contradicts_them(
    tmp_path: Path,
) -> None:
    """A forger who edits what a round read as well as what it chose makes a round that
    replays: submit also checks what the round read against what the backend says now."""
    backend, _ = _rung_1(tmp_path)
    bad = [0.1, 0.2]  # lr 0.1 wd 0.2 ran to 2.9; the forged record says 0.1

    def forged(found: dict[str, Any]) -> None:
        (record,) = found["decisions"]["rounds"]
        for heard in record["told"]:
            if heard[2][:2] == bad:
                heard[4] = [0.1]
        record["chose"] = [[1, bad], *record["chose"][:2]]
        found["rungs"]["points"] = record["chose"]
        keys = record["cuts"][0][3]
        forged_key = next(h[0] for h in record["told"] if h[2][:2] == bad)
        record["cuts"][0][3] = [forged_key, *(k for k in keys if k != forged_key)]

    _forge(tmp_path, forged)
    assert [r.ok for r in replay(load(tmp_path / SHOWN, SHOWN))] == [True]
    backend.calls.clear()
    refused = _submit(tmp_path, backend)
    assert refused.exit_code == 4 and refused.stop is not None
    assert "read halving-" in refused.stop.reason and "as done with [0.1]" in refused.stop.reason
    assert "and the backend says done [2.9]" in refused.stop.reason
    assert [c for c, _ in backend.calls if c == "create"] == []


def test_a_round_past_the_envelopes_gpu_hours_is_never_written(tmp_path: Path) -> None:
    capped = halving() + "advance: {mode: auto, max_gpu_hours: 30}\n"  # rung 0 + 1 cost 36
    backend, done = _rung_1(tmp_path, capped)
    (auto,) = done.rounds
    assert not auto.written and len(backend.made) == 9
    assert auto.left.startswith("round 1 would leave the envelope: 36 GPU-hours with every point")
    assert "over 30" in auto.left
    assert not (tmp_path / "sweeps" / "halving.lock.json").exists()  # a grid's halving: no lock
    assert not _submit(tmp_path, backend).advanced and len(backend.made) == 9


CURVE = (PROJECT / "sweeps" / "halving.yaml").read_text().replace(
    "x2: [0.1, 0.5, 0.9]", "x2: [0.5]"
).replace("max: 2700", "max: 900") + "advance: auto\n"
"""The committed learning-curve halving, 9 configurations over 3 rungs, automatic."""


@pytest.mark.slow
def test_a_local_automatic_halving_runs_to_its_last_rung_with_submit_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, CURVE, "halving.yaml")
    assert main(["-C", str(tmp_path), "submit", SHOWN]) == 0
    err = capsys.readouterr().err
    for rung in (1, 2):
        assert f"rung {rung} (steps={100 * 3**rung}): promoted" in err
    assert "approved by its reviewed envelope" in err
    assert "halving complete: rung 2 (steps=900) is the last" in err
    assert main(["-C", str(tmp_path), "status", SHOWN, "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    by_rung = [sum(p["params"]["rung"] == k for p in points) for k in (0, 1, 2)]
    assert by_rung == [9, 3, 1] and all(p["state"] == "succeeded" for p in points)
    for k in (1, 2):  # each rung the top third of the one before, by the loss it ran
        below = sorted((p for p in points if p["params"]["rung"] == k - 1), key=_loss)
        top = {_config(p) for p in below[: len(below) // 3]}
        assert {_config(p) for p in points if p["params"]["rung"] == k} == top
    assert main(["-C", str(tmp_path), "replay"]) == 0
    assert "2 automatic round(s) replay byte for byte (1, 2)" in capsys.readouterr().err

    def swap(found: dict[str, Any]) -> None:  # rung 2's point: another of rung 1's three
        points = found["rungs"]["points"]
        other = next(row for k, row in points if k == 1 and row != points[-1][1])
        points[-1] = [2, other]

    _forge(tmp_path, swap)
    runs = sorted((tmp_path / ".runs" / "halving").iterdir())
    assert main(["-C", str(tmp_path), "replay"]) == 4
    assert "round 2 (after 3 point(s)) does not replay" in capsys.readouterr().err
    assert main(["-C", str(tmp_path), "submit", SHOWN]) == 4
    assert "does not replay" in capsys.readouterr().err
    assert sorted((tmp_path / ".runs" / "halving").iterdir()) == runs  # nothing ran


def _loss(point: dict[str, Any]) -> float:
    return float(point["metrics"]["loss"])


def _config(point: dict[str, Any]) -> tuple[float, float]:
    return point["params"]["x1"], point["params"]["x3"]


@pytest.mark.slow
def test_an_automatic_tpe_search_is_advanced_by_submit_round_after_round_and_each_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = "sweeps/branin.yaml"
    write_manifest(
        tmp_path,
        OBJECTIVE_HEAD.format(name="branin") + BRANIN_SEARCH + "advance: auto\n",
        "branin.yaml",
    )
    assert (
        main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0
    )  # round 0: the author's
    lock = tmp_path / "sweeps" / "branin.lock.json"
    reviewed = json.loads(lock.read_text())
    assert reviewed["rounds"] == [0] * 4 and "decisions" not in reviewed
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "submit", shown]) == 0
    err = capsys.readouterr().err
    assert "round 1: proposed 4 point(s), 8 of n=12: approved by its reviewed envelope" in err
    assert "round 2: proposed 4 point(s), 12 of n=12: approved by its reviewed envelope" in err
    assert "search complete: 12 of n=12 points proposed" in err
    written = json.loads(lock.read_text())
    assert written["points"][:4] == reviewed["points"]  # the reviewed round, as it was
    assert written["rounds"] == [0] * 4 + [1] * 4 + [2] * 4
    records_ = written["decisions"]["rounds"]
    assert [(r["round"], r["before"], r["seed"]) for r in records_] == [(1, 4, 1), (2, 8, 2)]
    assert [len(r["told"]) for r in records_] == [4, 8]
    assert all(t[3] == "done" and len(t[4]) == 1 for r in records_ for t in r["told"])
    loaded = load(tmp_path / shown, shown)
    assert [r.ok for r in replay(loaded)] == [True, True]
    assert records.history(loaded.sweep.search) == {0: "person", 1: "envelope", 2: "envelope"}
    assert main(["-C", str(tmp_path), "status", shown, "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert len(points) == 12 and all(p["state"] == "succeeded" for p in points)


def _args(experiment: Any) -> list[str]:
    return list(experiment.spec["tasks"][0]["command"])


def test_asynchronous_promotion_on_the_fake_beaker_promotes_the_best_ended_while_the_rest_run(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """ASHA over the wire: 3 of rung 0's 9 points have ended, so floor(3 / 3) = 1 goes on now,
    the best of those 3, while the 6 others still run; a promotion is never taken back."""
    text = AUTO.replace("metric: loss}", "metric: loss, promotion: async}")
    write_manifest(tmp_path, text, "halving.yaml")
    beaker = ["-C", str(tmp_path), "submit", "--backend", "beaker"]
    assert main(beaker) == 0
    zero = fake_beaker.experiments()
    assert len(zero) == 9
    ended = {0: 0.5, 4: 0.3, 8: 0.9}
    for i, exp in enumerate(zero):
        fake_beaker.set_job_status(exp.id, "succeeded" if i in ended else "running")
        if i in ended:
            fake_beaker.set_metrics(exp.id, {"loss": ended[i]})
    capsys.readouterr()
    assert main(beaker) == 0
    assert "promoted 1 point(s) as their rungs ended (1 to rung 1)" in capsys.readouterr().err
    (promoted,) = [e for e in fake_beaker.experiments() if e.id not in {z.id for z in zero}]
    assert _args(promoted)[2:5] == [*_args(zero[4])[2:4], "--steps=300"]  # the best: 0.3
    assert [fake_beaker.experiment(z.id).status for z in zero].count("running") == 6
    lock = json.loads((tmp_path / "sweeps" / "halving.lock.json").read_text())
    (record,) = lock["decisions"]["rounds"]
    (cut,) = record["cuts"]
    assert cut[:3] == [0, 3, 1] and len(cut[3]) == 3  # rung 0: 3 ended, 1 goes on
    assert sorted(t[3] for t in record["told"]) == ["done"] * 3 + ["pending"] * 6
    assert [r.ok for r in replay(load(tmp_path / SHOWN, SHOWN))] == [True]

    for i in (1, 2, 3):  # three more end, each worse than 0.3: the top 2 of 6 go on
        fake_beaker.set_job_status(zero[i].id, "succeeded")
        fake_beaker.set_metrics(zero[i].id, {"loss": 0.5 + i / 10})
    assert main(beaker) == 0
    later = [e for e in fake_beaker.experiments() if e.id not in {z.id for z in zero}]
    assert len(later) == 2 and promoted.id in {e.id for e in later}  # never taken back
    (second,) = [e for e in later if e.id != promoted.id]
    assert _args(second)[2:4] == _args(zero[0])[2:4]  # 0.5, second best of the six
    assert [r.ok for r in replay(load(tmp_path / SHOWN, SHOWN))] == [True, True]


def test_status_report_and_the_notice_say_who_approved_each_rung(tmp_path: Path) -> None:
    backend, _ = _rung_1(tmp_path)
    (seen,) = sweeps.observe(catalog.load(tmp_path, ()), backend)
    said = "Approved: rung 0: a person; rung 1: the envelope."
    assert status.table(seen).endswith(said)
    assert json.loads(status.render([seen], "json"))["sweeps"][0]["approved"] == {
        "0": "person",
        "1": "envelope",
    }
    found = find(seen, "loss", Goal.MINIMIZE)
    assert said in markdown(found, {})
    assert page_json(found)["approved"] == {"0": "person", "1": "envelope"}
    (notice,) = [e for e in notify.sweep_events(seen) if e.id.startswith("advanced:1:")]
    assert "rung 1 (3 point(s)) submitted inside its reviewed envelope" in notice.text
    assert "not by a person" in notice.text
    assert notify.approved_by(seen.search) == "Rungs approved by: 0 person, 1 envelope"

    write_manifest(tmp_path, halving(), "halving.yaml")  # paused: its rounds are still said
    (paused,) = sweeps.observe(catalog.load(tmp_path, ()), backend)
    assert status.table(paused).endswith(said)
    (tmp_path / "sweeps" / "halving.lock.json").unlink()  # a halving a person ran says nothing
    (plain,) = sweeps.observe(catalog.load(tmp_path, ()), FakeBackend())
    assert "Approved" not in status.table(plain) and "approved" not in status.as_json(plain)


def _proposed(root: Path, backend: FakeBackend) -> Proposed:
    cat = catalog.load(root, [SHOWN], Locks.MAY_BE_STALE)
    (one,) = proposals(cat, sweeps.observer(cat, backend), same_code(root))
    return one


def test_propose_opens_no_pull_request_inside_the_envelope_and_one_for_a_round_past_it(
    tmp_path: Path,
) -> None:
    capped = halving() + "advance: {mode: auto, max_gpu_hours: 30}\n"
    for text, inside in ((AUTO, True), (capped, False)):
        root = tmp_path / str(inside)
        write_manifest(root, text, "halving.yaml")
        backend = FakeBackend()
        apply(catalog.load(root, ()).plans(), backend, ApplyOptions(root), Quiet())  # rung 0
        finish_rung(root, backend, 0, LOSS)
        one = _proposed(root, backend)
        assert one.inside is inside and (one.round is None) is inside
        assert (root / "sweeps" / "halving.lock.json").exists() is not inside
        if inside:
            assert proposed_lines(one) == [
                f"{SHOWN}: rung 1 is inside its envelope (advance: auto): the schedule's submit"
                " advances it, so no pull request is proposed"
            ]


def test_the_plan_pins_the_envelope_and_only_a_pin_of_the_same_envelope_covers_automatic_points(
    tmp_path: Path,
) -> None:
    write_manifest(tmp_path, AUTO, "halving.yaml")
    (planned,) = catalog.load(tmp_path, ()).plans()
    (pin,) = review.pins([planned])
    assert pin.envelope == digest(planned) and pin.points == 9
    (back,) = review.parse_pins(review.pin_lines([pin]))
    assert back == pin
    head = review.at_head({SHOWN: AUTO})
    assert head.envelopes == {"halving": pin.envelope}
    (kept,) = review.checked([pin], head.tokens, False, head.envelopes)
    assert kept.envelope == pin.envelope and len(kept.tokens) == 9
    other = review.at_head({SHOWN: AUTO.replace("eta: 3", "eta: 2")})
    (dropped,) = review.checked([pin], other.tokens, False, other.envelopes)
    assert dropped.envelope == ""  # another envelope at the merged head: not approved

    _rung_1(tmp_path)
    (after,) = catalog.load(tmp_path, ()).plans(catalog.load(tmp_path, ()).ledgers())
    rung_1 = frozenset(r.key for r in after.rows if dict(r.params)["rung"] == 1)
    assert envelope_of(after).digest == pin.envelope  # a round changes no envelope
    pending = dataclasses.replace(
        after,
        rows=tuple(
            dataclasses.replace(r, status=PlanStatus.SUBMIT, entry=None) if r.key in rung_1 else r
            for r in after.rows
        ),
    )
    approved = review.approvals([pending], [kept])
    assert [p.envelope for p in approved] == [pin.envelope]
    assert review.uncovered(pending, approved) == frozenset()
    assert review.uncovered(pending, [dropped]) == rung_1
    paused = dataclasses.replace(
        pending,
        sweep=dataclasses.replace(
            pending.sweep,
            search=dataclasses.replace(pending.sweep.search, advance=Advance(Mode.REVIEW)),
        ),
    )
    assert review.uncovered(paused, approved) == rung_1  # paused: a person's review again


def test_with_plan_pins_a_round_is_advanced_only_inside_an_approved_envelope(
    tmp_path: Path,
) -> None:
    """In the Submit workflow (`--reviewed`): no pin carries the sweep's envelope (an edit
    nobody reviewed), so no round is written; the reviewed envelope's pin lets it go on."""
    write_manifest(tmp_path, AUTO, "halving.yaml")
    backend = FakeBackend()
    (planned,) = catalog.load(tmp_path, ()).plans()
    (pin,) = review.pins([planned])
    plain = dataclasses.replace(pin, envelope="")

    def submit(pins: list[review.Pin]) -> Applied:
        plans = catalog.load(tmp_path, ()).plans()
        return apply(plans, backend, ApplyOptions(tmp_path, pins=pins), Quiet())

    assert len(submit([plain]).outcomes) == 9  # rung 0: its points' pin covers them
    finish_rung(tmp_path, backend, 0, LOSS)
    (waits,) = submit([plain]).rounds
    assert not waits.written and "its envelope is in no reviewed plan" in waits.left
    assert not (tmp_path / "sweeps" / "halving.lock.json").exists() and len(backend.made) == 9
    done = submit([plain, dataclasses.replace(pin, points=0, tokens=frozenset())])
    assert len(done.advanced) == 1 and len(backend.made) == 12


def test_the_budget_policy_judges_an_automatic_searchs_envelope_not_its_round(
    tmp_path: Path,
) -> None:
    """Rung 0 alone costs 18 GPU-hours, under a per-sweep limit of 40; the envelope (the whole
    search, 54 projected) is over it, and that is what the merge approves."""
    rules = Policy("sweeps/policy.yaml", max_gpu_hours_per_sweep=40)
    write_manifest(tmp_path, halving(), "halving.yaml")
    (reviewed,) = catalog.load(tmp_path, ()).plans()
    assert budget.breaches([reviewed], rules) == []
    write_manifest(tmp_path, AUTO, "halving.yaml")
    (auto,) = catalog.load(tmp_path, ()).plans()
    (breach,) = budget.breaches([auto], rules)
    assert str(breach.problem) == (
        "sweeps/halving.yaml:17:10: advance: sweep halving may use 54 GPU-hours in its envelope"
        " (advance: auto, every round), over max_gpu_hours_per_sweep 40 (sweeps/policy.yaml)"
    )
    capped = halving() + "advance: {mode: auto, max_gpu_hours: 36}\n"
    write_manifest(tmp_path, capped, "halving.yaml")
    assert budget.breaches(catalog.load(tmp_path, ()).plans(), rules) == []
