"""A sweep's Beaker group against the fake Beaker, over beaker-py's real wire: found or created
exactly once (lost replies, ALREADY_EXISTS, two runners), membership in batches, repaired by the
next submit, never failing the submissions."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import grpc
import pytest

from runner import ledger
from runner.backends import Rejected, group_name
from runner.backends.beaker import BeakerBackend
from runner.backends.beaker.groups import BATCH, POLICY
from runner.cli import main
from runner.core.model import Sweep
from runner.core.retry import RetryPolicy
from runner.ledger import headers
from runner.manifest import load_manifest
from runner.plan import catalog
from tests.conftest import PROJECT
from tests.fake_beaker.fixtures import new_client
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import MINIMAL, POINTS, SWEEP, no_sleep, write_manifest


def sweep_of(root: Path) -> Sweep:
    (sweep,) = catalog.load(root, []).sweeps
    return sweep


def backend() -> BeakerBackend:
    opened = BeakerBackend()
    opened.groups.policy = RetryPolicy(attempts=POLICY.attempts, sleep=no_sleep)
    return opened


def create_experiments(fake: FakeBeaker, root: Path) -> list[str]:
    """The sweep's experiments on the fake (through submit), without their group."""
    (root / "sweeps" / "exact.yaml").write_text(
        SWEEP.replace("beaker:\n", "beaker:\n  group: false\n"), encoding="utf-8"
    )
    assert main(["-C", str(root), "submit", "--backend", "beaker"]) == 0
    assert fake.groups() == []
    write_manifest(root, SWEEP, "exact.yaml")
    return [e.id for e in fake.experiments()]


def members(fake: FakeBeaker) -> dict[str, set[str]]:
    return {g.name: set(g.experiment_ids) for g in fake.groups()}


def test_group_name_is_the_sweep_and_its_revision_and_a_valid_beaker_name(repo: Path) -> None:
    sweep = sweep_of(repo)
    assert group_name(sweep) == "exact-rev0"
    long = dataclasses.replace(sweep, name="x" * 100, revision=10**30)
    assert len(group_name(long)) == 128 and group_name(long).endswith(f"-rev{10**30}")


def test_submit_makes_one_group_holding_every_experiment_and_records_its_url(
    repo: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["-C", str(repo), "expand", "--plan"]) == 0
    assert "Beaker group: exact-rev0 (made by the first submit)" in capsys.readouterr().out
    summary = repo / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["-C", str(repo), "submit", "--backend", "beaker"]) == 0
    ids = {e.id for e in fake_beaker.experiments()}
    assert len(ids) == POINTS
    assert members(fake_beaker) == {"exact-rev0": ids}
    (group,) = fake_beaker.groups()
    url = f"{fake_beaker.agent_address}/gr/{group.id}"
    assert f"group exact-rev0 {url} ({POINTS} experiment(s), {POINTS} added)" in (
        capsys.readouterr().out
    )
    header = (repo / "sweeps" / "ledger" / "exact.jsonl").read_text().splitlines()[0]
    assert json.loads(header)["group"] == url
    assert f"- `exact`: group [exact-rev0]({url}), {POINTS} experiment(s)" in summary.read_text()
    assert main(["-C", str(repo), "expand", "--plan", "--format", "markdown"]) == 0
    assert f"Beaker group: [exact-rev0]({url})" in capsys.readouterr().out
    assert main(["-C", str(repo), "expand", "--plan"]) == 0
    assert f"Beaker group: exact-rev0 {url}" in capsys.readouterr().out
    fake_beaker.reset_calls()
    assert main(["-C", str(repo), "submit", "--backend", "beaker"]) == 0  # nothing to do
    assert fake_beaker.calls.get("CreateGroup", 0) == fake_beaker.calls.get("UpdateGroup", 0) == 0
    assert len(fake_beaker.groups()) == 1


def test_a_lost_create_group_reply_makes_one_group(repo: Path, fake_beaker: FakeBeaker) -> None:
    ids = create_experiments(fake_beaker, repo)
    fake_beaker.lose_reply("CreateGroup")  # commits, then UNAVAILABLE
    fake_beaker.reset_calls()
    opened = backend()
    group = opened.ensure_group(sweep_of(repo), ids)
    opened.close()
    assert members(fake_beaker) == {"exact-rev0": set(ids)}
    assert fake_beaker.calls["CreateGroup"] == 1  # the retry looked it up and found it
    assert fake_beaker.calls["ListGroups"] == 2
    assert (group.members, group.created) == (POINTS, False)


def test_already_exists_means_look_it_up_again(repo: Path, fake_beaker: FakeBeaker) -> None:
    ids = create_experiments(fake_beaker, repo)
    fake_beaker.fail_rpc("CreateGroup", grpc.StatusCode.ALREADY_EXISTS)
    fake_beaker.reset_calls()
    opened = backend()
    opened.ensure_group(sweep_of(repo), ids)
    opened.close()
    assert members(fake_beaker) == {"exact-rev0": set(ids)}
    assert fake_beaker.calls["ListGroups"] == 2  # looked up before the second create
    assert fake_beaker.calls["CreateGroup"] == 2


@pytest.mark.slow
def test_two_runners_at_once_make_one_group(repo: Path, fake_beaker: FakeBeaker) -> None:
    ids = create_experiments(fake_beaker, repo)
    sweep = sweep_of(repo)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def runner(mine: list[str]) -> None:
        opened = backend()
        try:
            start.wait()
            opened.ensure_group(sweep, mine)
        except BaseException as exc:
            errors.append(exc)
        finally:
            opened.close()

    threads = [threading.Thread(target=runner, args=(ids[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert members(fake_beaker) == {"exact-rev0": set(ids)}


def test_membership_adds_only_the_missing_in_one_batch_and_a_lost_reply_is_harmless(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    ids = create_experiments(fake_beaker, repo)
    opened = backend()
    sweep = sweep_of(repo)
    opened.ensure_group(sweep, ids[:2])
    fake_beaker.lose_reply("UpdateGroup")  # commits the batch, then UNAVAILABLE
    fake_beaker.reset_calls()
    group = opened.ensure_group(sweep, ids)
    opened.close()
    assert members(fake_beaker) == {"exact-rev0": set(ids)}
    assert fake_beaker.calls["UpdateGroup"] == 2  # one batch, sent again after the lost reply
    assert fake_beaker.calls.get("CreateGroup", 0) == 0
    assert (group.members, group.added) == (POINTS, POINTS - 2)


def test_many_experiments_are_added_in_batches_not_one_call_each(
    repo: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = create_experiments(fake_beaker, repo)
    monkeypatch.setattr("runner.backends.beaker.groups.BATCH", 2)
    assert BATCH == 500  # the real size; 2 here so six experiments take several batches
    fake_beaker.reset_calls()
    opened = backend()
    opened.ensure_group(sweep_of(repo), ids)
    opened.close()
    assert members(fake_beaker) == {"exact-rev0": set(ids)}
    assert (fake_beaker.calls["CreateGroup"], fake_beaker.calls["UpdateGroup"]) == (1, 2)


def test_a_group_failure_never_fails_the_submit_and_the_next_submit_repairs_it(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.fail_rpc("CreateGroup", grpc.StatusCode.PERMISSION_DENIED)
    assert main(["-C", str(repo), "submit", "--backend", "beaker"]) == 0
    err = capsys.readouterr().err
    assert "group of exact not updated" in err and "the next submit adds them" in err
    assert len(fake_beaker.experiments()) == POINTS and fake_beaker.groups() == []
    assert main(["-C", str(repo), "submit", "--backend", "beaker"]) == 0  # nothing to create
    assert members(fake_beaker) == {"exact-rev0": {e.id for e in fake_beaker.experiments()}}
    assert len(fake_beaker.experiments()) == POINTS


def test_a_group_of_that_name_made_by_hand_is_left_alone(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    ids = create_experiments(fake_beaker, repo)
    opened = backend()
    with new_client() as by_hand:  # someone else's client: the backend's is its gateway's alone
        workspace = by_hand.workspace.get("ai2/sweeps-test")
        by_hand.group.create("exact-rev0", workspace=workspace, description="by hand")
    with pytest.raises(Rejected, match="was not made by beaker-sweep-runner"):
        opened.ensure_group(sweep_of(repo), ids)
    opened.close()
    assert members(fake_beaker) == {"exact-rev0": set()}


def test_group_false_opts_out(repo: Path, fake_beaker: FakeBeaker) -> None:
    create_experiments(fake_beaker, repo)  # submits with `group: false`
    assert fake_beaker.calls.get("ListGroups", 0) == 0
    assert "group" not in json.loads(
        (repo / "sweeps" / "ledger" / "exact.jsonl").read_text().splitlines()[0]
    )


def test_ledger_keeps_the_group_url_through_later_writes(tmp_path: Path) -> None:
    path = ledger.ledger_path(tmp_path, "demo")
    entry = ledger.Entry("k1", "demo-1", "u", "id1", "h", "2026-01-01T00:00:00Z", "c")
    ledger.record(path, "demo", [entry])
    assert headers.set_group(path, "demo", "https://beaker.example/gr/01")
    assert not headers.set_group(path, "demo", "https://beaker.example/gr/01")
    later = ledger.Entry("k2", "demo-2", "u", "id2", "h", "2026-01-01T00:00:01Z", "c")
    assert ledger.record(path, "demo", [later]).group == "https://beaker.example/gr/01"
    assert ledger.read(path, "demo").group == "https://beaker.example/gr/01"
    assert not headers.set_group(ledger.ledger_path(tmp_path, "none"), "none", "u")


def test_the_manifest_reference_beaker_block_with_its_group_line_is_valid(
    tmp_path: Path,
) -> None:
    text = (PROJECT / "docs" / "manifest.md").read_text(encoding="utf-8")
    reference = text.split("# Manifest reference", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    beaker = reference[reference.index("beaker:") :].split("\n\n", 1)[0] + "\n"
    assert "  group: true" in beaker
    base = MINIMAL.format(name="ref")
    start = base.index("beaker:")
    manifest = base[:start] + beaker + base[base.index("tasks:") :]
    path = write_manifest(tmp_path, manifest, "ref.yaml")
    assert load_manifest(path, "sweeps/ref.yaml").placement.group is True
    off = write_manifest(tmp_path, manifest.replace("group: true", "group: false"), "ref.yaml")
    assert load_manifest(off, "sweeps/ref.yaml").placement.group is False
