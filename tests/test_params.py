from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from runner import yaml12
from runner.core.errors import ManifestError
from runner.core.keys import point_key
from runner.core.model import DEFAULT_MAX_POINTS, Space, param_env_name
from runner.core.space import iter_points
from runner.core.values import as_text
from tests.helpers import MINIMAL, load, minimal, parse_space


def parse(text: str) -> tuple[Space, list[str]]:
    """The Space of a `params:` snippet, and its problems as `line:col: field: message`."""
    space, problems = parse_space(yaml12.load(textwrap.dedent(text), "m.yaml"))
    return space, [str(p).removeprefix("m.yaml:") for p in problems]


def space_of(text: str) -> Space:
    space, problems = parse(text)
    assert problems == []
    return space


def problems_of(text: str) -> list[str]:
    _, problems = parse(text)
    assert problems
    return problems


# --- axes ---------------------------------------------------------------------------------------


def test_no_params_is_an_empty_space() -> None:
    space = space_of("name: x\n")
    assert space == Space()
    assert space.max_points == DEFAULT_MAX_POINTS
    assert space_of("params: {}\n") == Space()


def test_grid_axes_in_order_written() -> None:
    space = space_of(
        """
        params:
          grid:
            lr: [1e-4, 3e-4]
            batch_size: [512, 1024, 2048]
          max_points: 50
        """
    )
    assert space.axis_names == ("lr", "batch_size")
    assert [axis.values for axis in space.axes] == [
        ((0.0001,), (0.0003,)),
        ((512,), (1024,), (2048,)),
    ]
    assert space.max_points == 50


def test_nested_grid_and_dotted_names_are_equivalent() -> None:
    nested = space_of(
        """
        params:
          grid:
            optim: {lr: [1, 2], sched: {warmup: [10]}}
            seed: [0, 1]
        """
    )
    dotted = space_of(
        """
        params:
          grid:
            optim.lr: [1, 2]
            optim.sched.warmup: [10]
            seed: [0, 1]
        """
    )
    assert nested.axis_names == dotted.axis_names == ("optim.lr", "optim.sched.warmup", "seed")
    assert [a.values for a in nested.axes] == [a.values for a in dotted.axes]
    assert list(iter_points(nested)) == list(iter_points(dotted))


def test_nested_and_dotted_assignments_are_equivalent() -> None:
    head = "params:\n  grid: {optim: {lr: [1, 2]}, seed: [0, 1]}\n"
    nested = space_of(
        head + "  exclude: [{optim: {lr: 1}}]\n  include: [{optim: {lr: 3}, seed: 0}]\n"
    )
    dotted = space_of(head + "  exclude: [{optim.lr: 1}]\n  include: [{optim.lr: 3, seed: 0}]\n")
    assert [a.values for a in nested.exclude] == [a.values for a in dotted.exclude]
    assert [a.values for a in nested.include] == [a.values for a in dotted.include]
    assert list(iter_points(nested)) == list(iter_points(dotted))


def test_values_keep_the_type_written_and_only_keys_normalise() -> None:
    space = space_of("params:\n  grid:\n    steps: [3e6, -0.0, 2.5, 7]\n")
    (axis,) = space.axes
    assert [type(row[0]) for row in axis.values] == [float, float, float, int]
    assert [as_text(v) for (v,) in axis.values if v is not None] == [
        "3000000.0",
        "-0.0",
        "2.5",
        "7",
    ]
    assert point_key("s", "ai2/w", 0, {"steps": 3e6}) == point_key(
        "s", "ai2/w", 0, {"steps": 3000000}
    )
    assert point_key("s", "ai2/w", 0, {"steps": -0.0}) == point_key("s", "ai2/w", 0, {"steps": 0})


def test_an_axis_may_not_repeat_a_value_written_two_ways() -> None:
    assert problems_of("params:\n  grid:\n    steps: [3e6, 3000000]\n") == [
        "3:18: params.grid.steps[1]: duplicate value 3000000 (also item 0)"
    ]


def test_the_same_parameter_twice_is_an_error() -> None:
    problems = problems_of("params:\n  grid:\n    optim.lr: [1]\n    optim: {lr: [2]}\n")
    assert problems == [
        "4:13: params.grid.optim.lr: parameter 'optim.lr' is defined twice"
        ' (first at params.grid["optim.lr"])'
    ]


def test_a_grid_parameter_again_in_zip_is_an_error() -> None:
    problems = problems_of("params:\n  grid: {a: [1]}\n  zip: [{a: [2], b: [3]}]\n")
    assert len(problems) == 1
    assert "parameter 'a' is defined twice" in problems[0]


@pytest.mark.parametrize("name", ["sweep", "experiment", "revision"])
def test_builtin_names_are_reserved(name: str) -> None:
    problems = problems_of(f"params:\n  grid:\n    {name}: [1]\n")
    assert problems == [
        f"3:5: params.grid.{name}: {name!r} is reserved (built-ins: sweep, experiment, revision)"
    ]


def test_duplicate_values_on_an_axis() -> None:
    problems = problems_of("params:\n  grid:\n    x: [3e6, 3000000, 1, 1.0]\n")
    assert problems == [
        "3:14: params.grid.x[1]: duplicate value 3000000 (also item 0)",
        "3:26: params.grid.x[3]: duplicate value 1 (also item 2)",
    ]


def test_true_and_one_are_different_values() -> None:
    space = space_of('params:\n  grid:\n    x: [true, 1, "1", "true"]\n')
    assert space.axes[0].values == ((True,), (1,), ("1",), ("true",))


@pytest.mark.parametrize("bad", [".nan", ".inf", "-.inf"])
def test_nan_and_infinity_are_problems(bad: str) -> None:
    problems = problems_of(f"params:\n  grid:\n    x: [1, {bad}]\n")
    assert len(problems) == 1
    assert problems[0].startswith("3:12: params.grid.x[1]: ")
    assert "not allowed" in problems[0]


# --- zip ----------------------------------------------------------------------------------------


def test_zip_is_one_axis_of_several_names() -> None:
    space = space_of("params:\n  zip:\n    - {nodes: [1, 2, 4], lr: [1e-4, 2e-4, 4e-4]}\n")
    (axis,) = space.axes
    assert axis.names == ("nodes", "lr")
    assert axis.values == ((1, 0.0001), (2, 0.0002), (4, 0.0004))


def test_zip_member_may_repeat_a_value() -> None:
    space = space_of("params:\n  zip:\n    - {nodes: [1, 2, 4, 8], gpus: [8, 8, 8, 8]}\n")
    assert space.axes[0].values == ((1, 8), (2, 8), (4, 8), (8, 8))


def test_zip_rows_must_differ() -> None:
    problems = problems_of("params:\n  zip:\n    - {a: [1, 2, 1], b: [x, y, x]}\n")
    assert problems == ['3:7: params.zip[0]: positions 0 and 2 are the same combination [1,"x"]']


def test_zip_lists_must_have_equal_lengths() -> None:
    problems = problems_of("params:\n  zip:\n    - {a: [1, 2], b: [1, 2, 3]}\n")
    assert problems == ["3:7: params.zip[0]: zip lists must have equal lengths: a has 2, b has 3"]


def test_nested_zip_names() -> None:
    space = space_of("params:\n  zip:\n    - {optim: {lr: [1, 2]}, nodes: [1, 2]}\n")
    assert space.axes[0].names == ("optim.lr", "nodes")


# --- exclude / include --------------------------------------------------------------------------


def test_assignment_naming_an_unknown_parameter() -> None:
    problems = problems_of("params:\n  grid: {a: [1, 2]}\n  exclude: [{b: 1}]\n")
    assert problems == ["3:14: params.exclude[0].b: unknown parameter 'b' (axes: a)"]


def test_exclude_value_that_is_not_on_the_axis() -> None:
    problems = problems_of("params:\n  grid: {a: [1, 2]}\n  exclude: [{a: 3}, {a: true}]\n")
    assert problems == [
        "3:17: params.exclude[0].a: 3 is not a value of axis 'a'",
        "3:25: params.exclude[1].a: true is not a value of axis 'a'",
    ]


def test_include_must_assign_every_axis() -> None:
    problems = problems_of(
        "params:\n  grid: {a: [1], b: [2]}\n  zip: [{c: [1]}]\n  include: [{a: 5}]\n"
    )
    assert problems == [
        "4:13: params.include[0]: include must assign every axis parameter; missing b, c"
    ]


def test_include_may_use_values_outside_the_axes() -> None:
    space = space_of("params:\n  grid: {a: [1], b: [2]}\n  include: [{a: 5, b: x}]\n")
    assert space.include[0].values == (("a", 5), ("b", "x"))


@pytest.mark.parametrize("kind", ["exclude", "include"])
def test_a_parameter_assigned_twice_in_one_assignment(kind: str) -> None:
    grid = "grid: {optim: {lr: [1, 2]}}"
    problems = problems_of(f"params:\n  {grid}\n  {kind}: [{{optim.lr: 1, optim: {{lr: 2}}}}]\n")
    assert len(problems) == 1
    assert f"params.{kind}[0].optim.lr: parameter 'optim.lr' is assigned twice" in problems[0]


def test_nan_in_an_assignment_is_a_problem() -> None:
    problems = problems_of("params:\n  grid: {a: [1]}\n  include: [{a: .nan}]\n")
    assert any("params.include[0].a: " in p and "not allowed" in p for p in problems)


# --- derived ------------------------------------------------------------------------------------


def test_derived_in_order() -> None:
    space = space_of(
        """
        params:
          grid: {lr: [1], warmup: [2]}
          derived:
            run: "lr{lr}-w{warmup}"
            long: "{run}-{sweep}-{revision}"
        """
    )
    assert [(d.name, d.template) for d in space.derived] == [
        ("run", "lr{lr}-w{warmup}"),
        ("long", "{run}-{sweep}-{revision}"),
    ]


def _load_problems(tmp_path: Path, params: str) -> list[str]:
    """Derived templates are checked where they compile (the renderer), through the loader."""
    body = MINIMAL.format(name="d").split("params:")[0] + textwrap.dedent(params)
    with pytest.raises(ManifestError) as info:
        load(tmp_path, minimal(tmp_path, name="d", body=body))
    return [str(p).removeprefix("sweeps/d.yaml:") for p in info.value.problems]


def test_derived_may_only_use_names_defined_before_it(tmp_path: Path) -> None:
    problems = _load_problems(
        tmp_path,
        """\
        params:
          grid: {lr: [1]}
          derived:
            a: "{b}"
            b: "{lr}"
        """,
    )
    assert problems == [
        "14:8: params.derived.a: template names unknown parameter 'b'"
        " (known: experiment, lr, revision, sweep)"
    ]


def test_derived_template_errors_are_problems(tmp_path: Path) -> None:
    problems = _load_problems(tmp_path, 'params:\n  grid: {lr: [1]}\n  derived: {a: "x{lr"}\n')
    assert len(problems) == 1
    assert "params.derived.a: unmatched '{'" in problems[0]


def test_derived_name_may_not_shadow_a_parameter() -> None:
    problems = problems_of('params:\n  grid: {lr: [1]}\n  derived: {lr: "x"}\n')
    assert len(problems) == 1
    assert "parameter 'lr' is defined twice" in problems[0]


# --- env names ----------------------------------------------------------------------------------


def test_param_env_name() -> None:
    assert param_env_name("lr") == "SWEEP_PARAM_LR"
    assert param_env_name("optim.lr") == "SWEEP_PARAM_OPTIM_LR"


def test_names_that_share_an_env_var_are_an_error() -> None:
    problems = problems_of("params:\n  grid: {optim.lr: [1], optim_lr: [2]}\n")
    assert problems == [
        "2:25: params.grid.optim_lr: 'optim_lr' and 'optim.lr' would both be passed as"
        " SWEEP_PARAM_OPTIM_LR"
    ]
