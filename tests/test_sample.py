"""Sampled points (`params.sample`) and their lock: drawn once by `lock`, read by everything else."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from runner.manifest import load
from runner.manifest import lock as lock_module
from runner.manifest.lock import lock_path
from runner.plan import catalog
from tests.conftest import PROJECT
from tests.helpers import head

SEARCH = """\
    command: [python, train.py, "--lr={{lr}}", "--wd={{wd}}", "--warmup={{warmup}}", "--seed={{seed}}"]
params:
  grid:
    seed: [1, 2]
  sample:
    method: {method}
    n: {n}
    seed: {seed}
    digits: {digits}
    space:
      lr: {{log_uniform: [1e-5, 1e-3]}}
      wd: {{uniform: [0.0, 0.1]}}
      warmup: {{int: [100, 2000]}}
      blocks: {{log_int: [1, 64]}}
      optim: {{choice: [adamw, lion, sgd]}}
  max_points: 100000
"""
"""The search's task and params, after its head(), as a template of the sample's settings."""


def _search(method: str = "sobol", n: int = 16, seed: int = 0, digits: int = 4) -> str:
    return head("search", draft=True) + SEARCH.format(method=method, n=n, seed=seed, digits=digits)


def _repo(
    tmp_path: Path, method: str = "sobol", n: int = 16, seed: int = 0, digits: int = 4
) -> Path:
    (tmp_path / "sweeps").mkdir(parents=True, exist_ok=True)
    text = _search(method, n, seed, digits)
    (tmp_path / "sweeps" / "search.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _manifest(root: Path) -> Path:
    return root / "sweeps" / "search.yaml"


def _lock(root: Path) -> int:
    return main(["-C", str(root), "lock"])


def _points(root: Path) -> list[dict[str, Any]]:
    """The sampled values of each locked point, in lock order."""
    data = json.loads(lock_path(_manifest(root)).read_text())
    return [dict(zip(data["params"], row, strict=True)) for row in data["points"]]


def _keys(root: Path) -> list[str]:
    (plan,) = catalog.load(root).unrecorded_plans()
    return [row.key for row in plan.rows]


def test_validate_asks_for_the_lock_then_lock_makes_the_sweep_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path)
    assert main(["-C", str(root), "validate"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "sweeps/search.yaml:13:3: params.sample: the lock search.lock.json is missing:"
        " run python -m runner lock sweeps/search.yaml to write it"
    )
    assert _lock(root) == 0
    assert "wrote search.lock.json: drew 16 point(s) (sobol, seed 0)" in capsys.readouterr().err
    assert main(["-C", str(root), "validate"]) == 0
    assert "32 point(s)" in capsys.readouterr().err  # 2 seeds x 16 sampled points
    assert _lock(root) == 0
    assert "is up to date (16 points)" in capsys.readouterr().err


def test_the_installed_command_names_itself_in_the_hint_and_the_lock_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run as the console script (sys.argv[0] is .../bin/sweep-runner), as in a research
    repository, the hints and the header say `sweep-runner`; an edited sample is out of date."""
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "bin" / "sweep-runner"), "validate"])
    root = _repo(tmp_path)
    assert main(["-C", str(root), "validate"]) == 1
    assert "is missing: run sweep-runner lock sweeps/search.yaml" in capsys.readouterr().err
    assert _lock(root) == 0
    header = json.loads(lock_path(_manifest(root)).read_text())["//"]
    assert header.startswith("Written by `sweep-runner lock sweeps/search.yaml`")
    manifest = _manifest(root)
    manifest.write_text(manifest.read_text().replace("seed: 0", "seed: 1"))
    assert main(["-C", str(root), "validate"]) == 1
    err = capsys.readouterr().err
    assert "params.sample: the lock is out of date: run sweep-runner lock sweeps/search.yaml" in err


@pytest.mark.slow
def test_the_same_manifest_locks_to_the_same_bytes_in_two_processes(tmp_path: Path) -> None:
    texts = []
    for name in ("one", "two"):
        root = _repo(tmp_path / name, method="random")
        subprocess.run(
            [sys.executable, "-m", "runner", "-C", str(root), "lock"], check=True, timeout=120
        )
        texts.append(lock_path(_manifest(root)).read_bytes())
    assert texts[0] == texts[1]
    assert texts[0].startswith(b'{\n  "//": "Written by `python -m runner lock sweeps/search.yaml`')


@pytest.mark.parametrize("method", ["random", "sobol", "halton"])
def test_growing_n_keeps_every_locked_point_and_its_key(tmp_path: Path, method: str) -> None:
    root = _repo(tmp_path, method=method, n=16)
    _lock(root)
    before, keys = _points(root), _keys(root)
    _repo(tmp_path, method=method, n=32)
    assert main(["-C", str(root), "validate"]) == 1  # stale until locked again
    _lock(root)
    after = _points(root)
    assert len(after) == 32 and after[:16] == before
    assert _keys(root)[: len(keys)] == keys  # sampled points come first: appended points last


def test_a_changed_seed_draws_a_new_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path, seed=0)
    _lock(root)
    keys = set(_keys(root))
    _repo(tmp_path, seed=1)
    _lock(root)
    assert "a new sample: drew 16" in capsys.readouterr().err
    assert not keys & set(_keys(root))


@pytest.mark.parametrize("k", [3, 5, 7])
def test_a_sobol_sample_of_2_to_the_k_keeps_its_balance_through_the_mapping(
    tmp_path: Path, k: int
) -> None:
    """Each float parameter has exactly one value in each of n equal strata of its range (of its
    logarithm for log_uniform)."""
    n = 2**k
    root = _repo(tmp_path, n=n, digits=12)
    _lock(root)
    points = _points(root)
    strata = {
        "lr": [
            math.floor(
                n * (math.log(float(p["lr"])) - math.log(1e-5)) / (math.log(1e-3) - math.log(1e-5))
            )
            for p in points
        ],
        "wd": [math.floor(n * float(p["wd"]) / 0.1) for p in points],
    }
    for name, found in strata.items():
        assert sorted(found) == list(range(n)), name


@pytest.mark.parametrize("method", ["random", "sobol", "halton"])
@pytest.mark.parametrize("seed", [0, 7])
def test_every_value_is_within_its_bounds_and_ints_are_integers(
    tmp_path: Path, method: str, seed: int
) -> None:
    root = _repo(tmp_path, method=method, seed=seed, n=64)
    _lock(root)
    for p in _points(root):
        assert 1e-5 <= float(p["lr"]) <= 1e-3
        assert 0.0 <= float(p["wd"]) <= 0.1
        assert type(p["warmup"]) is int and 100 <= p["warmup"] <= 2000
        assert type(p["blocks"]) is int and 1 <= p["blocks"] <= 64
        assert p["optim"] in ("adamw", "lion", "sgd")
        assert len(repr(float(p["lr"])).rstrip("0").replace(".", "").lstrip("0").split("e")[0]) <= 4


def test_a_hand_edited_lock_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _repo(tmp_path)
    _lock(root)
    path = lock_path(_manifest(root))
    text = path.read_text()
    first = json.dumps(_points(root)[0]["warmup"])
    path.write_text(text.replace(f", {first}, ", ", 1999, ", 1))
    assert path.read_text() != text
    capsys.readouterr()
    assert main(["-C", str(root), "validate"]) == 1
    assert "params.sample: the lock is out of date" in capsys.readouterr().err
    assert _lock(root) == 0  # the lock command redraws it: a hand edit never survives
    assert path.read_text() == text


def test_a_lock_of_another_sample_section_is_out_of_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path, digits=4)
    _lock(root)
    _repo(tmp_path, digits=5)
    assert main(["-C", str(root), "validate"]) == 1
    assert "the lock is out of date: run python -m runner lock" in capsys.readouterr().err


def test_points_that_collide_after_rounding_are_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sweeps").mkdir()
    text = _search("random", n=8)
    text = text.split("    space:\n")[0] + "    space:\n      optim: {choice: [adamw, lion]}\n"
    text = text.replace('"--lr={lr}", "--wd={wd}", "--warmup={warmup}", ', '"--optim={optim}", ')
    (tmp_path / "sweeps" / "search.yaml").write_text(text)
    assert _lock(tmp_path) == 1
    err = capsys.readouterr().err
    assert "params.sample: points " in err and "are the same after rounding" in err
    assert not lock_path(_manifest(tmp_path)).exists()


@pytest.mark.slow
def test_an_expand_of_a_locked_sweep_imports_no_scipy(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _lock(root)
    code = (
        "import sys; from runner.cli import main;"
        f" code = main(['-C', {str(root)!r}, 'expand', '--plan']);"
        " assert code in (0, 2), code;"
        " bad = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numpy'));"
        " assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_lock_without_scipy_says_how_to_install_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    code = (
        "import sys; sys.modules['scipy'] = None; from runner.cli import main;"
        f" raise SystemExit(main(['-C', {str(root)!r}, 'lock']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: `lock` draws points with scipy, which is not installed (scipy.stats):"
        " pip install 'beaker-sweep-runner[search]'"
    )
    assert not lock_path(_manifest(root)).exists()


@pytest.mark.slow
def test_the_docs_example_runs_on_the_local_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/search.md's quickstart: the committed lock is up to date, the 8 points run locally
    and status shows a final_loss for each."""
    (tmp_path / "sweeps").mkdir()
    for name in ("quickstart-search.yaml", "quickstart-search.lock.json"):
        shutil.copy(PROJECT / "sweeps" / name, tmp_path / "sweeps" / name)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    manifest = "sweeps/quickstart-search.yaml"
    before = (tmp_path / "sweeps" / "quickstart-search.lock.json").read_bytes()
    assert main(["-C", str(tmp_path), "lock", manifest]) == 0
    assert (tmp_path / "sweeps" / "quickstart-search.lock.json").read_bytes() == before
    assert main(["-C", str(tmp_path), "submit", manifest]) == 0
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "status", manifest, "--format", "json"]) == 0
    shown = capsys.readouterr().out
    assert shown.count('"final_loss"') >= 8, shown


def test_the_docs_show_the_example_that_is_committed() -> None:
    text = (PROJECT / "docs" / "search.md").read_text()
    assert "python -m runner submit sweeps/quickstart-search.yaml" in text
    assert (PROJECT / "sweeps" / "quickstart-search.lock.json").exists()


def test_a_manifest_reads_and_verifies_its_lock_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample's points, its clusters and its rungs are all read from one verified body."""
    checked: list[str] = []
    real = lock_module.verified

    def counted(text: str) -> dict[str, Any] | None:
        checked.append(text)
        return real(text)

    monkeypatch.setattr(lock_module, "verified", counted)
    loaded = load(PROJECT / "sweeps" / "branin.yaml", "sweeps/branin.yaml")
    lock = loaded.sweep.search.lock
    assert lock is not None and len(lock.rows) > 0
    assert len(checked) == 1
