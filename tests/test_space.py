from __future__ import annotations

import itertools
import json
import math
import pathlib
import tempfile
import textwrap
from dataclasses import dataclass, replace
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import yaml12
from runner.core.errors import ManifestError
from runner.core.keys import point_key
from runner.core.model import Point, Space, Sweep
from runner.core.space import (
    count_points,
    duplicate_includes,
    iter_points,
    unmatched_excludes,
    upper_bound,
)
from runner.manifest import load_manifest
from tests.helpers import parse_space

SWEEPS = pathlib.Path(__file__).resolve().parent.parent / "sweeps"

HEAD = """\
version: 1
name: {name}
revision: {revision}
beaker:
  workspace: {workspace}
  budget: ai2/budget
  clusters: [ai2/jupiter]
tasks:
  - image: {{docker: "ghcr.io/allenai/pytorch:2.6"}}
    command: [python, train.py]
"""


def space_of(params: str) -> Space:
    """The Space of a `params:` YAML snippet, which must have no problems."""
    doc = yaml12.load("params:\n" + textwrap.indent(textwrap.dedent(params), "  "), "m.yaml")
    space, problems = parse_space(doc)
    assert problems == []
    return space


def manifest(
    tmp: pathlib.Path,
    params: str,
    name: str = "sweep",
    workspace: str = "ai2/ws",
    revision: int = 0,
    file: str = "sweep.yaml",
) -> Sweep:
    text = HEAD.format(name=name, workspace=workspace, revision=revision)
    text += "params:\n" + textwrap.indent(textwrap.dedent(params), "  ")
    path = tmp / file
    path.write_text(text, encoding="utf-8")
    return load_manifest(path)


def rows(space: Space) -> list[tuple[object, ...]]:
    return [tuple(value for _, value in point.params) for point in iter_points(space)]


def keys(sweep: Sweep) -> list[str]:
    where = (sweep.name, sweep.placement.workspace, sweep.revision)
    return [point_key(*where, point.as_dict()) for point in iter_points(sweep.space)]


# --- order --------------------------------------------------------------------------------------


def test_grid_is_in_order_written_last_axis_fastest() -> None:
    space = space_of("grid:\n  a: [1, 2]\n  b: [x, y, z]\n")
    assert rows(space) == [(1, "x"), (1, "y"), (1, "z"), (2, "x"), (2, "y"), (2, "z")]
    assert all(tuple(n for n, _ in p.params) == ("a", "b") for p in iter_points(space))
    assert all(p.origin == "grid" for p in iter_points(space))


def test_reordering_the_grid_reorders_the_points() -> None:
    space = space_of("grid:\n  b: [x, y, z]\n  a: [1, 2]\n")
    assert rows(space) == [("x", 1), ("x", 2), ("y", 1), ("y", 2), ("z", 1), ("z", 2)]


def test_zip_groups_vary_together_after_the_grid_axes() -> None:
    # `zip` written before `grid` still comes after it.
    space = space_of(
        """
        zip:
          - {nodes: [1, 2], lr: [0.1, 0.2]}
          - {seed: [7, 8]}
        grid:
          model: [m1, m2]
        """
    )
    assert space.axis_names == ("model", "nodes", "lr", "seed")
    assert rows(space) == [
        ("m1", 1, 0.1, 7),
        ("m1", 1, 0.1, 8),
        ("m1", 2, 0.2, 7),
        ("m1", 2, 0.2, 8),
        ("m2", 1, 0.1, 7),
        ("m2", 1, 0.1, 8),
        ("m2", 2, 0.2, 7),
        ("m2", 2, 0.2, 8),
    ]


def test_nested_grid_and_dotted_names_expand_the_same() -> None:
    nested = space_of("grid:\n  optim: {lr: [1, 2], wd: [0, 0.1]}\n  seed: [1]\n")
    dotted = space_of("grid:\n  optim.lr: [1, 2]\n  optim.wd: [0, 0.1]\n  seed: [1]\n")
    assert list(iter_points(nested)) == list(iter_points(dotted))
    assert nested.axis_names == ("optim.lr", "optim.wd", "seed")


# --- exclude and include ------------------------------------------------------------------------


def test_exclude_removes_exactly_the_matching_points() -> None:
    space = space_of(
        """
        grid: {a: [1, 2], b: [1, 2], c: [x, y]}
        exclude:
          - {a: 1, c: x}
          - {b: 2, a: 2, c: y}
        """
    )
    assert rows(space) == [(1, 1, "y"), (1, 2, "y"), (2, 1, "x"), (2, 1, "y"), (2, 2, "x")]
    assert count_points(space) == 5
    assert upper_bound(space) == 8


def test_exclude_on_a_zip_member() -> None:
    space = space_of(
        """
        grid: {model: [small, big]}
        zip: [{nodes: [1, 2, 4], lr: [0.1, 0.2, 0.4]}]
        exclude: [{model: big, nodes: 1}, {lr: 0.4}]
        """
    )
    assert rows(space) == [("small", 1, 0.1), ("small", 2, 0.2), ("big", 2, 0.2)]


def test_exclude_matches_by_identity_not_equality() -> None:
    space = space_of("grid: {x: [true, 1, 3000000]}\nexclude: [{x: 1}, {x: 3e6}]\n")
    assert rows(space) == [(True,)]


def test_include_appends_points_after_the_grid() -> None:
    space = space_of(
        """
        grid: {a: [1, 2], b: [x]}
        exclude: [{a: 2}]
        include:
          - {b: z, a: 9}
          - {a: 2, b: x}
        """
    )
    points = list(iter_points(space))
    assert points == [
        Point((("a", 1), ("b", "x"))),
        Point((("a", 9), ("b", "z")), origin="include[0]"),
        Point((("a", 2), ("b", "x")), origin="include[1]"),
    ]
    assert upper_bound(space) == 4
    assert count_points(space) == 3


def test_unmatched_excludes() -> None:
    space = space_of(
        """
        grid: {model: [small, big]}
        zip: [{nodes: [1, 2], lr: [0.1, 0.2]}]
        exclude:
          - {model: big}
          - {nodes: 1, lr: 0.2}
          - {model: small, lr: 0.2}
          - {nodes: 2, lr: 0.1, model: small}
        """
    )
    assert unmatched_excludes(space) == [1, 3]
    assert rows(space) == [("small", 1, 0.1)]


def test_duplicate_includes() -> None:
    space = space_of(
        """
        grid: {a: [1, 2]}
        zip: [{nodes: [1, 2], lr: [0.1, 0.2]}]
        exclude: [{a: 2, nodes: 2}]
        include:
          - {a: 1, nodes: 1, lr: 0.1}
          - {a: 2, nodes: 2, lr: 0.2}
          - {lr: 0.2, nodes: 2, a: 2}
          - {a: 1, nodes: 1, lr: 0.2}
          - {a: 3, nodes: 1, lr: 0.1}
          - {a: 1.0, nodes: 1, lr: 0.1}
        """
    )
    assert duplicate_includes(space) == [
        (0, "is already a point of the grid"),
        (2, "repeats include[1]"),
        (5, "repeats include[0]"),
    ]


def test_no_params_is_one_point_without_parameters() -> None:
    space = space_of("{}\n")
    assert space == Space()
    assert list(iter_points(space)) == [Point(())]
    assert upper_bound(space) == count_points(space) == 1
    assert unmatched_excludes(space) == []
    assert duplicate_includes(space) == []


def test_manifest_without_params_is_one_point(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "single.yaml"
    path.write_text(HEAD.format(name="single", workspace="ai2/ws", revision=0), encoding="utf-8")
    sweep = load_manifest(path)
    assert list(iter_points(sweep.space)) == [Point(())]


# --- size ---------------------------------------------------------------------------------------


def big_grid(axes: int, size: int) -> str:
    return "grid:\n" + "".join(f"  p{i}: {list(range(size))}\n" for i in range(axes))


def test_upper_bound_does_not_expand() -> None:
    # 10^12 points: expanding them would never finish, so returning at all proves it does not.
    space = space_of(
        big_grid(12, 10) + "include:\n  - {" + ", ".join(f"p{i}: 99" for i in range(12)) + "}\n"
    )
    assert upper_bound(space) == 10**12 + 1
    first = next(iter_points(space))
    assert first.params == tuple((f"p{i}", 0) for i in range(12))


def test_max_points_is_checked_before_expanding(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ManifestError) as info:
        manifest(tmp_path, big_grid(12, 10) + "max_points: 5000\n")
    (problem,) = info.value.problems
    assert problem.field == "params.max_points"
    assert "1000000000000 points (before exclusions), more than max_points 5000" in problem.message


def test_default_max_points(tmp_path: pathlib.Path) -> None:
    assert count_points(manifest(tmp_path, big_grid(3, 10)).space) == 1000
    with pytest.raises(ManifestError, match="1001 points"):
        manifest(tmp_path, big_grid(3, 10) + "include: [{p0: a, p1: a, p2: a}]\n")


# --- manifests ----------------------------------------------------------------------------------


def test_manifest_rejects_unmatched_excludes_and_duplicate_includes(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ManifestError) as info:
        manifest(
            tmp_path,
            """
            zip: [{nodes: [1, 2], lr: [0.1, 0.2]}]
            exclude: [{nodes: 1, lr: 0.2}]
            include: [{nodes: 2, lr: 0.2}]
            """,
        )
    assert [(p.field, p.message) for p in info.value.problems] == [
        ("params.exclude[0]", "matches no point of the grid"),
        ("params.include[0]", "duplicate point: is already a point of the grid"),
    ]


@pytest.mark.parametrize(
    ("file", "count"),
    [("lr-batch-grid.yaml", 12), ("torchrun-scaling.yaml", 7), ("dpo-open-instruct.yaml", 7)],
)
def test_example_sweeps(file: str, count: int) -> None:
    sweep = load_manifest(SWEEPS / file, f"sweeps/{file}")
    assert count_points(sweep.space) == count
    assert len(set(keys(sweep))) == count


def test_true_and_one_are_different_points_with_different_keys(tmp_path: pathlib.Path) -> None:
    sweep = manifest(tmp_path, "grid: {x: [true, 1, '1']}\n")
    assert rows(sweep.space) == [(True,), (1,), ("1",)]
    assert len(set(keys(sweep))) == 3


def test_key_changes_with_workspace_revision_name_and_parameters(tmp_path: pathlib.Path) -> None:
    params = "grid: {lr: [1e-4, 3e-4], bs: [1, 2]}\n"
    base = keys(manifest(tmp_path, params))
    assert len(set(base)) == 4
    variants = [
        manifest(tmp_path, params, workspace="ai2/other"),
        manifest(tmp_path, params, revision=1),
        manifest(tmp_path, params, name="sweep2"),
        manifest(tmp_path, "grid: {lr: [1e-4, 3e-4], bs: [3, 4]}\n"),
        manifest(tmp_path, "grid: {lr: [2e-4, 5e-4], bs: [1, 2]}\n"),
    ]
    for variant in variants:
        assert set(keys(variant)).isdisjoint(base)
    assert keys(manifest(tmp_path, "grid: {lr: [0.0001, 0.0003], bs: [1.0, 2e0]}\n")) == base


# --- properties ---------------------------------------------------------------------------------
#
# A random sweep is modelled as plain Python values, written out as YAML in two very different
# spellings, and checked against a brute-force expansion over itertools.product.

Raw = bool | int | float | str
Pairs = tuple[tuple[str, Raw], ...]
Ident = tuple[str, Raw]

GRID_NAMES = ("lr", "optim.wd", "data.batch.size", "model")
ZIP_NAMES = (("nodes", "sched.warmup"), ("gpus", "tp"))
# Every dotted name has its own first part, so nesting them keeps the order written.


def ident(value: Raw) -> Ident:
    """The brute force's own idea of "the same value", independent of runner.core.values."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return (type(value).__name__, value)


raw_values = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.sampled_from([0, 1, 1000, 3000000, -20]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-4, 3e-4, 0.5, 2.5e-7, -0.0, 3e6]),
    st.sampled_from(["", "1", "true", "3e6", "null", "1e-4", "a b"]),
    st.text(alphabet="abxy019-_. ", max_size=5),
)


@dataclass(frozen=True)
class Model:
    grid: tuple[tuple[str, tuple[Raw, ...]], ...]
    zips: tuple[tuple[tuple[str, ...], tuple[tuple[Raw, ...], ...]], ...]
    exclude: tuple[Pairs, ...]
    include: tuple[Pairs, ...]

    @property
    def axes(self) -> list[tuple[tuple[str, ...], tuple[tuple[Raw, ...], ...]]]:
        return [((name,), tuple((v,) for v in col)) for name, col in self.grid] + list(self.zips)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for names, _ in self.axes for name in names)

    def domain(self, name: str) -> list[Raw]:
        return [
            row[names.index(name)] for names, rows in self.axes if name in names for row in rows
        ]


@st.composite
def models(draw: st.DrawFn) -> Model:
    grid_names = draw(st.permutations(GRID_NAMES))[: draw(st.integers(1, 4))]
    columns = st.lists(raw_values, min_size=1, max_size=5, unique_by=ident)
    grid = tuple((name, tuple(draw(columns))) for name in grid_names)
    zips = []
    for group in ZIP_NAMES[: draw(st.integers(0, 2))]:
        names = group[: draw(st.integers(1, 2))]
        rows = draw(
            st.lists(
                st.tuples(*[raw_values] * len(names)),
                min_size=1,
                max_size=3,
                unique_by=lambda row: tuple(ident(v) for v in row),
            )
        )
        zips.append((names, tuple(rows)))
    model = Model(grid, tuple(zips), (), ())
    names = model.names

    def partial(subset: list[str]) -> Pairs:
        """Values from the axes, each name on its own (zip members may not fit together)."""
        return tuple((n, draw(st.sampled_from(model.domain(n)))) for n in subset)

    def full() -> Pairs:
        """Per axis, one of its rows (so often a grid point) or new values."""
        pairs: list[tuple[str, Raw]] = []
        for names, rows in model.axes:
            fresh = st.tuples(*[raw_values] * len(names))
            pairs.extend(zip(names, draw(st.sampled_from(rows) | fresh), strict=True))
        return tuple(pairs)

    subsets = st.lists(st.sampled_from(names), min_size=1, unique=True)
    exclude = tuple(partial(draw(subsets)) for _ in range(draw(st.integers(0, 3))))
    include = tuple(full() for _ in range(draw(st.integers(0, 3))))
    return replace(model, exclude=exclude, include=include)


def grid_points(model: Model) -> list[dict[str, Ident]]:
    """Brute force: every combination of axis rows, as {name: ident}."""
    out = []
    for combo in itertools.product(*(rows for _, rows in model.axes)):
        point: dict[str, Ident] = {}
        for (names, _), row in zip(model.axes, combo, strict=True):
            point.update((n, ident(v)) for n, v in zip(names, row, strict=True))
        out.append(point)
    return out


def matches(point: dict[str, Ident], rule: Pairs) -> bool:
    return all(point[name] == ident(value) for name, value in rule)


def expected_points(model: Model) -> list[tuple[tuple[str, Ident], ...]]:
    kept = [p for p in grid_points(model) if not any(matches(p, rule) for rule in model.exclude)]
    extra = [{n: ident(v) for n, v in item} for item in model.include]
    return [tuple((n, p[n]) for n in model.names) for p in kept + extra]


def expected_unmatched(model: Model) -> list[int]:
    grid = grid_points(model)
    return [i for i, rule in enumerate(model.exclude) if not any(matches(p, rule) for p in grid)]


def expected_duplicates(model: Model) -> list[int]:
    kept = [p for p in grid_points(model) if not any(matches(p, rule) for rule in model.exclude)]
    seen: list[dict[str, Ident]] = []
    out = []
    for i, item in enumerate(model.include):
        point = {n: ident(v) for n, v in item}
        if point in seen or point in kept:
            out.append(i)
        seen.append(point)
    return out


def valid(model: Model) -> Model:
    """The model without the excludes and includes a manifest would refuse."""
    unmatched = set(expected_unmatched(model))
    model = replace(
        model, exclude=tuple(r for i, r in enumerate(model.exclude) if i not in unmatched)
    )
    duplicates = set(expected_duplicates(model))
    return replace(
        model, include=tuple(r for i, r in enumerate(model.include) if i not in duplicates)
    )


# -- writing a model as YAML, two ways --


def spell(value: Raw, alt: bool) -> str:
    if isinstance(value, bool):
        return ("True" if value else "FALSE") if alt else str(value).lower()
    if isinstance(value, int):
        if not alt:
            return str(value)
        if value == 0:
            return "-0.0"
        digits = str(abs(value))
        zeros = len(digits) - len(digits.rstrip("0"))
        return f"{value // 10**zeros}e{zeros}" if zeros else f"{value}.0"
    if isinstance(value, float):
        return format(Decimal(repr(value)), "e") if alt else repr(value)
    return "'" + value.replace("'", "''") + "'" if alt else json.dumps(value)


def seq(values: tuple[Raw, ...], alt: bool) -> str:
    return (
        "[ " + " ,  ".join(spell(v, alt) for v in values) + " ]"
        if alt
        else ("[" + ", ".join(spell(v, False) for v in values) + "]")
    )


def nested(pairs: list[tuple[str, str]]) -> str:
    """A flow mapping of already-spelled values, dotted names written as nested mappings."""
    parts = []
    for name, text in pairs:
        head, _, rest = name.partition(".")
        parts.append(f"{head}: {nested([(rest, text)]) if rest else text}")
    return "{ " + " , ".join(parts) + " }"


def block_yaml(model: Model, name: str, workspace: str, revision: int) -> str:
    out = HEAD.format(name=f"'{name}'", workspace=workspace, revision=revision)
    out += "params:\n  max_points: 100000\n  grid:\n"
    for param, values in model.grid:
        out += f"    {param}:\n" + "".join(f"      - {spell(v, False)}\n" for v in values)
    if model.zips:
        out += "  zip:\n"
        for names, rows in model.zips:
            for i, param in enumerate(names):
                column = tuple(row[i] for row in rows)
                out += f"    {'- ' if i == 0 else '  '}{param}: {seq(column, False)}\n"
    for kind, items in (("exclude", model.exclude), ("include", model.include)):
        if items:
            out += f"  {kind}:\n"
            out += "".join(
                "    - {" + ", ".join(f"{n}: {spell(v, False)}" for n, v in item) + "}\n"
                for item in items
            )
    return out


def flow_yaml(model: Model, name: str, workspace: str, revision: int) -> str:
    def assignments(items: tuple[Pairs, ...]) -> str:
        maps = [nested([(n, spell(v, True)) for n, v in reversed(item)]) for item in items]
        return "[\n      " + " ,\n      ".join(maps) + "\n    ]" if maps else "[ ]"

    grid = nested([(param, seq(values, True)) for param, values in model.grid])
    zips = [
        nested([(param, seq(tuple(row[i] for row in rows), True)) for i, param in enumerate(names)])
        for names, rows in model.zips
    ]
    return textwrap.dedent(
        f"""\
        # The same sweep, spelled differently.
        params:   {{
            include: {assignments(model.include)},   # extra points
            exclude:  {assignments(model.exclude)},
            zip: [ {" , ".join(zips)} ],

            grid:    {grid},
            max_points: 100000
          }}

        tasks:
          - command:   [ "python",   "train.py" ]   # argv
            image: {{ docker: 'ghcr.io/allenai/pytorch:2.6' }}
        beaker: {{clusters: ["ai2/jupiter"],  workspace: "{workspace}", budget: ai2/budget}}
        revision:     {revision}
        name: "{name}"     # the sweep

        version: 1
        """
    )


def load_text(text: str) -> Sweep:
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "sweep.yaml"
        path.write_text(text, encoding="utf-8")
        return load_manifest(path, "sweeps/sweep.yaml")


def observed(space: Space) -> list[tuple[tuple[str, Ident], ...]]:
    """The expanded points, compared by identity: values keep the type written (3e6 stays a
    float, see test_params), while 3e6 and 3000000 are the same value."""
    return [tuple((n, ident(v)) for n, v in p.params) for p in iter_points(space)]


@pytest.mark.slow
@given(models(), st.booleans())
@settings(max_examples=100, deadline=None)
def test_expansion_matches_brute_force(model: Model, alt: bool) -> None:
    text = (flow_yaml if alt else block_yaml)(model, "s", "ai2/ws", 0)
    space, problems = parse_space(yaml12.load(text, "m.yaml"))
    assert problems == []
    expected = expected_points(model)
    grid_size = math.prod(len(rows) for _, rows in model.axes)
    excluded = sum(1 for p in grid_points(model) if any(matches(p, r) for r in model.exclude))
    assert len(expected) == grid_size - excluded + len(model.include)
    assert observed(space) == expected
    assert count_points(space) == len(expected)
    assert upper_bound(space) == grid_size + len(model.include)
    assert unmatched_excludes(space) == expected_unmatched(model)
    assert [i for i, _ in duplicate_includes(space)] == expected_duplicates(model)


sweep_names = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)


@given(models().map(valid), sweep_names, st.integers(0, 5))
@settings(max_examples=60, deadline=None)
def test_keys_are_unique_and_survive_reformatting(model: Model, name: str, revision: int) -> None:
    block = load_text(block_yaml(model, name, "ai2/ws", revision))
    flow = load_text(flow_yaml(model, name, "ai2/ws", revision))
    assert block.space.axis_names == flow.space.axis_names == model.names
    assert observed(block.space) == observed(flow.space) == expected_points(model)
    block_keys = keys(block)
    assert keys(flow) == block_keys
    assert len(set(block_keys)) == len(block_keys) == len(expected_points(model))
