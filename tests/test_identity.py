"""A point stays the sweep's point while its job rewrites the experiment's description.

OLMo-core's BeakerCallback (and gantry) replace an experiment's whole description with the run's
progress, `[3%, 30/1,000] <W&B URL>`, every few steps. The runner tells its experiments by what
the job cannot change (`runner.backends.beaker.identity`): the ledger's id, else SWEEP_POINT_KEY
in the spec. Driven end to end through the CLI on the fake Beaker, the jobs writing over
UpdateWorkload with beaker-py as they do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from beaker import Beaker, BeakerExperimentSpec
from beaker import beaker_pb2 as pb2

from runner import ledger
from runner.backends.beaker.identity import job_text, needles
from runner.cli import main
from runner.plan import catalog
from tests.fake_beaker.fixtures import DEFAULT_WORKSPACE
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import POINTS, SWEEP, assert_exactly_once, write_manifest

WANDB = "https://wandb.ai/ai2/olmo-sweeps/runs/3x4mpl3"
PROGRESS = f"[3%, 30/1,000] {WANDB}"
OLMO = SWEEP.replace("name: exact", "name: olmo\nmax_running: 4").replace(
    "seed: [1, 2]", "seed: [1, 2, 3, 4]"
)  # 12 points under a cap of 4
LIVE = ("queued", "running")
LIVE_STATUSES = (pb2.WorkloadStatus.STATUS_QUEUED, pb2.WorkloadStatus.STATUS_RUNNING)


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _names(root: Path, sweep: str) -> list[str]:
    [plan] = [p for p in catalog.load(root, []).plans() if p.sweep.name == sweep]
    return [row.name for row in plan.rows if row.status != "-"]


def _entries(root: Path, sweep: str) -> dict[str, ledger.Entry]:
    read = ledger.read(ledger.ledger_path(root, sweep), sweep)
    return {e.experiment: e for e in read.entries.values()}


def _jobs_write(text: str = PROGRESS) -> None:
    """Every live experiment's job replaces its description, as BeakerCallback does."""
    with Beaker.from_env(check_for_upgrades=False) as client:
        workspace = client.workspace.get(DEFAULT_WORKSPACE)
        for workload in client.workload.list(workspace=workspace):
            if workload.status in LIVE_STATUSES:
                client.workload.update(workload, description=text)


def _live(fake: FakeBeaker) -> list[str]:
    return sorted(e.name for e in fake.experiments() if e.status in LIVE)


def test_a_capped_sweep_whose_jobs_rewrite_their_descriptions_holds_its_cap_end_to_end(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's acceptance: 12 points, max_running 4, every live description rewritten."""
    write_manifest(tmp_path, OLMO, "olmo.yaml")
    order = _names(tmp_path, "olmo")
    assert len(order) == 12
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert _live(fake_beaker) == sorted(order[:4])
    for name in order[:4]:
        fake_beaker.set_job_status(name, "running")
    _jobs_write()
    assert all(fake_beaker.experiment(n).description == PROGRESS for n in order[:4])

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # 4 run: nothing created
    assert len(fake_beaker.experiments()) == 4

    fake_beaker.set_job_status(order[0], "succeeded")
    fake_beaker.set_job_status(order[1], "succeeded")
    fake_beaker.set_job_status(order[2], "failed", exit_code=3)
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # 1 runs: 3 more
    assert sorted(fake_beaker.count_by_name()) == sorted(order[:7])
    assert _live(fake_beaker) == sorted(order[3:7])
    for name in order[4:7]:
        fake_beaker.set_job_status(name, "running")
    _jobs_write()

    capsys.readouterr()
    assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
    points = {
        p["experiment"]: p for p in json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    }
    running = sorted(n for n, p in points.items() if p["state"] == "running")
    assert running == sorted(order[3:7])
    for name in running:
        assert points[name]["description"] == PROGRESS
        assert (points[name]["progress"], points[name]["link"]) == ("[3%, 30/1,000]", WANDB)
    assert points[order[7]]["description"] == "" and points[order[7]]["progress"] is None
    assert _run(tmp_path, "status", "--backend", "beaker") == 0
    lines = capsys.readouterr().out.splitlines()
    assert "job says" in next(line for line in lines if "experiment" in line)
    for name in running:
        assert PROGRESS in next(line for line in lines if name in line)

    fake_beaker.set_job_status(order[4], "succeeded")  # a slot for the restart
    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(order[2]) == 1  # in place: no new experiment for it
    assert _entries(tmp_path, "olmo")[order[2]].restarts == 1
    assert len(fake_beaker.experiments()) == 7 and len(_live(fake_beaker)) == 4

    _jobs_write()
    live = _live(fake_beaker)
    assert _run(tmp_path, "cancel", "sweeps/olmo.yaml", "--backend", "beaker", "--yes") == 0
    assert _live(fake_beaker) == [] and all(fake_beaker.cancels(n) == 1 for n in live)
    assert set(fake_beaker.count_by_name().values()) == {1}  # no duplicates
    [group] = fake_beaker.groups()  # the sweep's group holds each point's one experiment
    assert sorted(group.experiment_ids) == sorted(e.id for e in fake_beaker.experiments())
    entries = _entries(tmp_path, "olmo")
    assert sorted(n for n, e in entries.items() if e.canceled_at) == live


def test_calls_of_status_and_a_top_up_do_not_grow_with_points_or_rewrites(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """A listing without the task specs (as a service may send) and every description
    rewritten: the recorded points are the ledger's ids, so no spec is read back."""
    write_manifest(tmp_path, OLMO, "olmo.yaml")
    order = _names(tmp_path, "olmo")
    fake_beaker.listed_specs = False

    def measure() -> tuple[dict[str, int], dict[str, int]]:
        for name in _live(fake_beaker):
            fake_beaker.set_job_status(name, "running")
        _jobs_write()
        fake_beaker.reset_calls()
        assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
        status = dict(fake_beaker.calls)
        fake_beaker.reset_calls()
        assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # full: creates nothing
        submit = dict(fake_beaker.calls)
        assert len(_live(fake_beaker)) == 4
        return status, submit

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    four = measure()
    for name in order[:4]:
        fake_beaker.set_job_status(name, "succeeded")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    eight = measure()
    assert len(_entries(tmp_path, "olmo")) == 8
    capsys.readouterr()
    print(f"status: {sum(four[0].values())} calls, full top-up: {sum(four[1].values())} calls")
    paged = ("ListWorkloads", "ListGroupTaskMetrics")  # the fake's pages hold 5
    assert [{k: n for k, n in c.items() if k not in paged} for c in four] == [
        {k: n for k, n in c.items() if k not in paged} for c in eight
    ]
    assert [c["ListWorkloads"] for c in (*four, *eight)] == [1, 1, 2, 2]  # 4, then 8 points
    assert all("GetExperimentYamlSpec" not in calls for calls in (*four, *eight))


@pytest.mark.parametrize("after_409", [False, True], ids=["bulk-listing", "after-409"])
@pytest.mark.parametrize("listed_specs", [True, False], ids=["specs-listed", "specs-read"])
def test_a_point_recorded_by_nobody_is_adopted_by_the_key_in_its_spec(
    repo: Path, fake_beaker: FakeBeaker, listed_specs: bool, after_409: bool
) -> None:
    """A crash before the ledger write (or a lost create reply): the experiments exist, their
    descriptions rewritten. The next submit adopts each, from its first listing or, when that
    listing missed them, after the create's 409, proved by its spec's key: one spec read per
    such name when the listing leaves the specs out, none when it carries them."""
    assert _run(repo, "submit", "--backend", "beaker") == 0
    _jobs_write()
    ledger.ledger_path(repo, "exact").unlink()
    fake_beaker.listed_specs = listed_specs
    if after_409:
        fake_beaker.empty_listing(times=1)
    fake_beaker.reset_calls()

    assert _run(repo, "submit", "--backend", "beaker") == 0

    assert_exactly_once(repo, fake_beaker)
    assert fake_beaker.calls["http:create"] == (POINTS if after_409 else 0)  # each refused
    assert fake_beaker.calls.get("GetExperimentYamlSpec", 0) == (0 if listed_specs else POINTS)


def _stranger(name: str, key: str, description: str = PROGRESS) -> str:
    """Someone else's experiment under a point's name: its spec carries another key."""
    with Beaker.from_env(check_for_upgrades=False) as client:
        spec = BeakerExperimentSpec.new(docker_image="python:3.11", command=["true"])
        spec.tasks[0] = spec.tasks[0].with_env_var("SWEEP_POINT_KEY", key)
        spec.description = description
        workspace = client.workspace.get(DEFAULT_WORKSPACE)
        return client.experiment.create(name=name, spec=spec, workspace=workspace).experiment.id


@pytest.mark.parametrize("claims", [False, True], ids=["its-own-text", "claims-the-key"])
@pytest.mark.parametrize("listed_specs", [True, False], ids=["specs-listed", "specs-read"])
def test_a_strangers_experiment_under_a_points_name_is_told_apart_by_its_spec(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    listed_specs: bool,
    claims: bool,
) -> None:
    """Only its spec tells it is not the point's, whatever its description says: its job's
    text, or the runner's marker with the point's key (anyone may write it there; that one was
    adopted, exit 0, when the listing left the specs out). It is refused (exit 4, the name
    taken) after one spec read where the listing leaves the specs out, holds no slot of the
    cap, is recorded nowhere, and cancel leaves it alone."""
    write_manifest(tmp_path, OLMO, "olmo.yaml")
    [plan] = catalog.load(tmp_path, []).plans()
    order, first = [row.name for row in plan.rows], plan.rows[0]
    fake_beaker.listed_specs = listed_specs
    description = f"someone's run [sweep-key {first.key}]" if claims else PROGRESS
    stranger = _stranger(first.name, "f" * 64, description)
    fake_beaker.reset_calls()

    assert _run(tmp_path, "submit", "--backend", "beaker") == 4
    assert fake_beaker.calls.get("GetExperimentYamlSpec", 0) == (0 if listed_specs else 1)
    err = capsys.readouterr().err
    taken = f"rejected {first.name}: experiment {first.name} ("
    assert taken in err and f"already exists but records key {'f' * 64}, not this point's" in err
    assert "(4 created, 0 adopted)" in err
    assert _live(fake_beaker) == sorted(order[:5])  # the stranger's and the sweep's 4
    recorded = _entries(tmp_path, "olmo")
    assert first.name not in recorded and stranger not in {e.id for e in recorded.values()}
    assert _run(tmp_path, "cancel", "sweeps/olmo.yaml", "--backend", "beaker", "--yes") == 0
    assert fake_beaker.cancels(stranger) == 0 and _live(fake_beaker) == [first.name]


def test_a_point_renamed_in_the_ui_is_still_the_point_by_its_id(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Renamed in Beaker's UI (its id kept) and its description rewritten: the cap still counts
    it, status shows it running, logs reads it and cancel cancels it; one look-up by id for it
    per listing, no more."""
    write_manifest(tmp_path, OLMO, "olmo.yaml")
    order = _names(tmp_path, "olmo")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    _jobs_write()
    with Beaker.from_env(check_for_upgrades=False) as client:
        client.workload.update(fake_beaker.experiment(order[0]).id, name="kept-by-hand")  # type: ignore[arg-type]
    fake_beaker.set_job_status("kept-by-hand", "running")
    fake_beaker.reset_calls()

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert len(fake_beaker.experiments()) == 4  # the cap counted the renamed one
    assert fake_beaker.calls["GetWorkload"] == 1
    capsys.readouterr()
    assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["state"] for p in points if p["experiment"] == order[0]] == ["running"]
    fake_beaker.set_logs("kept-by-hand", ["step 30\n"])
    assert _run(tmp_path, "logs", order[0], "--backend", "beaker") == 0
    assert capsys.readouterr().out == "step 30\n"
    assert _run(tmp_path, "cancel", "sweeps/olmo.yaml", "--backend", "beaker", "--yes") == 0
    assert fake_beaker.cancels("kept-by-hand") == 1 and _live(fake_beaker) == []


def test_restart_points_cancel_points_and_orphans_and_logs_with_rewritten_descriptions(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.listed_specs = False
    assert _run(repo, "submit", "--backend", "beaker") == 0
    names = _names(repo, "exact")
    for name in names:
        fake_beaker.set_job_status(name, "running")
    _jobs_write()
    fake_beaker.set_logs(names[0], ["step 30\n"])
    capsys.readouterr()
    assert _run(repo, "logs", names[0], "--backend", "beaker") == 0
    assert capsys.readouterr().out == "step 30\n"

    key = _entries(repo, "exact")[names[0]].key
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--points", key[:10], "--yes") == 0
    assert fake_beaker.cancels(names[0]) == 1 and _live(fake_beaker) == sorted(names[1:])
    assert _run(repo, "submit", "--backend", "beaker", "--restart", "--points", names[0]) == 0
    assert fake_beaker.restarts(names[0]) == 1 and len(fake_beaker.experiments()) == POINTS

    write_manifest(repo, SWEEP.replace("lr: [0.1, 0.01, 0.001]", "lr: [0.1, 0.01]"), "exact.yaml")
    orphans = sorted(set(names) - set(_names(repo, "exact")))
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--orphans", "--yes") == 0
    assert sorted(n for n in names if fake_beaker.cancels(n)) == sorted([names[0], *orphans])
    assert fake_beaker.calls.get("GetExperimentYamlSpec", 0) == 0  # all recorded


def test_two_accounts_keep_the_older_copy_though_its_job_rewrote_the_description(
    tmp_path: Path, repo: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names unique per author: bob's run creates every point again, then finds alice's older
    copies by their specs' keys (her jobs rewrote the descriptions), keeps hers, cancels his."""
    fake_beaker.name_scope = "author"
    fake_beaker.listed_specs = False
    default = fake_beaker.config_path.read_text()

    def login(user: str) -> None:
        token = fake_beaker.add_user(user)
        config = tmp_path / f"{user}.yml"
        config.write_text(default.replace(fake_beaker.token, token))
        monkeypatch.setenv("BEAKER_CONFIG", str(config))
        monkeypatch.setenv("BEAKER_TOKEN", token)

    login("alice")
    assert _run(repo, "submit", "--backend", "beaker") == 0
    _jobs_write()
    other = tmp_path / "bob"
    write_manifest(other, SWEEP, "exact.yaml")
    login("bob")
    fake_beaker.empty_listing(times=1)  # bob starts before he can see alice's experiments

    assert _run(other, "submit", "--backend", "beaker") == 0

    theirs = {e.name: e.id for e in fake_beaker.experiments() if e.author == "alice"}
    mine = [e for e in fake_beaker.experiments() if e.author == "bob"]
    assert len(mine) == POINTS and {e.status for e in mine} == {"canceled"}
    assert {n: e.id for n, e in _entries(other, "exact").items()} == theirs


def test_the_job_text_is_what_follows_the_runners_marker_or_all_of_a_rewrite() -> None:
    key = "a" * 64
    assert job_text(f"sweep exact point lr=0.1 (sweeps/exact.yaml) [sweep-key {key}]") == ""
    assert job_text(f"sweep exact [sweep-key {key}] [3%, 30/1,000]") == "[3%, 30/1,000]"
    assert job_text(PROGRESS) == PROGRESS


def test_listings_go_by_name_with_the_common_prefix_of_templated_names() -> None:
    assert needles("exact", ["exact-0123", "exact-4567"]) == ["exact"]
    assert needles("exact", ["run-lr0.1-0123", "run-lr0.01-4567"]) == ["run-lr0."]
    assert needles("exact", ["exact-0123", "run-lr0.1-4567"]) == ["exact", "run-lr0.1-4567"]
    assert needles("exact", ["0.1-0123", "0.01-4567"]) == [None]  # the whole workspace


def test_a_spec_read_beaker_refuses_once_still_adopts_each_point_exactly_once(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first listing's spec read is refused: the run checks point by point instead (a 409,
    a look-up by name, its spec read again) and adopts each point once, creating nothing."""
    import grpc

    assert _run(repo, "submit", "--backend", "beaker") == 0
    _jobs_write()
    ledger.ledger_path(repo, "exact").unlink()
    fake_beaker.listed_specs = False
    fake_beaker.fail_rpc("GetExperimentYamlSpec", grpc.StatusCode.PERMISSION_DENIED)
    capsys.readouterr()

    assert _run(repo, "submit", "--backend", "beaker") == 0

    assert "checking point by point instead" in capsys.readouterr().err
    assert_exactly_once(repo, fake_beaker)
