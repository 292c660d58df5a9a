"""How a results page says an importance judgement: the method that computed the shares (not
the one asked for: a population below `FLOOR` points is judged by main effects even when fANOVA
was asked), and, when no parameter has a share, the reason that holds for the points judged
(nothing finished, every finished point ruled out, too few points) before the judgement's own."""

from __future__ import annotations

from collections.abc import Sequence

from runner.search.adaptive import FANOVA_TREES
from runner.search.importance import FLOOR, Judgement, Share
from runner.search.ranking import Estimator, min_points

METHODS = {
    Estimator.FANOVA: f"fANOVA (Optuna's `FanovaImportanceEvaluator`, {FANOVA_TREES} trees, seed 0: a"
    " random forest fitted to the finished points, each parameter's share of the metric's"
    " variance)",
    Estimator.VARIANCE: "the share of the metric's variance each parameter's main effect explains"
    " (epsilon squared: the variance between the means of its values, less what chance gives"
    " that many groups), normalised to sum to 1",
}
NAMES = {Estimator.FANOVA: "fANOVA", Estimator.VARIANCE: "main effects"}
"""A method's short name, as the page's bars say it."""
NO_EXTRA = "install the `[adaptive]` extra and scikit-learn for fANOVA"
"""Why main effects judged a metric fANOVA was never asked for: it is not installed."""


def method_text(judgement: Judgement, why_variance: str = NO_EXTRA) -> str:
    """The method that computed the judged shares, and why it is not fANOVA when it is not;
    empty when no share was judged. `why_variance`: why main effects were asked for."""
    judged = judgement.judged
    if not judged:
        return ""
    used = {s.method for s in judged}
    if used == {Estimator.FANOVA}:
        return f"By {METHODS[Estimator.FANOVA]}."
    if judgement.method is Estimator.VARIANCE:
        return f"By {METHODS[Estimator.VARIANCE]}: {why_variance}."
    small = f"fewer than {FLOOR} points are too few for fANOVA's forest"
    if used == {Estimator.VARIANCE}:
        return f"By {METHODS[Estimator.VARIANCE]}: {judged[0].points} point(s) judged, {small}."
    fallen = ", ".join(s.name for s in judged if s.method is Estimator.VARIANCE)
    return f"By {METHODS[Estimator.FANOVA]}; {fallen} by main effects, where {small}."


def why_none(
    judgement: Judgement, values: Sequence[float], ruled_out: int, metric: str, swept: int
) -> str:
    """Why no parameter has a share, for the points judged: `values`, the metric at each one
    that keeps every constraint; `ruled_out` by one; `swept`: the parameters that vary in the
    sweep. Empty when some parameter has a share."""
    if judgement.judged:
        return ""
    if not values and ruled_out:
        return f"every finished point breaks a constraint ({ruled_out} ruled out)"
    if not values:
        return f"no point has finished with {metric} yet"
    if not swept:
        return "no parameter varies in the sweep"
    needed = min_points(swept)
    if len(values) < needed:
        return (
            f"too few finished points to judge ({len(values)}; {needed} needed for"
            f" {swept} parameter(s))"
        )
    if len(set(values)) == 1:
        return f"{metric} has the same value at every finished point"
    return judgement.note


def share_json(s: Share) -> dict[str, object]:
    """One parameter's importance: its share (None: not judged), how and among which points."""
    return {
        "name": s.name,
        "share": s.value,
        "method": str(s.method),
        "points": s.points,
        "condition": s.condition,
        "note": s.note,
    }
