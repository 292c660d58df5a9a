"""Conditional parameters (`when:`): a parameter that exists only for some values of another, in
grids, sampled spaces and adaptive rounds; its absence in keys, specs, locks and tables."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import yaml12
from runner.cli import main
from runner.core.aims import Aim, Aims, Goal
from runner.core.keys import point_key
from runner.core.model import Condition, Space, in_order
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.space import count_points, iter_points, upper_bound
from runner.core.values import Value
from runner.manifest import load_manifest
from runner.manifest.conditions import parse
from runner.search.adaptive import propose
from runner.search.points import Result, Told, parents_first, row
from tests.conftest import PROJECT
from tests.helpers import parse_space, write_manifest

LOSS = Aims((Aim("loss", Goal.MINIMIZE),))

HEAD = """\
version: 1
name: {name}
draft: true
beaker:
  workspace: ai2/sweeps-test
  clusters: [ai2/test-cluster]
"""
GRID = (
    HEAD
    + """\
tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py]
    arguments: ["--optim={{optim}}", "--momentum={{momentum}}"]
params:
  grid:
    optim: [adamw, sgd]
    momentum: {{values: [0.9, 0.99], when: {{optim: sgd}}}}
"""
)
SOBOL = (
    HEAD
    + """\
tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py, "--optim={{optim}}", "--lr={{lr}}", "--momentum={{momentum}}"]
params:
  sample:
    method: {method}
    n: 16
    space:
      optim: {{choice: [adamw, sgd]}}
      lr: {{log_uniform: [1.0e-5, 1.0e-1]}}
      momentum: {{uniform: [0.8, 0.99], when: {{optim: sgd}}}}
"""
)


def space_of(text: str) -> Space:
    space, problems = parse_space(yaml12.load(textwrap.dedent(text), "m.yaml"))
    assert problems == []
    return space


def problems_of(root: Path, text: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    write_manifest(root, text, "c.yaml")
    assert main(["-C", str(root), "validate", "sweeps/c.yaml"]) == 1
    return capsys.readouterr().err.strip().splitlines()


def points(space: Space) -> list[dict[str, Value]]:
    return [p.as_dict() for p in iter_points(space)]


# --- grids --------------------------------------------------------------------------------------


def test_a_conditional_axis_expands_only_where_its_condition_holds() -> None:
    space = space_of(
        "params:\n  grid:\n    optim: [adamw, sgd]\n"
        "    momentum: {values: [0.9, 0.99], when: {optim: sgd}}\n"
    )
    assert points(space) == [
        {"optim": "adamw"},
        {"optim": "sgd", "momentum": 0.9},
        {"optim": "sgd", "momentum": 0.99},
    ]
    assert upper_bound(space) >= count_points(space) == 3


def test_conditions_chain_and_take_lists_of_values_and_nest() -> None:
    space = space_of(
        """
        params:
          grid:
            optim: {name: [adamw, sgd, lion], betas: {values: [a, b], when: {optim.name: [adamw, lion]}}}
            sched: {values: [cos, lin], when: {optim.betas: a}}
            seed: [0, 1]
        """
    )
    found = points(space)
    assert len(found) == 2 * (1 + 3 + 3)  # seeds x (sgd; adamw, lion: a with 2 scheds, b)
    for point in found:
        assert ("optim.betas" in point) == (point["optim.name"] != "sgd")
        assert ("sched" in point) == (point.get("optim.betas") == "a")


def test_adding_a_conditional_axis_keeps_the_other_branchs_keys() -> None:
    before = space_of("params:\n  grid:\n    optim: [adamw, sgd]\n    lr: [1, 2]\n")
    after = space_of(
        "params:\n  grid:\n    optim: [adamw, sgd]\n    lr: [1, 2]\n"
        "    momentum: {values: [0.9], when: {optim: sgd}}\n"
    )

    def keys(space: Space) -> dict[str, dict[str, Value]]:
        return {point_key("s", "ai2/w", 0, p.as_dict()): p.as_dict() for p in iter_points(space)}

    old, new = keys(before), keys(after)
    adamw = {k for k, p in old.items() if p["optim"] == "adamw"}
    assert adamw and adamw <= set(new)  # the adamw points are the same experiments
    assert not {k for k, p in old.items() if p["optim"] == "sgd"} & set(new)  # sgd ones changed


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    extra=st.integers(1, 3),
    chosen=st.integers(0, 2),
)
def test_expansion_counts_and_keys_are_those_of_the_branches(
    sizes: list[int], extra: int, chosen: int
) -> None:
    """Points = the grid without the conditional axis, with each point matching the condition
    replaced by one per conditional value; the others keep their keys."""
    axes = {f"a{i}": list(range(n)) for i, n in enumerate(sizes)}
    base = "params:\n  grid:\n" + "".join(f"    {k}: {v}\n" for k, v in axes.items())
    wanted = chosen % sizes[0]
    cond = f"    c: {{values: {list(range(extra))}, when: {{a0: {wanted}}}}}\n"
    plain, with_c = space_of(base), space_of(base + cond)
    matching = sum(1 for p in iter_points(plain) if p.as_dict()["a0"] == wanted)
    assert count_points(with_c) == count_points(plain) - matching + matching * extra
    old = {point_key("s", "w", 0, p.as_dict()) for p in iter_points(plain)}
    new = {point_key("s", "w", 0, p.as_dict()) for p in iter_points(with_c)}
    assert len(new) == count_points(with_c)  # keys stay unique
    assert len(old & new) == count_points(plain) - matching


def test_an_include_assigns_a_conditional_parameter_exactly_where_it_applies() -> None:
    text = (
        "params:\n  grid:\n    optim: [adamw, sgd]\n"
        "    momentum: {values: [0.9], when: {optim: sgd}}\n"
        "  include:\n    - {optim: sgd, momentum: 0.5}\n    - {optim: lion}\n"
    )
    assert points(space_of(text))[-2:] == [{"optim": "sgd", "momentum": 0.5}, {"optim": "lion"}]
    bad = text.replace("{optim: lion}", "{optim: sgd}").replace("momentum: 0.5", "momentum: 0.9")
    _, problems = parse_space(yaml12.load(bad + "    - {optim: adamw, momentum: 1}\n", "m"))
    assert [str(p).split(": ", 1)[1] for p in problems] == [
        "params.include[1]: include misses 'momentum', which exists exactly when optim: sgd",
        "params.include[2]: include assigns 'momentum', which exists exactly when optim: sgd",
    ]


# --- rendering ------------------------------------------------------------------------------------


def test_the_plan_lists_only_the_parameters_a_point_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, GRID.format(name="opt"), "opt.yaml")
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "markdown"]) == 0
    shown = capsys.readouterr().out
    assert "None" not in shown
    rows = [line for line in shown.splitlines() if "optim=" in line]
    assert len(rows) == 3 and sum("momentum=" in line for line in rows) == 2


def test_saved_specs_leave_the_absent_argument_out(tmp_path: Path) -> None:
    write_manifest(tmp_path, GRID.format(name="opt"), "opt.yaml")
    out = tmp_path / "specs"
    assert main(["-C", str(tmp_path), "expand", "--save-specs", str(out)]) == 0
    found = {}
    for path in sorted(out.rglob("*.yaml")):
        (task,) = yaml.safe_load(path.read_text())["tasks"]
        env = {v["name"]: v.get("value") for v in task["envVars"]}
        found[tuple(task["arguments"])] = (json.loads(env["SWEEP_PARAMS"]), env)
    assert sorted(found) == [
        ("--optim=adamw",),
        ("--optim=sgd", "--momentum=0.9"),
        ("--optim=sgd", "--momentum=0.99"),
    ]
    params, env = found[("--optim=adamw",)]
    assert params == {"optim": "adamw"} and "SWEEP_PARAM_MOMENTUM" not in env
    params, env = found[("--optim=sgd", "--momentum=0.99")]
    assert params == {"momentum": 0.99, "optim": "sgd"} and env["SWEEP_PARAM_MOMENTUM"] == "0.99"


def test_a_conditional_placeholder_outside_argv_needs_a_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GRID.format(name="c").replace(
        "    arguments:", '    env: {M: "{momentum}"}\n    arguments:'
    )
    assert problems_of(tmp_path, text, capsys) == [
        "sweeps/c.yaml:10:14: tasks[0].env.M: {momentum} is absent from some points (when optim:"
        " sgd): write {momentum?TEXT} to say what goes there, or pass it in command or"
        " arguments, where an item naming an absent parameter is left out"
    ]
    fixed = text.replace('"{momentum}"', '"{momentum?none}"')
    fixed += "  derived:\n    tag: '{optim}-{momentum?0}'\n"
    write_manifest(tmp_path, fixed, "c.yaml")
    out = tmp_path / "specs"
    assert main(["-C", str(tmp_path), "expand", "--save-specs", str(out)]) == 0
    values = set()
    for path in out.rglob("*.yaml"):
        (task,) = yaml.safe_load(path.read_text())["tasks"]
        env = {v["name"]: v.get("value") for v in task["envVars"]}
        values.add((env["M"], env["SWEEP_PARAM_TAG"]))
    assert values == {("none", "adamw-0"), ("0.9", "sgd-0.9"), ("0.99", "sgd-0.99")}


def test_a_flag_left_without_its_value_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GRID.format(name="c").replace('"--momentum={momentum}"', "--momentum, '{momentum}'")
    assert problems_of(tmp_path, text, capsys) == [
        "sweeps/c.yaml:10:48: tasks[0].arguments[2]: {momentum} is absent from some points,"
        " where this item is left out but '--momentum' before it would stay: write"
        " --momentum={momentum} as one item"
    ]


# --- validate -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (
            "{optimizer: sgd}",
            "sweeps/c.yaml:14:44: params.grid.momentum.when.optimizer: the condition names unknown"
            " parameter 'optimizer' (parameters: optim, momentum)",
        ),
        (
            "{optim: sdg}",
            'sweeps/c.yaml:14:51: params.grid.momentum.when.optim: "sdg" is not a value of'
            ' \'optim\' (values: "adamw", "sgd")',
        ),
        (
            "{optim: [sgd, 3]}",
            "sweeps/c.yaml:14:57: params.grid.momentum.when.optim[1]: 3 is not a value of 'optim'"
            ' (values: "adamw", "sgd")',
        ),
        (
            "{momentum: 0.9}",
            "sweeps/c.yaml:14:37: params.grid.momentum.when: conditions form a cycle:"
            " momentum -> momentum",
        ),
    ],
)
def test_validate_refuses_a_bad_condition_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], when: str, expected: str
) -> None:
    text = GRID.format(name="c").replace("{optim: sgd}", when)
    assert problems_of(tmp_path, text, capsys) == [expected]


def test_validate_refuses_a_cycle_through_two_parameters_and_when_in_a_zip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GRID.format(name="c") + (
        "    a: {values: [1], when: {b: 1}}\n    b: {values: [1], when: {a: 1}}\n"
        "  zip:\n    - {z: {values: [1], when: {optim: sgd}}}\n"
    )
    assert problems_of(tmp_path, text, capsys) == [
        "sweeps/c.yaml:15:22: params.grid.a.when: conditions form a cycle: a -> b -> a",
        "sweeps/c.yaml:18:25: params.zip[0].z.when: a zip group's members vary together: `when`"
        " is not allowed in one (make the parameter a grid axis)",
    ]


def test_a_sampled_condition_reads_only_listed_sampled_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SOBOL.format(name="c", method="sobol").replace("{optim: sgd}", "{lr: 0.1}")
    text += "  grid:\n    seed: [0]\n"
    assert problems_of(tmp_path, text, capsys)[1:] == [
        "sweeps/c.yaml:17:47: params.sample.space.momentum.when.lr: 'lr' is sampled from a"
        " range: a condition needs a parameter with listed values (a grid axis or a choice)"
    ]
    text = text.replace("{lr: 0.1}", "{seed: 0}")
    assert problems_of(tmp_path, text, capsys)[1:] == [
        "sweeps/c.yaml:17:47: params.sample.space.momentum.when.seed: a sampled parameter's"
        " condition may name only sampled parameters: 'seed' is not one (the lock draws its"
        " points without the grid)"
    ]


# --- sampling -----------------------------------------------------------------------------------


def test_a_sobol_lock_has_the_parameter_exactly_where_it_applies_and_is_byte_stable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, SOBOL.format(name="sob", method="sobol"), "sob.yaml")
    lock = tmp_path / "sweeps" / "sob.lock.json"
    assert main(["-C", str(tmp_path), "lock"]) == 0
    first = lock.read_bytes()
    data = json.loads(first)
    assert data["params"] == ["optim", "lr", "momentum"] and len(data["points"]) == 16
    for optim, lr, momentum in data["points"]:
        assert 1e-5 <= lr <= 1e-1
        assert (momentum is not None) == (optim == "sgd")
        assert momentum is None or 0.8 <= momentum <= 0.99
    assert {p[0] for p in data["points"]} == {"adamw", "sgd"}
    assert main(["-C", str(tmp_path), "lock"]) == 0
    assert lock.read_bytes() == first
    lock.unlink()
    assert main(["-C", str(tmp_path), "lock"]) == 0
    assert lock.read_bytes() == first  # drawn again from nothing: the same bytes
    assert main(["-C", str(tmp_path), "expand", "sweeps/sob.yaml", "--format", "json"]) == 0
    shown = capsys.readouterr().out
    assert '"momentum": null' not in shown and "None" not in shown


def test_a_condition_is_part_of_the_samples_digest() -> None:
    plain = Distribution("m", Kind.UNIFORM, (0.8, 0.99))
    when = parse("m", {"optim": "sgd"}, ("w",), lambda *_: None)
    optim = Distribution("optim", Kind.CHOICE, ("adamw", "sgd"))
    a = Sample(Method.SOBOL, 4, 0, 4, (optim, plain))
    b = Sample(Method.SOBOL, 4, 0, 4, (optim, Distribution("m", Kind.UNIFORM, (0.8, 0.99), when)))
    assert a.digest != b.digest
    assert row(b, [0.1, 0.5]) == ("adamw", None) and row(b, [0.9, 0.5]) == ("sgd", 0.895)


# --- adaptive -----------------------------------------------------------------------------------


def _conditional_sample() -> Sample:
    when = parse("momentum", {"optim": "sgd"}, ("w",), lambda *_: None)
    space = (
        Distribution("momentum", Kind.UNIFORM, (0.8, 0.99), when),  # written before its parent
        Distribution("optim", Kind.CHOICE, ("adamw", "sgd")),
        Distribution("lr", Kind.LOG_UNIFORM, (1e-5, 1e-1)),
    )
    return Sample(Method.TPE, 32, 0, 4, space, batch=8)


def test_tpe_asks_for_a_conditional_parameter_only_on_its_branch() -> None:
    sample = _conditional_sample()
    told = [
        Told((0.9, "sgd", 1e-3), Result.DONE, 0.5),
        Told((None, "adamw", 1e-2), Result.DONE, 0.7),
        Told((None, "adamw", 1e-4), Result.PENDING),
    ]
    new = propose(sample, LOSS, told, 12, 1)
    assert len(new) == 12 and {optim for _, optim, _ in new} == {"adamw", "sgd"}
    for momentum, optim, lr in new:
        assert (momentum is not None) == (optim == "sgd")
        assert momentum is None or 0.8 <= float(momentum) <= 0.99
        assert isinstance(lr, float) and 1e-5 <= lr <= 1e-1
    assert propose(sample, LOSS, told, 12, 1) == new


TPE = (
    HEAD
    + """\
tasks:
  - image: {{docker: python:3.12-slim}}
    command:
      - python
      - -c
      - >-
        import json, os, sys;
        a = dict(x.lstrip('-').split('=') for x in sys.argv[1:]);
        assert ('momentum' in a) == (a['optim'] == 'sgd'), a;
        d = os.environ['RESULTS_DIR']; os.makedirs(d, exist_ok=True);
        v = float(a['lr']) + float(a.get('momentum', 0));
        open(d + '/metrics.json', 'w').write(json.dumps(dict(loss=v)))
      - "--optim={{optim}}"
      - "--lr={{lr}}"
      - "--momentum={{momentum}}"
params:
  sample:
    method: tpe
    n: 8
    batch: 4
    metric: loss
    space:
      optim: {{choice: [adamw, sgd]}}
      lr: {{log_uniform: [1.0e-5, 1.0e-1]}}
      momentum: {{uniform: [0.8, 0.99], when: {{optim: sgd}}}}
"""
)


@pytest.mark.slow
def test_a_tpe_search_over_a_conditional_space_runs_and_proposes_the_next_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, TPE.format(name="opt"), "opt.yaml")
    run = ["-C", str(tmp_path)]
    assert main([*run, "propose", "--backend", "local"]) == 0
    assert main([*run, "submit", "sweeps/opt.yaml"]) == 0
    assert main([*run, "propose", "--backend", "local"]) == 0
    assert "round 1: proposed 4 point(s), 8 of n=8" in capsys.readouterr().err
    data = json.loads((tmp_path / "sweeps" / "opt.lock.json").read_text())
    assert data["rounds"] == [0] * 4 + [1] * 4
    for optim, _, momentum in data["points"]:
        assert (momentum is not None) == (optim == "sgd")
    assert main([*run, "submit", "sweeps/opt.yaml"]) == 0
    capsys.readouterr()
    assert main([*run, "status", "--backend", "local", "--format", "json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    assert len(sweep["points"]) == 8
    for point in sweep["points"]:  # every task saw momentum exactly on its branch, and finished
        assert point["state"] == "succeeded", point
        assert ("momentum" in point["params"]) == (point["params"]["optim"] == "sgd")
        assert None not in point["params"].values()
        assert point["params"]["round"] in (0, 1)  # found in the lock, null and all


def test_a_grid_axis_may_be_conditional_on_a_sampled_choice(tmp_path: Path) -> None:
    text = (
        SOBOL.format(name="mix", method="sobol").replace(", when: {optim: sgd}}", "}")
        + "  grid:\n    nesterov: {values: [true, false], when: {optim: sgd}}\n"
    )
    write_manifest(tmp_path, text, "mix.yaml")
    assert main(["-C", str(tmp_path), "lock"]) == 0
    sweep = load_manifest(tmp_path / "sweeps" / "mix.yaml")
    found = points(sweep.space)
    sgd = sum(1 for p in found if p["optim"] == "sgd")
    assert sgd and len(found) == 16 + sgd // 2  # each sampled sgd point twice, adamw once
    assert all(("nesterov" in p) == (p["optim"] == "sgd") for p in found)


def _docs_block(page: str, marker: str) -> str:
    text = (PROJECT / "docs" / page).read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if marker in b]
    return block


def test_the_manifest_docs_example_has_the_points_it_says(tmp_path: Path) -> None:
    """docs/manifest.md: 6 points, not 8; adamw points get no --momentum."""
    path = write_manifest(tmp_path, _docs_block("manifest.md", "name: optimizers"), "o.yaml")
    found = points(load_manifest(path).space)
    assert len(found) == 6
    assert sorted({tuple(sorted(p)) for p in found}) == [
        ("betas", "lr", "optim"),
        ("lr", "momentum", "optim"),
    ]
    out = tmp_path / "specs"
    assert main(["-C", str(tmp_path), "expand", "--save-specs", str(out)]) == 0
    for spec in out.rglob("*.yaml"):
        (task,) = yaml.safe_load(spec.read_text())["tasks"]
        argv = " ".join(task["arguments"])
        env = {v["name"]: v.get("value") for v in task["envVars"]}
        assert ("--momentum=" in argv) == ("--optim=sgd" in argv) != ("--betas=" in argv)
        assert (env["MOMENTUM"] == "none") == ("--optim=adamw" in argv)


def test_the_search_docs_example_locks_momentum_only_for_sgd(tmp_path: Path) -> None:
    write_manifest(tmp_path, _docs_block("search.md", "name: optimizers-sampled"), "o.yaml")
    assert main(["-C", str(tmp_path), "lock"]) == 0
    data = json.loads((tmp_path / "sweeps" / "o.lock.json").read_text())
    assert len(data["points"]) == 16
    assert all((m is None) == (o == "adamw") for o, _, m in data["points"])


def test_max_points_counts_the_points_a_conditional_grid_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4 points, though the product of the axis lengths is 6: max_points 4 passes, 3 does not."""
    grid = (
        HEAD.format(name="c")
        + "tasks:\n  - image: {beaker: org/image}\n    command: [python, train.py]\n"
        + "params:\n  grid:\n    optim: [a, b]\n"
        + "    m: {values: [1, 2, 3], when: {optim: b}}\n"
    )
    write_manifest(tmp_path, grid + "  max_points: 4\n", "c.yaml")
    assert main(["-C", str(tmp_path), "validate"]) == 0
    capsys.readouterr()
    assert problems_of(tmp_path, grid + "  max_points: 3\n", capsys) == [
        "sweeps/c.yaml:14:15: params.max_points: the sweep has 4 points (before exclusions),"
        " more than max_points 3; raise params.max_points if you mean it"
    ]
    huge = grid.replace("[a, b]", str(list(range(2000))))
    assert problems_of(tmp_path, huge.replace("when: {optim: b}", "when: {optim: 1}"), capsys) == [
        "sweeps/c.yaml:11:3: params: the sweep has at least 2000 points (before exclusions),"
        " more than max_points 1000; raise params.max_points if you mean it"
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1, exclude_max=True), min_size=4, max_size=4))
def test_a_sampled_chain_drops_as_a_whole(quantiles: list[float]) -> None:
    """dampening only with nesterov, nesterov only with sgd: whatever is drawn, each is in the
    point exactly when its condition holds on the values kept."""

    def when(name: str, raw: dict[str, object]) -> Condition | None:
        return parse(name, raw, ("w",), lambda *_: None)

    space = (
        Distribution("dampening", Kind.UNIFORM, (0.0, 1.0), when("dampening", {"nesterov": True})),
        Distribution("nesterov", Kind.CHOICE, (True, False), when("nesterov", {"optim": "sgd"})),
        Distribution("optim", Kind.CHOICE, ("adamw", "sgd")),
        Distribution("lr", Kind.UNIFORM, (0.0, 1.0)),
    )
    damp, nesterov, optim, lr = row(Sample(Method.RANDOM, 4, 0, 4, space), quantiles)
    assert lr is not None and optim in ("adamw", "sgd")
    assert (nesterov is not None) == (optim == "sgd")
    assert (damp is not None) == (nesterov is True)


def test_conditions_and_draws_are_put_in_one_order() -> None:
    """Parents first, else as written: the conditions checked on load and the order in which a
    search asks for values are the same topological order (two copies of it were written)."""

    def when(name: str, raw: dict[str, object]) -> Condition | None:
        return parse(name, raw, ("w",), lambda *_: None)

    space = (
        Distribution("dampening", Kind.UNIFORM, (0.0, 1.0), when("dampening", {"nesterov": True})),
        Distribution("lr", Kind.UNIFORM, (0.0, 1.0)),
        Distribution("nesterov", Kind.CHOICE, (True, False), when("nesterov", {"optim": "sgd"})),
        Distribution("optim", Kind.CHOICE, ("adamw", "sgd")),
    )
    sample = Sample(Method.RANDOM, 4, 0, 4, space)
    drawn = ["optim", "nesterov", "dampening", "lr"]
    assert [d.name for d in parents_first(sample)] == drawn
    assert [d.name for d in in_order(space)] == drawn
    assert [c.name for c in sample.conditions] == ["nesterov", "dampening"]


def test_an_exclude_that_names_no_point_of_a_conditional_grid_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """adamw never has momentum: the rule agrees with each axis but removes nothing."""
    text = GRID.format(name="c") + "  exclude:\n    - {optim: adamw, momentum: 0.9}\n"
    assert problems_of(tmp_path, text, capsys) == [
        "sweeps/c.yaml:16:7: params.exclude[0]: matches no point of the grid"
    ]
    text = text.replace("optim: adamw, momentum: 0.9", "optim: sgd, momentum: 0.9")
    write_manifest(tmp_path, text, "c.yaml")
    assert main(["-C", str(tmp_path), "validate"]) == 0
    sweep = load_manifest(tmp_path / "sweeps" / "c.yaml")
    assert points(sweep.space) == [{"optim": "adamw"}, {"optim": "sgd", "momentum": 0.99}]
