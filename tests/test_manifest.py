from __future__ import annotations

from pathlib import Path

import pytest

from runner import render
from runner.core.errors import ManifestError
from runner.core.model import Sweep
from runner.core.space import count_points, upper_bound
from runner.plan import catalog
from runner.render import template
from tests.helpers import load, minimal

HEAD = """\
version: 1
name: big
beaker: {workspace: ai2/x, budget: ai2/b, clusters: [ai2/c]}
tasks:
  - image: {beaker: org/image}
    command: [run]
params:
"""
# 3 x 2 (nested grid) x 2 (one zip group) + 1 include = 13 points.
PARAMS = """\
  grid:
    optim: {lr: [1, 2, 3], wd: [0, 0.1]}
  zip:
    - {nodes: [1, 2], gpus: [8, 8]}
  include:
    - {optim.lr: 9, optim.wd: 0, nodes: 4, gpus: 8}
"""


def _write(tmp_path: Path, params: str) -> Path:
    return minimal(tmp_path, name="big", body=HEAD + params)


def _error(tmp_path: Path, params: str) -> str:
    with pytest.raises(ManifestError) as info:
        load(tmp_path, _write(tmp_path, params))
    return str(info.value)


def test_the_limit_is_exact_across_nested_grids_zip_groups_and_includes(tmp_path: Path) -> None:
    sweep = load(tmp_path, _write(tmp_path, PARAMS + "  max_points: 13\n"))
    assert upper_bound(sweep.space) == count_points(sweep.space) == 13
    assert _error(tmp_path, PARAMS + "  max_points: 12\n") == (
        "sweeps/big.yaml:14:15: params.max_points: the sweep has 13 points (before exclusions),"
        " more than max_points 12; raise params.max_points if you mean it"
    )


def test_an_oversized_grid_is_refused_before_its_values_are_checked(tmp_path: Path) -> None:
    # One bad value among many: past the limit, the count alone decides (no per-value work)...
    params = "  grid:\n    a: [1, 2, 3, null]\n    b: [1, 2, 3]\n"
    assert _error(tmp_path, params + "  max_points: 5\n") == (
        "sweeps/big.yaml:11:15: params.max_points: the sweep has 12 points (before exclusions),"
        " more than max_points 5; raise params.max_points if you mean it"
    )
    # ...within it, the value is reported.
    assert _error(tmp_path, params + "  max_points: 20\n") == (
        "sweeps/big.yaml:9:18: params.grid.a[3]: expected a string, number or boolean, got null"
    )


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            "  zip:\n    - {a: [1, 2, 3], b: [1, 2]}\n  max_points: 1\n",
            "sweeps/big.yaml:9:7: params.zip[0]: zip lists must have equal lengths: a has 3, b has 2",
        ),
        (
            "  grid:\n    a: []\n    b: [1, 2]\n  max_points: 1\n",
            "sweeps/big.yaml:9:8: params.grid.a: must not be empty",
        ),
        (
            "  grid:\n    a: [1, 2]\n  max_points: 0\n",
            "sweeps/big.yaml:10:15: params.max_points: must be at least 1, got 0",
        ),
    ],
    ids=["unequal-zip", "empty-axis", "zero-limit"],
)
def test_a_malformed_params_section_gets_its_own_error_not_a_count(
    tmp_path: Path, params: str, expected: str
) -> None:
    assert _error(tmp_path, params) == expected


def test_a_sweep_compiles_once_from_loading_to_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One Renderer per sweep, and each derived template parsed once, checked in one place."""
    minimal(tmp_path, extra='  derived:\n    run: "r-{lr}"\n')
    built: list[object] = []
    parsed: list[str] = []
    real_init, real_parse = render.Renderer.__init__, template.parse

    def counting_init(self: render.Renderer, sweep: Sweep) -> None:
        built.append(sweep)
        real_init(self, sweep)

    def counting_parse(text: str) -> template.Template:
        parsed.append(text)
        return real_parse(text)

    monkeypatch.setattr(render.Renderer, "__init__", counting_init)
    monkeypatch.setattr(template, "parse", counting_parse)
    plans = catalog.load(tmp_path).plans()
    assert [len(p.rows) for p in plans] == [2]
    assert len(built) == 1
    assert parsed.count("r-{lr}") == 1
