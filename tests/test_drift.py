"""Drift means "what would run changed": canonical spec hashes, old ledgers, field diffs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner import ledger
from runner.cli import main
from runner.core import keys
from runner.core.keys import canonical_spec
from runner.plan import SweepPlan, catalog
from runner.report.plan import MARKDOWN_LIMIT
from tests.conftest import PROJECT
from tests.helpers import minimal

V1 = PROJECT / "tests" / "data" / "ledgers-v1"


def _plan(root: Path) -> SweepPlan:
    (plan,) = catalog.load(root).plans()
    return plan


def _submit_all(root: Path) -> None:
    """Record every point as submitted, as `submit` writes entries (hash version 2, spec kept)."""
    plan = _plan(root)
    entries = [
        ledger.Entry(
            row.key,
            row.name,
            f"https://beaker.org/ex/{i}",
            str(i),
            row.rendered.spec_hash,
            "2026-11-21T10:00:00Z",
            "c" * 40,
            dict(row.params),
            spec=keys.pack_spec(canonical_spec(row.rendered.spec)),
        )
        for i, row in enumerate(plan.rows)
        if row.rendered is not None
    ]
    ledger.record(ledger.ledger_path(root, plan.sweep.name), plan.sweep.name, entries)


def _statuses(root: Path) -> list[str]:
    return [row.status for row in _plan(root).rows]


def test_ledgers_written_by_hash_version_1_do_not_turn_into_drift(tmp_path: Path) -> None:
    shutil.copytree(V1 / "sweeps", tmp_path / "sweeps")
    plans = {p.sweep.name: p for p in catalog.load(tmp_path).plans()}
    assert len(plans) == 5
    for name, plan in plans.items():
        statuses = [(row.status, dict(row.params).get("wd")) for row in plan.rows]
        if name == "legacy-floats":
            # wd 0.0 rendered `--wd=0` then, `--wd=0.0` now: a real change of the command line.
            assert sorted(statuses) == [("=", 0.1), ("=", 0.1), ("~", 0.0), ("~", 0.0)]
            drifted = [r for r in plan.rows if r.status == "~"]
            assert all("hash version 1" in (r.note or "") for r in drifted)
        else:
            assert {s for s, _ in statuses} == {"="}, name


def test_moving_renaming_and_reordering_a_manifest_keeps_every_point_submitted(
    tmp_path: Path,
) -> None:
    path = minimal(tmp_path, extra="    seed: [1, 2]\n", body=None)  # lr × seed; env added below
    text = path.read_text().replace(
        '    arguments: ["--lr={lr}"]\n',
        '    arguments: ["--lr={lr}"]\n    env: {B_VAR: two, A_VAR: one}\n',
    )
    path.write_text(text)
    _submit_all(tmp_path)
    assert _statuses(tmp_path) == ["="] * 4
    moved = tmp_path / "sweeps" / "team" / "renamed.yaml"
    moved.parent.mkdir()
    path.rename(moved)
    reordered = (
        moved.read_text()
        .replace("{B_VAR: two, A_VAR: one}", "{A_VAR: one, B_VAR: two}")
        .replace(
            "    lr: [0.1, 0.01]\n    seed: [1, 2]\n", "    seed: [1, 2]\n    lr: [0.1, 0.01]\n"
        )
    )
    assert reordered != moved.read_text()
    moved.write_text(reordered)
    assert _statuses(tmp_path) == ["="] * 4


def test_a_drifted_point_says_what_changed_in_table_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = minimal(tmp_path)
    _submit_all(tmp_path)
    path.write_text(path.read_text().replace("org/image", "org/image-v2"))
    plan = _plan(tmp_path)
    assert [str(c) for c in plan.rows[0].changes] == [
        '~ tasks[0].image.beaker: "org/image" -> "org/image-v2"'
    ]
    line = '~ tasks[0].image.beaker: "org/image" -> "org/image-v2"'
    for fmt in ("table", "markdown"):
        assert main(["-C", str(tmp_path), "expand", "--plan", "--format", fmt]) == 0
        assert capsys.readouterr().out.count(line) == 2, fmt
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert points[0]["changes"] == [
        {"field": "tasks[0].image.beaker", "before": '"org/image"', "after": '"org/image-v2"'}
    ]


def test_an_added_env_var_shows_by_name(tmp_path: Path) -> None:
    path = minimal(tmp_path)
    _submit_all(tmp_path)
    path.write_text(
        path.read_text().replace(
            '    arguments: ["--lr={lr}"]\n', '    arguments: ["--lr={lr}"]\n    env: {NEW: x}\n'
        )
    )
    assert [str(c) for c in _plan(tmp_path).rows[0].changes] == ['+ tasks[0].envVars.NEW: "x"']


def test_a_markdown_plan_full_of_drift_stays_under_the_comment_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = ", ".join(str(i) for i in range(400))
    path = minimal(tmp_path, extra=f"    seed: [{values}]\n  max_points: 2000\n")
    text = path.read_text()
    path.write_text(text.replace("arguments: [", "arguments: [--a, --b, --c, --d, "))
    _submit_all(tmp_path)
    path.write_text(text.replace("org/image", "org/image-v2"))
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert len(out) < MARKDOWN_LIMIT + 1000
    assert "800 drifted" in out


def test_the_ledger_header_says_which_spec_hash_version_wrote_it(tmp_path: Path) -> None:
    minimal(tmp_path)
    _submit_all(tmp_path)
    lines = ledger.ledger_path(tmp_path, "demo").read_text().splitlines()
    assert json.loads(lines[0])["spec_hash_version"] == 2
    entry = json.loads(lines[1])
    assert entry["hash_version"] == 2
    assert keys.unpack_spec(entry["spec"]) is not None
    old = (V1 / "sweeps" / "ledger" / "quickstart.jsonl").read_text().splitlines()
    assert "spec_hash_version" not in json.loads(old[0])
    assert ledger.parse("\n".join(old), "q", "quickstart").entries  # old ledgers still read


def test_a_name_template_keeps_the_key_hex_and_a_renamed_point_keeps_its_entry(
    tmp_path: Path,
) -> None:
    path = minimal(tmp_path, extra="    seed: [1, 2]\n")
    _submit_all(tmp_path)
    before = {row.key: row.name for row in _plan(tmp_path).rows}
    path.write_text(
        path.read_text().replace("tasks:", 'experiment_name: "{sweep}-lr{lr}-s{seed}"\ntasks:')
    )
    plan = _plan(tmp_path)
    for row in plan.rows:
        assert (
            row.name
            == f"demo-lr{dict(row.params)['lr']}-s{dict(row.params)['seed']}-{row.key[:12]}"
        )
        # The key is the identity: the renamed point matches its entry and shows as drift.
        assert row.status == "~" and row.entry is not None
        assert str(row.changes[0]) == f'~ (experiment name): "{before[row.key]}" -> "{row.name}"'
    assert plan.to_submit == ()


def test_a_long_name_template_is_cut_to_128_characters_keeping_the_hex(tmp_path: Path) -> None:
    path = minimal(tmp_path)
    path.write_text(
        path.read_text().replace("tasks:", f'experiment_name: "{"x" * 150}-{{lr}}"\ntasks:')
    )
    names = [row.name for row in _plan(tmp_path).rows]
    assert all(len(n) == 128 for n in names)
    assert all(n.endswith(row.key[:12]) for n, row in zip(names, _plan(tmp_path).rows, strict=True))
