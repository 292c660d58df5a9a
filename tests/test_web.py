"""`report --output DIR`'s web page (runner/report/web.py): one self-contained `index.html`.

The page's data and its extension points are checked in Python; the page itself in Chromium
(`tests.browser`): opened from a report of a sweep run for real on the local backend, it logs no
error, asks for nothing outside its own file, draws one line per finished point, and a scripted
drag along an axis leaves exactly the points in that range in the table. A successive halving's
page, its rungs, the table of contents and the metric picker: tests/test_web_rungs.py; the
views' figures, pure: tests/test_web_views.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.analysis import findings
from runner.backends import ExperimentState
from runner.cli import main
from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Search
from runner.core.values import Value
from runner.observe.model import Absent, Observation, PointResult
from runner.report import web
from runner.search.ranking import Estimator
from tests.browser import Opened, chromium, page_data, read_csv
from tests.charts import image_checks
from tests.conftest import PROJECT
from tests.helpers import head

SWEEP = (
    head("web", draft=True)
    + """\
    command: [python, -m, runner.examples.objectives, bowl, --metric, loss, --report-steps, "3"]
    arguments: [--x1, "{x}", --x2, "{y}"]
params:
  grid:
    x: [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    y: [1, 2]
"""
)


# -- the page's data, pure ------------------------------------------------------------------


def _point(i: int, x: Value, state: str = "succeeded", loss: float | None = None) -> PointResult:
    metrics: dict[str, object] = {
        "loss": float("nan") if loss is None else loss,
        "note": "</script>",
    }
    try:
        kind: Any = ExperimentState(state)
    except ValueError:
        kind = Absent(state)
    return PointResult(
        "=",
        f"p-{i}",
        f"k{i}",
        (("x", x), ("y", i % 2)),
        kind,
        0,
        1.0,
        metrics,
        f"https://beaker.org/ex/{i}",
    )


def _findings(points: list[PointResult]) -> findings.Findings:
    results = Observation("s", "sweeps/s.yaml", False, ("x", "y"), tuple(points))
    return findings.find(results, "loss", Goal.MINIMIZE)


SMALL = [_point(i, i / 10, loss=(i / 10 - 0.3) ** 2) for i in range(6)] + [
    _point(6, "</script><script>alert(1)</script>", "failed"),
    _point(7, 0.9, "not submitted"),
]


def test_the_page_is_one_file_that_asks_nothing_of_the_network() -> None:
    html = web.page([_findings(SMALL)])
    assert f'content="{web.POLICY}"' in html and "default-src 'none'" in web.POLICY
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert html.count("</script>") == 2  # the data's and the script's: a value cannot end one


def test_the_data_has_every_point_and_heights_only_for_finished_ones() -> None:
    (sweep,) = page_data(web.page([_findings(SMALL)]))["sweeps"]
    assert [p["experiment"] for p in sweep["points"]] == [f"p-{i}" for i in range(8)]
    heights = {p["experiment"]: p["heights"] for p in sweep["points"]}
    assert heights["p-3"] == [pytest.approx(0.6), 1.0]  # x, y = 1
    assert sweep["metric_axes"]["loss"]["heights"]["k3"] == 0.0  # the lowest loss
    assert heights["p-6"] is None and heights["p-7"] is None  # failed, not submitted: no line
    assert [a["name"] for a in sweep["axes"]] == ["x", "y"]
    assert [m["name"] for m in sweep["metrics"]] == ["loss"]  # `note` is text: not offered
    (view,) = sweep["views"]["loss"].values()
    assert view["ranked"][0] == "k3" and sweep["points"][3]["url"] == "https://beaker.org/ex/3"
    assert sweep["points"][6]["params"]["x"] == "</script><script>alert(1)</script>"
    assert {"learning_curves", "pareto"}.isdisjoint(sweep)  # the page renders without them
    names = [p["name"] for p in view["importance"]["parameters"]]
    assert sorted(names) == ["x", "y"]


def test_a_section_plugs_in_with_its_data_and_its_renderer() -> None:
    """What issue 39's learning curves and issue 40's Pareto front do: a key of the sweep's
    data, filled from the findings (None: the sweep has none, and no key), and a renderer."""
    curves = web.Section(
        "learning_curves",
        lambda f: {p.experiment: [[0, 1.0], [10, 0.5]] for p in f.ranked} if f.ranked else None,
        'SweepPage.section("learning_curves", "Learning curves", (el, sweep, data) => {});',
    )
    empty = _findings([_point(0, 0.1, "failed")])
    html = web.page([_findings(SMALL), empty], (curves,))
    full, none = page_data(html)["sweeps"]
    assert full["learning_curves"]["p-0"] == [[0, 1.0], [10, 0.5]] and "learning_curves" not in none
    assert 'SweepPage.section("learning_curves"' in html


# -- in Chromium --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6 x 2 grid run for real on the local backend, and its report's directory."""
    root = tmp_path_factory.mktemp("web")
    (root / "sweeps").mkdir()
    (root / "sweeps" / "web.yaml").write_text(SWEEP)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(PROJECT))
        assert main(["-C", str(root), "submit", "sweeps/web.yaml", "--backend", "local"]) == 0
        out = root / "report"
        argv = ["-C", str(root), "report", "--backend", "local"]
        argv += ["--metric", "loss", "--goal", "minimize"]
        assert main([*argv, "--output", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module (a fresh profile), driven by Playwright."""
    with chromium() as context:
        yield context


def _csv(report: Path) -> list[dict[str, str]]:
    return read_csv(report / "web.csv")


def test_the_page_opens_with_no_error_no_request_and_a_line_per_finished_point(
    browser: Any, report: Path
) -> None:
    opened = Opened(browser, report / "index.html")
    assert opened.errors == [] and opened.requests == [opened.url]
    points = _csv(report)
    assert opened.page.locator("svg.parallel path.line").count() == len(points) == 12
    assert opened.page.locator("svg.parallel path.line.best").count() == 1
    assert sorted(opened.rows()) == sorted(r["experiment"] for r in points)
    links = opened.page.locator("table.points tbody a")
    urls = {links.nth(i).inner_text(): links.nth(i).get_attribute("href") for i in range(12)}
    assert urls == {r["experiment"]: r["url"] for r in points}  # each point links to its run
    bars = opened.page.locator(".importance .bar")
    assert bars.count() == 2 and opened.page.locator("svg.progress path.step").count() == 1
    curves = opened.page.locator('section[data-section="learning_curves"] svg.curves path.curve')
    assert curves.count() == 12 and opened.page.locator("svg.curves path.curve.best").count() == 1
    best = opened.page.locator("svg.curves path.curve.best").get_attribute("data-experiment")
    assert best == min(points, key=lambda r: float(r["metric.loss"]))["experiment"]  # red, on top
    opened.page.close()


def test_brushing_an_axis_leaves_exactly_the_points_in_range_in_the_table(
    browser: Any, report: Path
) -> None:
    """Drag along x from 70 % of its height down to 30 %: x is linear from 0 to 0.5, so the
    points with x from 0.15 to 0.35 stay (x = 0.2 and 0.3, with both y), and only they."""
    opened = Opened(browser, report / "index.html")
    page = opened.page
    _drag(page, "x", 0.7, 0.3)
    expected = {r["experiment"] for r in _csv(report) if 0.15 <= float(r["param.x"]) <= 0.35}
    assert len(expected) == 4 and set(opened.rows()) == expected
    assert page.locator("svg.parallel path.line:not(.dim)").count() == 4
    page.locator("table.points th", has_text="loss").click()  # sorted by loss, then reversed
    losses = [
        float(t) for t in page.locator("table.points tbody td:nth-child(4)").all_inner_texts()
    ]
    assert losses == sorted(losses)
    page.locator("table.points th", has_text="loss").click()
    again = [float(t) for t in page.locator("table.points tbody td:nth-child(4)").all_inner_texts()]
    assert again == sorted(losses, reverse=True)
    _drag(page, "x", 0.9, 0.9)  # a click on the axis clears its range
    assert len(opened.rows()) == 12
    assert opened.errors == [] and opened.requests == [opened.url]
    page.close()


def _drag(page: Any, name: str, start: float, end: float) -> None:
    """A mouse drag along axis `name`, between two heights (0: its bottom, 1: its top)."""
    axis = page.locator(f'svg.parallel g[data-axis="{name}"] line.axis')
    axis.scroll_into_view_if_needed()
    box = axis.bounding_box()
    assert box is not None
    x = box["x"] + box["width"] / 2

    def y(h: float) -> float:
        return float(box["y"] + (1 - h) * box["height"])

    page.mouse.move(x, y(start))
    page.mouse.down()
    page.mouse.move(x, (y(start) + y(end)) / 2, steps=4)
    page.mouse.move(x, y(end), steps=4)
    page.mouse.up()


def test_the_docs_show_a_screenshot_of_the_page() -> None:
    shot = PROJECT / "docs" / "results-page.png"
    assert "](results-page.png)" in (PROJECT / "docs" / "results.md").read_text()
    image_checks(shot, (1000, 1100))


def _two_objectives() -> findings.Findings:
    """Five points of a search by loss (min) and cost (min) with `mem <= 2`: p0, p1 and p4 are
    the Pareto set, p2 is dominated, p3 breaks the constraint."""
    space = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)),)
    aims = (Aim("loss", Goal.MINIMIZE), Aim("cost", Goal.MINIMIZE))
    sample = Sample(Method.TPE, 5, 0, 4, space, batch=5)
    search = Search(Adaptive(sample), Aims(aims, (Constraint("mem", Bound.AT_MOST, 2.0),)))
    rows = [(1.0, 5.0, 1), (2.0, 3.0, 1), (3.0, 4.0, 1), (0.5, 0.5, 9), (4.0, 1.0, 2)]
    points = tuple(
        PointResult(
            "=",
            f"p{i}",
            f"k{i}",
            (("x", i / 10),),
            ExperimentState.SUCCEEDED,
            metrics={"loss": loss, "cost": cost, "mem": mem},
            url=f"https://example.org/p{i}",
        )
        for i, (loss, cost, mem) in enumerate(rows)
    )
    observed = Observation("two", "sweeps/two.yaml", True, ("x",), points, search=search)
    return findings.find(observed, "loss", Goal.MINIMIZE, Estimator.VARIANCE)


def test_the_pareto_section_carries_the_front_of_a_two_objective_sweep() -> None:
    front: Any = web.sweep_data(_two_objectives(), web.SECTIONS)["pareto"]
    assert front["pareto"] == ["p0", "p1", "p4"]
    assert [p["feasible"] for p in front["points"]] == [True, True, True, False, True]
    assert "pareto" not in web.sweep_data(_findings(SMALL), web.SECTIONS)  # one objective


def test_the_page_draws_the_pareto_front_with_the_ruled_out_points_crossed(
    browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "index.html"
    path.write_text(web.page([_two_objectives()]), encoding="utf-8")
    opened = Opened(browser, path)
    assert opened.errors == [] and opened.requests == [opened.url]
    section = opened.page.locator('section[data-section="pareto"] svg.pareto')
    marked = section.locator("circle.point.pareto")
    assert sorted(
        marked.nth(i).get_attribute("data-experiment") for i in range(marked.count())
    ) == [
        "p0",
        "p1",
        "p4",
    ]
    assert section.locator("circle.point:not(.pareto)").count() == 1  # p2, dominated
    crossed = section.locator("path.point.ruled-out")
    assert crossed.count() == 1 and crossed.get_attribute("data-experiment") == "p3"
    assert "mem 9 breaks mem <= 2" in (crossed.locator("title").text_content() or "")
    assert section.locator("path.front").count() == 1
    opened.page.close()


def test_a_sweep_with_nothing_finished_and_one_with_no_metric_say_why(
    browser: Any, tmp_path: Path
) -> None:
    """The importance said "it has one value among these points" of no point at all."""
    running = _findings([_point(i, i / 10, "running") for i in range(6)])
    nothing = Observation(
        "none", "sweeps/none.yaml", False, ("x", "y"), (_point(0, 0.1, "failed"),)
    )
    path = tmp_path / "index.html"
    path.write_text(
        web.page([running, findings.find(nothing, "", Goal.MINIMIZE)]), encoding="utf-8"
    )
    opened = Opened(browser, path)
    assert opened.clean(), opened.errors
    first = opened.sweep("s")
    assert first.locator(".best-line").inner_text() == "No point has finished with loss yet."
    notes = first.locator("p.note").all_inner_texts()
    assert notes == [
        "Not judged: no point has finished with loss yet.",
        "Not drawn: no point has finished with loss yet.",
    ]
    assert first.locator("svg.parallel").count() == 0 and len(opened.rows("s")) == 6
    second = opened.sweep("none")
    assert second.locator("p.headline").inner_text() == "No numeric metric yet. 1 point(s)."
    assert second.locator("select[name=metric]").count() == 0 and opened.rows("none") == ["p-0"]
    opened.page.close()
