"""Plots: the chart a sweep's results make, its Mermaid block checked against xychart-beta's
grammar, and the PNG and SVG files opened and looked at."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from runner.backends import ExperimentState
from runner.cli import main
from runner.core.errors import RunnerError
from runner.manifest.sample import Goal
from runner.observe.model import Observation, PointResult
from runner.report import plot
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
    c = plot.chart(GRID, "loss")
    assert c.x == "lr" and c.xs == [0.001, 0.01]
    assert [(s.label, s.points) for s in c.series] == [
        ("nodes=1", ((0.001, 0.9), (0.01, 0.5))),
        ("nodes=2", ((0.001, 0.8), (0.01, 0.4))),
    ]
    by_nodes = plot.chart(GRID, "loss", by="nodes")
    assert by_nodes.x == "nodes" and [s.label for s in by_nodes.series] == ["lr=0.01", "lr=0.001"]


def test_chart_refuses_a_metric_or_parameter_it_does_not_have() -> None:
    with pytest.raises(
        RunnerError, match=re.escape("no point has a numeric metric 'acc' (metrics: loss)")
    ):
        plot.chart(GRID, "acc")
    with pytest.raises(RunnerError, match="no parameter 'wd' to plot against"):
        plot.chart(GRID, "loss", by="wd")


def test_mermaid_is_one_chart_with_a_line_per_series_when_complete() -> None:
    text = plot.mermaid(plot.chart(GRID, "loss"))
    (block,) = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    check_xychart(block)
    assert 'x-axis "lr" ["0.001", "0.01"]' in block
    assert "line [0.9, 0.5]" in block and "line [0.8, 0.4]" in block
    assert "Lines, in order: `nodes=1`, `nodes=2`." in text


def test_mermaid_draws_a_chart_per_series_when_one_has_a_gap_and_never_an_exponent() -> None:
    gappy = results([point(0, 1e-5, 1, 2e-7), point(1, 1e-4, 1, 0.5), point(2, 1e-4, 2, 0.25)])
    blocks = re.findall(r"```mermaid\n(.*?)```", plot.mermaid(plot.chart(gappy, "loss")), re.S)
    assert len(blocks) == 2
    for block in blocks:
        check_xychart(block)
    assert '["1e-05", "0.0001"]' in blocks[0] and "line [0.0000002, 0.5]" in blocks[0]


@pytest.mark.slow
def test_png_opens_has_its_size_and_is_not_blank(tmp_path: Path) -> None:
    plot.save(plot.chart(GRID, "loss"), tmp_path / "loss.png")
    image_checks(tmp_path / "loss.png")


def test_svg_is_an_svg_with_the_lines_and_no_date(tmp_path: Path) -> None:
    plot.save(plot.chart(GRID, "loss"), tmp_path / "a.svg")
    plot.save(plot.chart(GRID, "loss"), tmp_path / "b.svg")
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
        plot.save(plot.chart(GRID, "loss"), tmp_path / "loss.png")
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
    c = plot.chart(sampled, "loss", by="lr")
    assert c.scatter and [s.points for s in c.series] == [((1e-5, 0.9), (8e-5, 0.5), (3e-4, 0.7))]
    text = plot.mermaid(c)
    check_xychart(text.split("```mermaid\n")[1].split("```")[0])
    assert "    bar [0.9, 0.5, 0.7]" in text and "line" not in text
    assert not plot.chart(GRID, "loss").scatter  # a grid's series still draw lines
    png = tmp_path / "scatter.png"
    plot.save(c, png)
    image_checks(png)
