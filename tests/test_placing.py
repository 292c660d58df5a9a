"""Clusters by what they are (`beaker.gpu_type`, `cluster_tags`, globs): `lock` resolves them on
the wire fake with gantry's rules into the lock, every other command reads the lock only."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from runner.backends.local import LocalBackend
from runner.backends.placing import Cluster, placing
from runner.cli import main
from runner.core.errors import Exit, ManifestError, SubmitError
from runner.locking.clusters import resolve
from runner.manifest import Locks, load
from runner.plan import budget, catalog, policy
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import H100_ON_WEKA, add_six_clusters, eight_gpus, write_manifest

SELECTED = eight_gpus(
    "h100",
    "  clusters: ['ai2/*']\n  gpu_type: [h100]\n  cluster_tags: [storage:weka]\n",
    "[0.1, 0.01]",
)


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture
def lab(fake_beaker: FakeBeaker, tmp_path: Path) -> Path:
    add_six_clusters(fake_beaker)
    write_manifest(tmp_path, SELECTED, "h100.yaml")
    return tmp_path


def test_a_selector_resolves_to_the_h100_clusters_on_weka_that_take_tasks(
    lab: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.reset_calls()
    assert _run(lab, "lock") == Exit.OK
    said = capsys.readouterr().err
    assert "wrote the lock's clusters: ai2/ceres (NVIDIA H100), ai2/jupiter (NVIDIA H100)" in said
    lock = json.loads((lab / "sweeps" / "h100.lock.json").read_text())
    resolved = lock["clusters"]["resolved"]
    assert [c["name"] for c in resolved] == list(H100_ON_WEKA)  # not augusta (timeout 0)
    assert {c["gpu_type"] for c in resolved} == {"NVIDIA H100"}
    assert lock["clusters"]["selector"]["gpu_type"] == ["h100"] and "points" not in lock
    assert fake_beaker.calls["ListClusters"] == 2  # one listing: six clusters, pages of five
    (sweep,) = catalog.load(lab, []).sweeps
    assert sweep.placement.clusters == H100_ON_WEKA
    assert _run(lab, "lock") == Exit.OK  # nothing changed: nothing written
    assert "clusters up to date" in capsys.readouterr().err


def test_the_spec_is_byte_identical_to_the_manifest_with_the_list_written_out(
    lab: Path, tmp_path: Path
) -> None:
    assert _run(lab, "lock") == Exit.OK
    listed = SELECTED.replace(
        "  clusters: ['ai2/*']\n  gpu_type: [h100]\n  cluster_tags: [storage:weka]\n",
        f"  clusters: [{', '.join(H100_ON_WEKA)}]\n",
    )
    other = tmp_path / "listed"
    write_manifest(other, listed, "h100.yaml")
    (selected,) = catalog.load(lab, []).unrecorded_plans()
    (written,) = catalog.load(other, []).unrecorded_plans()
    assert selected.sweep.placement.selector is not None
    assert written.sweep.placement.selector is None
    specs = [
        [(r.key, r.rendered.spec_json) for r in p.rows if r.rendered] for p in (selected, written)
    ]
    assert specs[0] == specs[1] and len(specs[0]) == 2
    assert '"cluster":["ai2/ceres","ai2/jupiter"]' in specs[0][0][1]


def test_expand_plan_reads_the_lock_and_never_asks_beaker(
    lab: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(lab, "lock") == Exit.OK
    fake_beaker.reset_calls()
    with fake_beaker.outage():  # unreachable: a call would fail
        assert _run(lab, "expand", "--plan", "--format", "markdown") == Exit.OK
    out = capsys.readouterr().out
    assert "Clusters: ai2/ceres (NVIDIA H100), ai2/jupiter (NVIDIA H100)" in out
    assert sum(fake_beaker.calls.values()) == 0


def test_a_changed_selector_makes_the_lock_out_of_date_in_one_line(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(lab, "lock") == Exit.OK
    path = write_manifest(
        lab, SELECTED.replace("gpu_type: [h100]", "gpu_type: [b200]"), "h100.yaml"
    )
    capsys.readouterr()
    assert _run(lab, "validate") == Exit.USER_ERROR
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("sweeps/h100.yaml:7:3: beaker.gpu_type: the lock's clusters are out of")
    assert "run python -m runner lock sweeps/h100.yaml (with a Beaker token)" in line
    assert path.exists()


def test_a_renamed_cluster_fails_lock_then_validate_in_one_line_each(
    lab: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    named = SELECTED.replace("clusters: ['ai2/*']", "clusters: [ai2/ceres, ai2/jupiter]")
    write_manifest(lab, named, "h100.yaml")
    assert _run(lab, "lock") == Exit.OK
    fake_beaker.rename_cluster("ai2/ceres", "ai2/ceres-2")
    capsys.readouterr()
    assert _run(lab, "lock") == Exit.USER_ERROR  # the old name matches nothing: nothing written
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("sweeps/h100.yaml:6:14: beaker.clusters[0]: 'ai2/ceres' matches no")
    write_manifest(lab, named.replace("ai2/ceres,", "ai2/ceres-2,"), "h100.yaml")
    assert _run(lab, "validate") == Exit.USER_ERROR
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("sweeps/h100.yaml:7:3: beaker.gpu_type: the lock's clusters are out")
    assert _run(lab, "lock") == Exit.OK and _run(lab, "validate") == Exit.OK
    (sweep,) = catalog.load(lab, []).sweeps
    assert sweep.placement.clusters == ("ai2/ceres-2", "ai2/jupiter")


def test_an_alias_matches_and_the_lock_names_the_cluster(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    aliased = SELECTED.replace("clusters: ['ai2/*']", "clusters: ['ai2/jupiter-cirrascale-*']")
    write_manifest(lab, aliased, "h100.yaml")
    assert _run(lab, "lock") == Exit.OK
    (sweep,) = catalog.load(lab, []).sweeps
    assert sweep.placement.clusters == ("ai2/jupiter",)


def test_a_pattern_that_matches_only_a_cluster_without_tasks_is_an_error(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(lab, SELECTED.replace("'ai2/*'", "'ai2/aug*'"), "h100.yaml")
    assert _run(lab, "lock") == Exit.USER_ERROR
    (line,) = _lines(capsys.readouterr().err)
    assert "beaker.clusters[0]: 'ai2/aug*' matches no cluster that takes tasks" in line
    assert not (lab / "sweeps" / "h100.lock.json").exists()


def test_a_selector_nothing_satisfies_says_what_was_asked(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(lab, SELECTED.replace("gpu_type: [h100]", "gpu_type: [l40s]"), "h100.yaml")
    assert _run(lab, "lock") == Exit.USER_ERROR
    (line,) = _lines(capsys.readouterr().err)
    assert line == (
        "sweeps/h100.yaml:7:13: beaker.gpu_type: no cluster of ai2/* that takes tasks is tagged"
        " storage:weka and with l40s GPUs"
    )


def test_a_refused_listing_is_one_line_exit_4(
    lab: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.fail_rpc("ListClusters", grpc.StatusCode.PERMISSION_DENIED)
    assert _run(lab, "lock") == Exit.REJECTED
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("error: list clusters of ai2:") and "permission denied" in line
    assert not (lab / "sweeps" / "h100.lock.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["unavailable", "lost reply"])
def test_a_listing_retried_after_a_fault_writes_the_lock_once(
    lab: Path, fake_beaker: FakeBeaker, fault: str
) -> None:
    """beaker-py lists again (2 s later) after UNAVAILABLE, a lost reply too: nothing is
    written before a listing answered whole, and the lock is written once, the same."""
    if fault == "unavailable":
        fake_beaker.unavailable("ListClusters")
    else:
        fake_beaker.lose_reply("ListClusters")
    assert _run(lab, "lock") == Exit.OK
    assert fake_beaker.calls["ListClusters"] == 3  # two pages, the first asked twice
    lock = json.loads((lab / "sweeps" / "h100.lock.json").read_text())
    assert [c["name"] for c in lock["clusters"]["resolved"]] == list(H100_ON_WEKA)


def test_without_credentials_lock_says_a_selector_needs_beaker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, SELECTED, "h100.yaml")
    assert _run(tmp_path, "lock") == Exit.USER_ERROR
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("error: sweeps/h100.yaml: resolving a cluster selector needs Beaker")
    with pytest.raises(SubmitError, match="needs Beaker credentials"):
        placing(LocalBackend(tmp_path, lambda text: None), "resolving")


@pytest.mark.slow
def test_a_sampled_sweep_keeps_its_points_and_its_clusters_in_one_lock(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sampled = SELECTED.replace(
        "  grid:\n    lr: [0.1, 0.01]\n",
        "  sample:\n    method: random\n    n: 3\n    seed: 1\n"
        "    space:\n      lr: {log_uniform: [0.0001, 0.1]}\n",
    )
    write_manifest(lab, sampled, "h100.yaml")
    assert _run(lab, "lock") == Exit.OK
    lock = json.loads((lab / "sweeps" / "h100.lock.json").read_text())
    assert len(lock["points"]) == 3 and len(lock["clusters"]["resolved"]) == 2
    assert _run(lab, "validate") == Exit.OK
    before = (lab / "sweeps" / "h100.lock.json").read_text()
    assert _run(lab, "lock") == Exit.OK
    assert (lab / "sweeps" / "h100.lock.json").read_text() == before  # both kept byte for byte


def test_a_lock_without_a_clusters_section_reads_as_before(project_copy: Path) -> None:
    """Locks written before selectors existed (the branin search's) load, and their digest
    still holds: the digest covers every section, and they have none."""
    assert _run(project_copy, "validate", "sweeps/branin.yaml") == Exit.OK


def test_a_hand_edited_clusters_section_is_out_of_date(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(lab, "lock") == Exit.OK
    path = lab / "sweeps" / "h100.lock.json"
    path.write_text(path.read_text().replace("ai2/ceres", "ai2/elsewhere"))
    capsys.readouterr()
    assert _run(lab, "validate") == Exit.USER_ERROR
    assert "the lock's clusters are out of date" in capsys.readouterr().err


def test_dropping_the_selector_drops_the_lock_it_needed(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(lab, "lock") == Exit.OK
    named = SELECTED.replace(
        "  clusters: ['ai2/*']\n  gpu_type: [h100]\n  cluster_tags: [storage:weka]\n",
        "  clusters: [ai2/jupiter]\n",
    )
    write_manifest(lab, named, "h100.yaml")
    capsys.readouterr()
    assert _run(lab, "validate") == Exit.USER_ERROR
    assert "no selector asks for them" in capsys.readouterr().err
    assert _run(lab, "lock") == Exit.OK
    assert not (lab / "sweeps" / "h100.lock.json").exists()
    assert _run(lab, "validate") == Exit.OK


def test_hostnames_beside_a_selector_are_refused_as_gantry_does(tmp_path: Path) -> None:
    text = SELECTED.replace("  gpu_type: [h100]\n", "  gpu_type: [h100]\n  hostnames: [node-1]\n")
    path = write_manifest(tmp_path, text, "h100.yaml")
    with pytest.raises(ManifestError) as caught:
        load(path, "sweeps/h100.yaml")
    assert any(
        "hostnames cannot be combined with gpu_type" in str(p) for p in caught.value.problems
    )


def _cluster(name: str, gpu: str = "NVIDIA H100", **fields: object) -> Cluster:
    return Cluster("ai2", name, gpu_type=gpu, **fields)  # type: ignore[arg-type]


def test_gpu_types_match_a_part_of_the_name_in_any_case_and_a_cluster_without_gpus_never(
    tmp_path: Path,
) -> None:
    text = SELECTED.replace("gpu_type: [h100]", "gpu_type: [A100, b200]").replace(
        "  cluster_tags: [storage:weka]\n", ""
    )
    path = write_manifest(tmp_path, text, "h100.yaml")
    sweep = load(path, "sweeps/h100.yaml", Locks.MAY_BE_STALE).sweep
    found = [
        _cluster("a", "NVIDIA A100 80GB"),
        _cluster("b", "NVIDIA A100 40GB"),
        _cluster("c", "NVIDIA B200"),
        _cluster("d", ""),
        _cluster("e"),
    ]
    assert [c.name for c in resolve(sweep, found)] == ["ai2/a", "ai2/b", "ai2/c"]


def test_a_locked_cluster_that_needs_approval_is_named_at_the_selector(lab: Path) -> None:
    assert _run(lab, "lock") == Exit.OK
    (plan,) = catalog.load(lab, []).plans()
    rules = policy.parse("version: 1\napproval_clusters: [ai2/jupiter]\n")
    (breach,) = budget.breaches([plan], rules)
    assert str(breach.problem).startswith(
        "sweeps/h100.yaml:6:13: beaker.clusters: cluster ai2/jupiter"
    )


def test_a_drafts_selector_is_ignored_on_this_machine_with_one_note_and_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A draft runs here only, where clusters mean nothing: a lock without clusters (none at
    all here) is a note, not a problem, and the sweep runs; without a token `lock` says so in
    one line and exits 0."""
    draft = (
        SELECTED.replace("version: 1\n", "version: 1\ndraft: true\n")
        .replace("  budget: ai2/sweeps-budget\n", "")
        .replace("command: [python, train.py]", "command: [python, -c, 'print(1)']")
    )
    write_manifest(tmp_path, draft, "h100.yaml")
    note = (
        "sweeps/h100.yaml:7:3: beaker.gpu_type: warning: the lock h100.lock.json is missing: this"
        " draft's cluster selector is ignored on this machine (the local backend uses no"
        " cluster); before it goes to Beaker, run python -m runner lock sweeps/h100.yaml with a"
        " Beaker token"
    )
    assert _run(tmp_path, "validate") == Exit.OK
    assert [x for x in _lines(capsys.readouterr().err) if "warning" in x] == [note]
    assert _run(tmp_path, "lock") == Exit.OK
    assert _lines(capsys.readouterr().err) == [
        note,
        "sweeps/h100.yaml: cluster selector not resolved (no Beaker token here): a draft runs"
        " on this machine, where clusters are ignored; lock it with a token before it goes to"
        " Beaker",
    ]
    assert not (tmp_path / "sweeps" / "h100.lock.json").exists()
    assert _run(tmp_path, "submit", "--backend", "local") == Exit.OK
    capsys.readouterr()
    assert _run(tmp_path, "status", "--backend", "local", "--format", "json") == Exit.OK
    states = [p["state"] for p in json.loads(capsys.readouterr().out)["sweeps"][0]["points"]]
    assert states == ["succeeded", "succeeded"]
    undrafted = draft.replace("draft: true\n", "").replace("beaker:\n", "beaker:\n  budget: b/x\n")
    write_manifest(tmp_path, undrafted, "h100.yaml")  # going to Beaker: the lock is needed
    assert _run(tmp_path, "validate") == Exit.USER_ERROR
    assert "the lock h100.lock.json is missing: run" in capsys.readouterr().err
