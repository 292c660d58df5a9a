"""Plots: the chart a sweep's results make, its Mermaid block checked against xychart-beta's
grammar, and the PNG and SVG files opened and looked at."""

from __future__ import annotations

import math
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from matplotlib import image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import rgb_to_hsv

from runner.analysis import findings
from runner.backends import ExperimentState
from runner.cli import main
from runner.core.aims import Goal
from runner.core.errors import RunnerError
from runner.core.values import Value
from runner.observe.model import Observation, PointResult
from runner.report import charts, plot
from runner.search.ranking import best
from tests.charts import check_xychart, image_checks


@pytest.mark.parametrize(
    "bad",
    [
        "xychart\n line [1, 2]",
        'xychart-beta\n x-axis "lr" [a, b]\n line [1e-05, 2]',
        'xychart-beta\n x-axis "lr" [a, b]\n line [1, 2, 3]',
        'xychart-beta\n x-axis "l"r" [a]\n line [1]',
        "xychart-beta\n legend [1]\n line [1]",
        'xychart-beta\n title "t"',
    ],
)
def test_the_grammar_check_rejects_what_mermaid_rejects(bad: str) -> None:
    with pytest.raises(AssertionError):
        check_xychart(bad)


# -- charts ----------------------------------------------------------------------------------


def point(i: int, lr: float, nodes: int, loss: object) -> PointResult:
    metrics = {} if loss is None else {"loss": loss}
    return PointResult(
        "=",
        f"s-{i}",
        f"k{i}",
        (("lr", lr), ("nodes", nodes)),
        ExperimentState.SUCCEEDED,
        0,
        1.0,
        metrics,
    )


def results(points: list[PointResult]) -> Observation:
    return Observation("s", "sweeps/s.yaml", False, ("lr", "nodes"), tuple(points))


GRID = results(
    [
        point(0, 0.01, 1, 0.5),
        point(1, 0.001, 1, 0.9),
        point(2, 0.01, 2, 0.4),
        point(3, 0.001, 2, 0.8),
        point(4, 0.1, 1, None),
        point(5, 0.1, 2, "nan-as-text"),
    ]
)


def test_chart_puts_the_varying_parameter_on_x_and_splits_series_by_the_other() -> None:
    c = charts.chart(GRID, "loss")
    assert c.x == "lr" and c.xs == [0.001, 0.01]
    assert [(s.label, s.points) for s in c.series] == [
        ("nodes=1", ((0.001, 0.9), (0.01, 0.5))),
        ("nodes=2", ((0.001, 0.8), (0.01, 0.4))),
    ]
    by_nodes = charts.chart(GRID, "loss", by="nodes")
    assert by_nodes.x == "nodes" and [s.label for s in by_nodes.series] == ["lr=0.01", "lr=0.001"]


def test_chart_refuses_a_metric_or_parameter_it_does_not_have() -> None:
    with pytest.raises(
        RunnerError, match=re.escape("no point has a numeric metric 'acc' (metrics: loss)")
    ):
        charts.chart(GRID, "acc")
    with pytest.raises(RunnerError, match="no parameter 'wd' to plot against"):
        charts.chart(GRID, "loss", by="wd")


def test_mermaid_is_one_chart_with_a_line_per_series_when_complete() -> None:
    text = charts.mermaid(charts.chart(GRID, "loss"))
    (block,) = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    check_xychart(block)
    assert 'x-axis "lr" ["0.001", "0.01"]' in block
    assert "line [0.9, 0.5]" in block and "line [0.8, 0.4]" in block
    assert "Lines, in order: `nodes=1`, `nodes=2`." in text


def test_mermaid_draws_a_chart_per_series_when_one_has_a_gap_and_never_an_exponent() -> None:
    gappy = results([point(0, 1e-5, 1, 2e-7), point(1, 1e-4, 1, 0.5), point(2, 1e-4, 2, 0.25)])
    blocks = re.findall(r"```mermaid\n(.*?)```", charts.mermaid(charts.chart(gappy, "loss")), re.S)
    assert len(blocks) == 2
    for block in blocks:
        check_xychart(block)
    assert '["1e-05", "0.0001"]' in blocks[0] and "line [0.0000002, 0.5]" in blocks[0]


@pytest.mark.slow
def test_png_opens_has_its_size_and_is_not_blank(tmp_path: Path) -> None:
    plot.save(charts.chart(GRID, "loss"), tmp_path / "loss.png")
    image_checks(tmp_path / "loss.png")


def test_svg_is_an_svg_with_the_lines_and_no_date(tmp_path: Path) -> None:
    plot.save(charts.chart(GRID, "loss"), tmp_path / "a.svg")
    plot.save(charts.chart(GRID, "loss"), tmp_path / "b.svg")
    root = ET.parse(tmp_path / "a.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("width"), root.get("height")) == ("576pt", "360pt")  # 8 × 5 inches
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_without_matplotlib_a_file_plot_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(RunnerError) as caught:
        plot.save(charts.chart(GRID, "loss"), tmp_path / "loss.png")
    assert str(caught.value) == (
        "plotting to a file needs matplotlib: pip install 'beaker-sweep-runner[plot]'"
    )
    assert not (tmp_path / "loss.png").exists()


def test_best_picks_the_lowest_or_highest_and_the_first_on_a_tie() -> None:
    tied = results([point(0, 0.1, 1, 0.5), point(1, 0.2, 1, 0.4), point(2, 0.3, 1, 0.4)])

    def loss(p: PointResult) -> float | None:
        return p.number("loss")

    assert best(tied.points, loss, Goal.MINIMIZE) == tied.points[1]
    assert best(tied.points, loss, Goal.MAXIMIZE) == tied.points[0]
    assert best(tied.points, lambda p: p.number("acc"), Goal.MAXIMIZE) is None


def test_contradictory_plot_and_best_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sweeps").mkdir()
    for argv, message in [
        (["--best", "loss"], "--best needs --min or --max"),
        (["--plot", "loss"], "--plot draws into --output FILE"),
        (["--plot", "loss", "--output", "x.gif"], "--output must end in .png, .svg, .md or .mmd"),
        (["--by", "lr"], "--by and --output go with --plot METRIC"),
    ]:
        assert main(["-C", str(tmp_path), "status", *argv]) == 1
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_sampled_points_whose_values_never_repeat_are_a_scatter_not_lines(tmp_path: Path) -> None:
    """Each sampled point is its own combination of the other parameters: one series per point
    would draw no line at all, so every point goes into one scatter."""
    sampled = Observation(
        "s",
        "sweeps/s.yaml",
        False,
        ("lr", "wd"),
        tuple(
            PointResult(
                "=",
                f"s-{i}",
                f"k{i}",
                (("lr", lr), ("wd", wd)),
                ExperimentState.SUCCEEDED,
                0,
                1.0,
                {"loss": y},
            )
            for i, (lr, wd, y) in enumerate(
                [(3e-4, 0.01, 0.7), (1e-5, 0.07, 0.9), (8e-5, 0.03, 0.5)]
            )
        ),
    )
    c = charts.chart(sampled, "loss", by="lr")
    assert c.scatter and [s.points for s in c.series] == [((1e-5, 0.9), (8e-5, 0.5), (3e-4, 0.7))]
    text = charts.mermaid(c)
    check_xychart(text.split("```mermaid\n")[1].split("```")[0])
    assert "    bar [0.9, 0.5, 0.7]" in text and "line" not in text
    assert not charts.chart(GRID, "loss").scatter  # a grid's series still draw lines
    png = tmp_path / "scatter.png"
    plot.save(c, png)
    image_checks(png)


# -- readable figures: each checked on a figure whose truth is known ------------------------


def _findings(rows: Sequence[Mapping[str, Value]], losses: list[float]) -> findings.Findings:
    points = tuple(
        PointResult(
            "=", f"s-{i}", f"k{i}", tuple(r.items()), ExperimentState.SUCCEEDED, 0, 1.0, {"loss": y}
        )
        for i, (r, y) in enumerate(zip(rows, losses, strict=True))
    )
    axes = tuple(dict.fromkeys(k for r in rows for k in r))
    return findings.find(
        Observation("s", "sweeps/s.yaml", False, axes, points), "loss", Goal.MINIMIZE
    )


LR_GRID = [{"lr": lr, "seed": seed} for lr in (0.001, 0.003, 0.01) for seed in (1, 2)]


def test_a_grid_lr_axis_is_logarithmic_by_the_rule_status_plot_uses() -> None:
    """0.001, 0.003 and 0.01 were drawn linear on the parallel coordinates (0.001 and 0.003 on
    top of each other) while `status --plot` drew the same axis logarithmic."""
    f = _findings(LR_GRID, [1.0, 1.0, 0.5, 0.5, 0.8, 0.8])
    assert f.log == ("lr",)  # seed (1, 2) spans less than a factor of ten
    heights, _ = charts.axis_positions([r["lr"] for r in LR_GRID], "lr" in f.log)
    assert heights[::2] == pytest.approx([0, math.log(3) / math.log(10), 1])
    figure = plot.chart_figure(charts.chart(f.results, "loss", by="lr"))
    assert figure.axes[0].get_xscale() == "log"
    assert not findings.logarithmic([1, 2, 9]) and findings.logarithmic([1, 10])
    assert not findings.logarithmic([-1, 10])


def test_the_best_point_is_red_and_drawn_last_over_every_other_line(tmp_path: Path) -> None:
    """Every point has the same parameters: their lines lie on one another up to the metric's
    axis, so what shows between the parameter axes is the line drawn last, which is the best's:
    red, where the colour map's best was the same yellow as every near-best line."""
    rows = [{"a": 1, "b": 2, "c": 3} for _ in range(12)] + [{"a": 0, "b": 0, "c": 0}]
    f = _findings(rows, [1.0 + i / 10 for i in range(12)] + [0.1])
    figure = plot.parallel_figure(f)
    lines = [line for line in figure.axes[0].get_lines() if len(line.get_xdata()) > 2]
    assert lines[-1].get_color() == plot.BEST and lines[-1].get_linewidth() == 3
    assert all(line.get_color() != plot.BEST for line in lines[:-1])
    f = _findings(rows[:12], [1.0 + i / 10 for i in range(12)])  # all on one line
    plot.parallel(f, tmp_path / "p.png")
    image_checks(tmp_path / "p.png")
    hsv = rgb_to_hsv(image.imread(tmp_path / "p.png")[:, :260, :3])  # left of the metric axis
    coloured = (hsv[..., 1] > 0.3) & (hsv[..., 2] > 0.2)  # not white, grey or black
    red = (hsv[..., 0] < 0.03) | (hsv[..., 0] > 0.97)  # blended with white or black, still red
    assert coloured.sum() > 200 and (red | ~coloured).all()


def test_an_axis_labels_no_two_values_over_each_other() -> None:
    """10, 11, 12 and 13 sit within a twentieth of an axis whose top is 50: their labels were
    drawn over one another; they are thinned, the ends kept, and no two rendered labels meet."""
    rows = [{"width": w, "opt": o} for w in (10, 11, 12, 13, 50) for o in ("adamw", "sgd")]
    f = _findings(rows, [float(i) for i in range(10)])
    figure = plot.parallel_figure(f)
    renderer = FigureCanvasAgg(figure).get_renderer()
    labels = [t for t in figure.axes[0].texts]
    shown = [t.get_text() for t in labels]
    assert "10" in shown and "50" in shown and "12" not in shown
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    ticks = [(0.0, "a"), (0.01, "b"), (0.02, "c"), (0.5, "d"), (0.97, "e"), (1.0, "f")]
    assert charts.thinned(ticks, 0.06) == [(0.0, "a"), (0.5, "d"), (1.0, "f")]


def test_counts_get_integer_ticks_never_a_half() -> None:
    """Three rounds were ticked 0, 0.5, 1, 1.5, 2; two node counts 1, 1.2, 1.4, ..., 2."""
    f = _findings([{"x": i} for i in range(3)], [3.0, 2.0, 2.5])
    for figure in (plot.progress_figure(f), plot.chart_figure(charts.chart(GRID, "loss", "nodes"))):
        ticks = figure.axes[0].get_xticks()
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
