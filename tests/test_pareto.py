"""The Pareto set (`runner.search.pareto`, `runner.analysis.aiming`) against functions whose truth
is known: a brute-force non-dominated filter on random result sets, through the report's JSON
(`pareto`) and `status --best`; the hypervolume against Optuna's; constraints rule points out of
the set, the ranking and "best"."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy
import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.analysis import findings
from runner.backends import ExperimentState
from runner.cli import main
from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Search
from runner.observe.model import Observation, PointResult
from runner.report import best, page
from runner.report import pareto as report_pareto
from runner.search import pareto
from runner.search.ranking import Estimator
from tests.charts import image_checks
from tests.conftest import PROJECT
from tests.helpers import OBJECTIVE_HEAD, write_manifest

GOALS = st.lists(st.sampled_from(list(Goal)), min_size=2, max_size=3)
SMALL = st.integers(min_value=0, max_value=4)  # few distinct values: ties and equal points
METRICS = ("loss", "cost", "time")


def _brute(values: Sequence[Sequence[float] | None], goals: Sequence[Goal]) -> list[int]:
    """The indices no other point dominates: every pair compared, straight from the definition."""

    def better_or_equal(a: float, b: float, goal: Goal) -> bool:
        return a <= b if goal is Goal.MINIMIZE else a >= b

    def beats(a: Sequence[float], b: Sequence[float]) -> bool:
        no_worse = all(better_or_equal(x, y, g) for x, y, g in zip(a, b, goals, strict=True))
        return no_worse and any(x != y for x, y in zip(a, b, strict=True))

    return [
        i
        for i, v in enumerate(values)
        if v is not None and not any(w is not None and beats(w, v) for w in values)
    ]


@settings(max_examples=200, deadline=None)
@given(goals=GOALS, data=st.data())
def test_the_front_is_the_brute_force_non_dominated_filter(
    goals: list[Goal], data: st.DataObject
) -> None:
    rows = data.draw(
        st.lists(
            st.one_of(st.none(), st.lists(SMALL, min_size=len(goals), max_size=len(goals))),
            max_size=25,
        )
    )
    values = [None if r is None else [float(v) for v in r] for r in rows]
    found = pareto.front(list(range(len(values))), lambda i: values[i], goals)
    assert found == _brute(values, goals)


def _observation(
    rows: Sequence[Sequence[object]], constraints: Sequence[Constraint]
) -> Observation:
    """A tpe search whose points have these (state, loss, cost, mem) rows."""
    space = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)),)
    aims = (Aim("loss", Goal.MINIMIZE), Aim("cost", Goal.MAXIMIZE))
    sample = Sample(Method.TPE, 100, 0, 4, space, batch=4)
    points = []
    for i, (state, loss, cost, mem) in enumerate(rows):
        metrics = {k: v for k, v in (("loss", loss), ("cost", cost), ("mem", mem)) if v is not None}
        points.append(
            PointResult(
                "=", f"p{i}", f"k{i}", (("x", i / 100),), ExperimentState(state), metrics=metrics
            )
        )
    search = Search(Adaptive(sample), Aims(aims, tuple(constraints)))
    return Observation("s", "sweeps/s.yaml", True, ("x",), tuple(points), search=search)


ROWS = st.lists(
    st.tuples(
        st.sampled_from(["succeeded", "succeeded", "succeeded", "failed", "running"]),
        st.one_of(st.none(), SMALL),
        st.one_of(st.none(), SMALL),
        st.one_of(st.none(), SMALL),
    ),
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, limited=st.booleans())
def test_the_reports_pareto_list_is_the_brute_force_filter_of_its_feasible_finished_points(
    rows: list[tuple[str, int | None, int | None, int | None]], limited: bool
) -> None:
    """`report --format json`'s `pareto`: the succeeded points with both objectives, that keep
    `mem <= 2`, filtered by brute force; no point outside it is ever the best."""
    limits = (Constraint("mem", Bound.AT_MOST, 2.0),) if limited else ()
    observed = _observation(rows, limits)
    f = findings.find(observed, "loss", Goal.MINIMIZE, Estimator.VARIANCE)
    shown = page.as_json(f)

    def kept(row: tuple[str, int | None, int | None, int | None]) -> list[float] | None:
        state, loss, cost, mem = row
        feasible = not limited or (mem is not None and mem <= 2)
        if state != "succeeded" or loss is None or cost is None or not feasible:
            return None
        return [float(loss), float(cost)]

    truth = _brute([kept(r) for r in rows], [Goal.MINIMIZE, Goal.MAXIMIZE])
    assert shown["pareto"] == [f"p{i}" for i in truth]
    for point in f.ranked:  # ranked, and so "best", only while keeping every constraint
        mem = point.number("mem")
        assert not limited or (mem is not None and mem <= 2)
    lines = best.best([observed], best.OWN, None, "json")
    (sweep,) = json.loads(lines)["sweeps"]
    assert [p["experiment"] for p in sweep["pareto"]] == shown["pareto"]


def test_a_point_that_breaks_a_constraint_is_never_best_and_is_marked_with_why() -> None:
    rows = [("succeeded", 0, 1, 9), ("succeeded", 1, 1, 1), ("succeeded", 3, 0, None)]
    observed = _observation(rows, (Constraint("mem", Bound.AT_MOST, 2.0),))
    f = findings.find(observed, "loss", Goal.MINIMIZE, Estimator.VARIANCE)
    assert f.best is not None and f.best.experiment == "p1"  # p0 is lower, and breaks mem <= 2
    assert f.front is not None
    assert [(p.experiment, why) for p, why in f.front.ruled_out] == [
        ("p0", "mem 9 breaks mem <= 2"),
        ("p2", "no mem"),
    ]
    text = page.markdown(f, {})
    assert "### Ruled out by a constraint (2)" in text and "mem 9 breaks mem <= 2" in text
    assert "3 finished with `loss`, keeping every constraint (2 ruled out by one)" not in text
    assert "1 finished with `loss`, keeping every constraint (2 ruled out by one)" in text
    winner = best.best([observed], "loss", Goal.MINIMIZE, "text")
    assert winner.startswith("s: best loss (min) = 1 at p1")


@pytest.mark.parametrize("count", [1, 5, 30])
def test_the_hypervolume_is_optunas(count: int) -> None:
    points = [[(i * 7919 % 97) / 97, (i * 104729 % 89) / 89] for i in range(count)]
    reference = [1.1, 1.2]
    ours = pareto.hypervolume(points, reference)
    front = [points[i] for i in _brute(points, [Goal.MINIMIZE] * 2)]
    theirs = optuna._hypervolume.compute_hypervolume(numpy.array(front), numpy.array(reference))
    assert ours == pytest.approx(float(theirs))


def test_every_order_of_the_same_points_gives_the_same_set() -> None:
    values = [[1.0, 4.0], [2.0, 2.0], [2.0, 2.0], [4.0, 1.0], [3.0, 3.0]]
    goals = [Goal.MINIMIZE, Goal.MINIMIZE]
    for order in itertools.permutations(range(len(values))):
        found = pareto.front(list(order), lambda i: values[i], goals)
        assert sorted(found) == [0, 1, 2, 3]


ZDT = (
    OBJECTIVE_HEAD.format(name="zdt")
    + """\
    command: [python, -m, runner.examples.objectives, zdt1]
    arguments: [--x1, "{x1}", --x2, "{x2}", --x3, "0", --x4, "0", --x5, "0", --x6, "0"]
params:
  sample:
    method: tpe
    n: 8
    batch: 8
    metric: [f1, f2]
    goal: minimize
    constraints: ["f2 <= 1.2"]
    space:
      x1: {uniform: [0, 1]}
      x2: {uniform: [0, 1]}
"""
)


@pytest.mark.slow
def test_a_two_objective_search_shows_its_pareto_set_in_report_and_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ZDT1 (x3..x6 = 0) on the local backend: the report's table, JSON and PNG, and `status
    --best auto`, all name the same set, which is the brute-force filter of the points."""
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    write_manifest(tmp_path, ZDT, "zdt.yaml")
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0
    assert main(["-C", str(tmp_path), "submit", "sweeps/zdt.yaml"]) == 0
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "report", "--backend", "local", "--format", "json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    points = {p["experiment"]: p["metrics"] for p in sweep["points"]}
    names = list(points)
    values = [[points[n]["f1"], points[n]["f2"]] if points[n]["f2"] <= 1.2 else None for n in names]
    truth = [names[i] for i in _brute(values, [Goal.MINIMIZE] * 2)]
    assert sweep["pareto"] == truth and truth
    assert sweep["front"]["objectives"] == [
        {"metric": "f1", "goal": "minimize"},
        {"metric": "f2", "goal": "minimize"},
    ]
    ruled = [p["experiment"] for p in sweep["front"]["points"] if not p["feasible"]]
    assert ruled == [n for n in names if points[n]["f2"] > 1.2]
    assert sweep["best"]["experiment"] not in ruled

    out = tmp_path / "report"
    assert main(["-C", str(tmp_path), "report", "--backend", "local", "--output", str(out)]) == 0
    text = (out / "zdt.md").read_text()
    assert f"### Pareto set ({len(truth)} of 8 finished)" in text
    assert "![zdt: the Pareto front](zdt-pareto.png)" in text
    assert all(f"`{n}`" in text.split("### Pareto set")[1].split("###")[0] for n in truth)
    image_checks(out / "zdt-pareto.png")
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "status", "--backend", "local", "--best", "auto"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"zdt: the Pareto set by f1 (min), f2 (min): {len(truth)} point(s)"
    assert [line.split()[0] for line in lines[1:]] == truth
    capsys.readouterr()
    assert (
        main(["-C", str(tmp_path), "status", "--best", "f1,f2", "--min", "--format", "json"]) == 0
    )
    (listed,) = json.loads(capsys.readouterr().out)["sweeps"]
    assert [p["experiment"] for p in listed["pareto"]] == truth


def test_the_front_figure_marks_the_points_a_constraint_rules_out() -> None:
    rows = [("succeeded", 0, 1, 9), ("succeeded", 1, 1, 1), ("succeeded", 3, 0, 1)]
    observed = _observation(rows, (Constraint("mem", Bound.AT_MOST, 2.0),))
    f = findings.find(observed, "loss", Goal.MINIMIZE, Estimator.VARIANCE)
    axes = report_pareto.figure(f).axes[0]
    drawn = {c.get_label(): c.get_offsets().tolist() for c in axes.collections if c.get_label()}
    assert drawn["ruled out by a constraint"] == [[0.0, 1.0]]
    assert drawn["feasible"] == [[1.0, 1.0], [3.0, 0.0]]
    assert axes.get_xlabel() == "loss (minimize)" and axes.get_ylabel() == "cost (maximize)"
