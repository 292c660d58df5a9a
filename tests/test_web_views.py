"""The results page's figures, pure (runner/report/views.py, shares.py, charts.py's axes): each
view (a metric, a rung) against a sweep whose truth is known.

The halving below has a truth by construction: at rung 0 the loss is x1 (x3 does nothing), at
rung 1 it is x3 (x1 does nothing), rung 2 has three points; so each rung's importance names its
own parameter, each rung's best so far is the running minimum of its own losses, and every rung
at once has neither (their budgets differ)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from runner.analysis import findings
from runner.analysis.findings import Findings
from runner.backends import ExperimentState
from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.ladder import Ladder
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Grid, Halving, Search
from runner.observe.model import Observation, PointResult
from runner.report import charts, page, views, web
from runner.report.shares import method_text, why_none
from runner.search.importance import Judgement, Share
from runner.search.ranking import Estimator

LADDER = Ladder("steps", (100, 200, 400), 2)
CONFIGS = list(itertools.product((1, 2, 3, 4), (1, 2, 3)))  # (x1, x3): 12 at rung 0


def _loss(rung: int, x1: int, x3: int) -> float:
    return [x1 + 0.001 * x3, x3 + 0.001 * x1, 0.1 * x1 + x3][rung]


def _halving(state: ExperimentState = ExperimentState.SUCCEEDED) -> Observation:
    """Rung 0: 12 points; rung 1: the best 6 (x1 1 and 2); rung 2: the best 3 of those."""
    at = {0: CONFIGS, 1: [c for c in CONFIGS if c[0] <= 2]}
    at[2] = sorted(at[1], key=lambda c: _loss(1, *c))[:3]
    points = []
    for rung, configs in at.items():
        for x1, x3 in configs:
            params = (("x1", x1), ("x3", x3), *LADDER.at(rung))
            loss = _loss(rung, x1, x3)
            points.append(
                PointResult(
                    "=",
                    f"h-{rung}-{x1}-{x3}",
                    f"k{rung}{x1}{x3}",
                    params,
                    state,
                    metrics={"loss": loss, "acc": 1 - loss / 10},
                    url=f"https://example.org/{rung}{x1}{x3}",
                )
            )
    return Observation(
        "h",
        "sweeps/h.yaml",
        True,
        ("x1", "x3", "steps", "rung"),
        tuple(points),
        search=Search(Halving(Grid(), LADDER), Aims((Aim("loss", Goal.MINIMIZE),))),
    )


def _find(o: Observation, estimator: Estimator = Estimator.VARIANCE) -> Findings:
    return findings.find(o, "loss", Goal.MINIMIZE, estimator)


def _view(f: Findings, metric: str, rung: str) -> dict[str, Any]:
    (picked,) = [m for m in views.metrics(f) if m.name == metric]
    return views.view(f, picked, rung)


def _rung(o: Observation, rung: int) -> list[PointResult]:
    return [p for p in o.points if dict(p.params)["rung"] == rung]


def test_each_rung_has_its_own_ranking_best_so_far_and_importance_the_last_first() -> None:
    o = _halving()
    f = _find(o)
    assert views.rungs(f) == ["2", "1", "0", views.ALL] and views.default_rung(f) == "2"
    for rung in (0, 1, 2):
        mine = _rung(o, rung)
        view = _view(f, "loss", str(rung))
        by_loss = sorted(mine, key=lambda p: float(p.metrics["loss"]))  # type: ignore[arg-type]
        assert view["ranked"] == [p.key for p in by_loss]
        losses = [float(p.metrics["loss"]) for p in mine]  # type: ignore[arg-type]
        running = list(itertools.accumulate(losses, min))
        assert [s["best"] for s in view["progress"]] == running
        assert [s["x"] for s in view["progress"]] == list(range(1, len(mine) + 1))
    shares = {
        rung: {s["name"]: s["share"] for s in _view(f, "loss", rung)["importance"]["parameters"]}
        for rung in ("0", "1")
    }
    assert shares["0"]["x1"] > 0.95 and shares["0"]["x3"] < 0.05  # rung 0: x1 alone matters
    assert shares["1"]["x3"] > 0.95 and shares["1"]["x1"] < 0.05  # rung 1: x3 alone
    last = _view(f, "loss", "2")["importance"]
    assert last["parameters"] and all(s["share"] is None for s in last["parameters"])
    assert last["note"] == "too few finished points to judge (3; 5 needed for 2 parameter(s))"
    every = _view(f, "loss", views.ALL)
    assert every["progress"] is None and every["importance"] is None
    assert "different budgets (steps 100, 200, 400)" in every["apart"]
    rungs = [dict(p.params)["rung"] for p in o.points]
    ranked_rungs = [rungs[[p.key for p in o.points].index(k)] for k in every["ranked"]]
    assert ranked_rungs == sorted(ranked_rungs, reverse=True)  # the highest rung first


def test_rung_0_by_the_page_metric_is_the_importance_findings_judged() -> None:
    f = _find(_halving())
    zero = _view(f, "loss", "0")["importance"]
    judged: Any = page.as_json(f)["importance"]
    assert zero["parameters"] == judged["parameters"]


def test_the_method_said_is_the_method_that_computed_the_shares() -> None:
    pytest.importorskip("sklearn")
    f = _find(_halving(), Estimator.FANOVA)  # fANOVA asked for; 12 points at rung 0
    said = _view(f, "loss", "0")["importance"]["method"]
    assert said.startswith("By the share of the metric's variance each parameter's main effect")
    assert "12 point(s) judged, fewer than 20 points are too few for fANOVA's forest" in said
    assert "fANOVA (" not in said
    other = _view(f, "acc", "0")["importance"]["method"]  # a second metric: no forest for it
    assert "fANOVA is fitted for the page's metric only (report --metric acc)" in other
    text = page.markdown(f, {})
    assert "By the share of the metric's variance" in text and "By fANOVA" not in text


def _share(name: str, method: Estimator, value: float | None = 0.5) -> Share:
    return Share(name, value, method, 30)


def test_method_text_names_fanova_only_where_it_judged() -> None:
    fanova, variance = Estimator.FANOVA, Estimator.VARIANCE
    forest = Judgement(fanova, (_share("x", fanova), _share("y", fanova)))
    assert method_text(forest).startswith("By fANOVA (Optuna's")
    mixed = Judgement(fanova, (_share("x", fanova), _share("m", variance)))
    assert method_text(mixed).endswith(
        "; m by main effects, where fewer than 20 points are too few for fANOVA's forest."
    )
    asked = Judgement(variance, (_share("x", variance),))
    assert method_text(asked).endswith(
        "install the `[adaptive]` extra and scikit-learn for fANOVA."
    )
    assert method_text(Judgement(fanova, (_share("x", fanova, None),))) == ""


def test_the_reason_none_is_judged_is_the_one_that_holds() -> None:
    none = Judgement(
        Estimator.VARIANCE, (_share("x", Estimator.VARIANCE, None),), "it has one value"
    )
    assert why_none(none, [], 0, "loss", 2) == "no point has finished with loss yet"
    assert (
        why_none(none, [], 3, "loss", 2) == "every finished point breaks a constraint (3 ruled out)"
    )
    assert why_none(none, [1.0] * 4, 0, "loss", 2) == (
        "too few finished points to judge (4; 5 needed for 2 parameter(s))"
    )
    assert (
        why_none(none, [1.0] * 6, 0, "loss", 2) == "loss has the same value at every finished point"
    )
    assert why_none(none, [1.0, 2.0] * 3, 0, "loss", 0) == "no parameter varies in the sweep"
    assert why_none(none, [1.0, 2.0, 3.0] * 2, 0, "loss", 2) == "it has one value"


def test_nothing_finished_says_so_on_the_web_page_and_the_markdown_page() -> None:
    """The judgement alone said "it has one value among these points" of no point at all."""
    f = _find(_halving(ExperimentState.RUNNING))
    for rung in ("0", "1", "2"):
        assert _view(f, "loss", rung)["importance"]["note"] == "no point has finished with loss yet"
    assert "_Not judged: no point has finished with loss yet._" in page.markdown(f, {})
    assert views.default_rung(f) == views.ALL


def _constrained() -> Findings:
    """Loss and cost (both minimised) with `mem <= 2`: p3 breaks it, p5 has no mem."""
    space = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)),)
    aims = (Aim("loss", Goal.MINIMIZE), Aim("cost", Goal.MINIMIZE))
    sample = Sample(Method.TPE, 6, 0, 4, space, batch=6)
    limit = Constraint("mem", Bound.AT_MOST, 2.0)
    rows = [
        (1.0, 5.0, 1),
        (2.0, 3.0, 1),
        (3.0, 4.0, 1),
        (0.5, 0.5, 9),
        (4.0, 1.0, 2),
        (0.1, 9, None),
    ]
    points = tuple(
        PointResult(
            "=",
            f"p{i}",
            f"k{i}",
            (("x", i / 10),),
            ExperimentState.SUCCEEDED,
            metrics={"loss": loss, "cost": cost, "seconds": 10.0 - i}
            | ({} if mem is None else {"mem": mem}),
        )
        for i, (loss, cost, mem) in enumerate(rows)
    )
    search = Search(Adaptive(sample), Aims(aims, (limit,)))
    observed = Observation("two", "sweeps/two.yaml", True, ("x",), points, search=search)
    return findings.find(observed, "loss", Goal.MINIMIZE, Estimator.VARIANCE)


def test_a_ruled_out_point_carries_the_reason_the_front_gives_and_is_never_ranked() -> None:
    f = _constrained()
    data: Any = web.sweep_data(f)
    said = {p["experiment"]: p["ruled_out"] for p in data["points"]}
    assert f.front is not None
    assert {p.experiment: why for p, why in f.front.ruled_out} == {
        "p3": "mem 9 breaks mem <= 2",
        "p5": "no mem",
    }
    assert said == {
        "p0": "",
        "p1": "",
        "p2": "",
        "p3": "mem 9 breaks mem <= 2",
        "p4": "",
        "p5": "no mem",
    }
    view = _view(f, "loss", views.ALL)
    assert view["ranked"] == ["k0", "k1", "k2", "k4"] and view["ruled_out"] == 2
    by_cost = _view(f, "cost", views.ALL)["ranked"]
    assert by_cost == ["k4", "k1", "k2", "k0"]  # the same kept points, by cost
    assert data["constraints"] == ["mem <= 2"]


def test_the_picker_offers_the_objectives_first_each_with_its_goal_and_says_an_assumed_one() -> (
    None
):
    picked = views.metrics(_constrained())
    assert [(m.name, str(m.goal)) for m in picked] == [
        ("loss", "minimize"), ("cost", "minimize"), ("mem", "minimize"), ("seconds", "minimize")
    ]  # fmt: skip
    assert picked[1].said == "the sweep's objective"
    assert picked[3].said.startswith("assumed: the sweep declares no goal for seconds")
    maximize = findings.find(_constrained().results, "loss", Goal.MAXIMIZE, Estimator.VARIANCE)
    assert [str(m.goal) for m in views.metrics(maximize)][:2] == ["maximize", "minimize"]


def test_the_rung_is_an_axis_placed_by_the_ladder_and_each_metric_has_its_own() -> None:
    o = _halving()
    f = _find(o)
    axes, heights = charts.parallel_axes(f, list(o.points))
    assert [a["name"] for a in axes] == ["x1", "x3", "rung"]
    assert axes[2]["ticks"] == [
        [0.0, "0 (steps=100)"],
        [0.5, "1 (steps=200)"],
        [1.0, "2 (steps=400)"],
    ]
    for p in o.points:
        params: Any = dict(p.params)
        assert heights[p.key][2] == params["rung"] / 2
        assert heights[p.key][0] == (params["x1"] - 1) / 3
    loss = charts.metric_axis("loss", list(o.points))
    values = {p.key: float(p.metrics["loss"]) for p in o.points}  # type: ignore[arg-type]
    low, high = min(values.values()), max(values.values())
    assert loss["heights"] == {
        k: pytest.approx((v - low) / (high - low)) for k, v in values.items()
    }
