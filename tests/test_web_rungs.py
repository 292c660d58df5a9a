"""The results page of a successive halving and of a constrained two-objective search, both run
for real on the local backend and reported together (`report --output`), in Chromium
(`tests.browser`): the rung as a column, an axis and a filter (each rung ranked, judged and its
best so far on its own, the last rung first), the table of contents, the metric picker, a
point's detail, the ruled-out points with their reason and the Pareto front's titles inside it.

Every number the page shows is compared with one computed here from the sweeps' CSVs (every
point's parameters and metrics, as `report` writes them), not from the page's data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from runner.search import ranking
from tests.browser import Opened, as_shown, chromium, read_csv
from tests.charts import image_checks
from tests.conftest import PROJECT
from tests.helpers import head, write_manifest

HALVING = "sweeps/halving.yaml"
ZDT = "sweeps/zdt.yaml"
LIMIT = 4.0
"""The two-objective search keeps `f2 <= 4`: on ZDT1 over (x1, x2) some points break it."""
SEARCH = (
    head("zdt", draft=True)
    + f"""\
    command: [python, -m, runner.examples.objectives, zdt1]
    arguments: [--x1, "{{x1}}", --x2, "{{x2}}"]
params:
  sample:
    method: tpe
    n: 8
    batch: 8
    metric: [f1, f2]
    constraints: ["f2 <= {LIMIT:g}"]
    space:
      x1: {{uniform: [0, 1]}}
      x2: {{uniform: [0, 1]}}
"""
)
Row = dict[str, str]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed halving made small (9 configurations, 3 rungs: 9, 3 and 1 points, each
    printing a learning curve) run to its end, and 8 points of the search; then one report of
    both."""
    root = tmp_path_factory.mktemp("rungs")
    text = (PROJECT / HALVING).read_text()
    text = text.replace("x2: [0.1, 0.5, 0.9]", "x2: [0.5]").replace("max: 2700", "max: 900")
    text = text.replace("--metric, loss]", '--metric, loss, --report-steps, "3"]')  # curves
    write_manifest(root, text, "halving.yaml")
    write_manifest(root, SEARCH, "zdt.yaml")
    local = ["--backend", "local"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(PROJECT))
        for _ in (1, 2):
            assert main(["-C", str(root), "submit", HALVING, *local]) == 0
            assert main(["-C", str(root), "propose", HALVING, *local]) == 0
        assert main(["-C", str(root), "submit", HALVING, *local]) == 0
        assert main(["-C", str(root), "propose", ZDT, *local]) == 0  # its first round, locked
        assert main(["-C", str(root), "submit", ZDT, *local]) == 0
        out = root / "report"
        assert main(["-C", str(root), "report", *local, "--output", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as context:
        yield context


@pytest.fixture
def opened(browser: Any, report: Path) -> Iterator[Opened]:
    opened = Opened(browser, report / "index.html")
    yield opened
    assert opened.clean(), (opened.errors, opened.requests)
    opened.page.close()


def _loss(row: Row) -> float:
    return float(row["metric.loss"])


def _rung(report: Path, rung: int) -> list[Row]:
    return [r for r in read_csv(report / "halving.csv") if int(r["param.rung"]) == rung]


def _numbers(texts: list[str]) -> list[float]:
    return [float(t) for t in texts]


def _best(opened: Opened, sweep: str) -> float:
    return float(opened.sweep(sweep).locator(".best-line .best-value").inner_text())


def test_a_halvings_page_has_a_rung_column_and_axis_and_opens_on_its_last_rung(
    opened: Opened, report: Path
) -> None:
    halving = opened.sweep("halving")
    ticks = halving.locator('svg.parallel g[data-axis="rung"] text:not(.axis-name)')
    assert ticks.all_text_contents() == ["0 (steps=100)", "1 (steps=300)", "2 (steps=900)"]
    assert halving.locator("select[name=rung]").input_value() == "2"  # the last rung first
    (last,) = _rung(report, 2)
    assert opened.rows("halving") == [last["experiment"]]
    assert opened.column("halving", "rung") == ["2"] and opened.column("halving", "steps") == [
        "900"
    ]
    assert _best(opened, "halving") == as_shown(_loss(last))
    options = halving.locator("select[name=rung] option").all_inner_texts()
    assert options == [
        "rung 2 (steps=900): 1 point(s)",
        "rung 1 (steps=300): 3 point(s)",
        "rung 0 (steps=100): 9 point(s)",
        "every rung: 13 point(s)",
    ]


def test_the_rung_filter_ranks_judges_and_draws_the_best_so_far_of_each_rung_alone(
    opened: Opened, report: Path
) -> None:
    halving = opened.sweep("halving")
    for rung in (0, 1, 2):
        halving.locator("select[name=rung]").select_option(str(rung))
        rows = _rung(report, rung)
        by_loss = sorted(rows, key=_loss)
        assert opened.rows("halving") == [r["experiment"] for r in by_loss]
        assert set(opened.column("halving", "rung")) == {str(rung)}
        assert _numbers(opened.column("halving", "loss")) == [as_shown(_loss(r)) for r in by_loss]
        assert _best(opened, "halving") == as_shown(_loss(by_loss[0]))
        assert halving.locator("p.headline").inner_text() == (
            f"loss (minimize). {len(rows)} point(s) in rung {rung} (steps={100 * 3**rung});"
            f" {len(rows)} finished with loss."
        )
        assert halving.locator("svg.parallel path.line").count() == len(rows)
        curves = halving.locator('section[data-section="learning_curves"] path.curve')
        assert sorted(
            curves.nth(i).get_attribute("data-experiment") for i in range(curves.count())
        ) == (sorted(r["experiment"] for r in rows))
        progress = halving.locator("svg.progress")
        assert progress.locator("circle.dot").count() == len(rows)
        assert float(progress.locator("text.best-so-far").text_content() or "") == as_shown(
            _loss(by_loss[0])
        )
    halving.locator("select[name=rung]").select_option("0")
    rows = _rung(report, 0)  # 9 points: fewer than 20, judged by main effects, x2 never varies
    expected = ranking.main_effects(
        ["x1", "x3"],
        [(float(r["param.x1"]), float(r["param.x3"])) for r in rows],
        [_loss(r) for r in rows],
    )
    for name, share in expected.shares:
        text = halving.locator(f'.importance span.share[data-parameter="{name}"]').inner_text()
        assert text == f"{share:.3f} (9 point(s); main effects)"
    method = halving.locator("p.method").inner_text()
    assert method.startswith("By the share of the metric's variance each parameter's main effect")
    assert "9 point(s) judged, fewer than 20 points are too few for fANOVA's forest" in method
    halving.locator("select[name=rung]").select_option("1")
    assert halving.locator("p.note").first.inner_text() == (
        "Not judged: too few finished points to judge (3; 5 needed for 2 parameter(s))."
    )
    halving.locator("select[name=rung]").select_option("all")
    assert sorted(opened.rows("halving")) == sorted(
        r["experiment"] for r in read_csv(report / "halving.csv")
    )
    assert halving.locator("svg.parallel path.line").count() == 13
    notes = halving.locator("p.note").all_inner_texts()
    assert notes[0].startswith("Not judged: the rungs run at different budgets (steps 100, 300,")
    assert notes[1].startswith("Not drawn: the rungs run at different budgets")
    assert halving.locator("svg.progress").count() == 0


def _kept(report: Path) -> tuple[list[Row], list[Row]]:
    rows = read_csv(report / "zdt.csv")
    kept = [r for r in rows if float(r["metric.f2"]) <= LIMIT]
    return kept, [r for r in rows if r not in kept]


def test_the_metric_picker_redraws_the_table_the_axis_and_the_best_for_the_chosen_metric(
    opened: Opened, report: Path
) -> None:
    kept, out = _kept(report)
    assert kept and out, "the search's 8 points should both keep and break f2 <= 4"
    zdt = opened.sweep("zdt")
    for metric in ("f1", "f2"):
        zdt.locator("select[name=metric]").select_option(metric)
        ranked = sorted(kept, key=lambda r: float(r[f"metric.{metric}"]))
        assert opened.rows("zdt")[: len(ranked)] == [r["experiment"] for r in ranked]
        shown = _numbers(opened.column("zdt", metric))[: len(ranked)]
        assert shown == [as_shown(float(r[f"metric.{metric}"])) for r in ranked]
        assert _best(opened, "zdt") == as_shown(float(ranked[0][f"metric.{metric}"]))
        axis = zdt.locator("svg.parallel g.axis-group").last
        assert axis.locator("text.axis-name").text_content() == metric
        values = [float(r[f"metric.{metric}"]) for r in kept + out]
        ticks = _numbers(axis.locator("text:not(.axis-name)").all_text_contents())
        assert min(ticks) == as_shown(min(values)) and max(ticks) == as_shown(max(values))
    halving = opened.sweep("halving")
    halving.locator("select[name=rung]").select_option("0")
    halving.locator("select[name=metric]").select_option("steps_run")  # 100 at every point
    assert set(opened.column("halving", "steps_run")) == {"100"}
    assert halving.locator("p.note").first.inner_text() == (
        "Not judged: steps_run has the same value at every finished point."
    )
    said = halving.locator(".said").inner_text()
    assert "assumed: the sweep declares no goal for steps_run" in said


def test_a_ruled_out_point_says_why_in_its_row_and_on_its_dashed_line(
    opened: Opened, report: Path
) -> None:
    kept, out = _kept(report)
    zdt = opened.sweep("zdt")
    head_line = zdt.locator("p.headline").inner_text()
    assert f"{len(out)} of them ruled out by a constraint (f2 <= {LIMIT:g})" in head_line
    reasons = dict(zip(opened.rows("zdt"), opened.column("zdt", "ruled out by"), strict=True))
    assert reasons == {
        r["experiment"]: (
            f"f2 {float(r['metric.f2']):g} breaks f2 <= {LIMIT:g}" if r in out else ""
        )
        for r in kept + out
    }
    dashed = zdt.locator("svg.parallel path.line.ruled-out")
    assert sorted(
        dashed.nth(i).get_attribute("data-experiment") for i in range(dashed.count())
    ) == (sorted(r["experiment"] for r in out))
    assert opened.column("zdt", "#")[len(kept) :] == [""] * len(out)  # never ranked


def test_the_table_of_contents_lists_each_sweep_and_takes_the_reader_to_it(
    opened: Opened, report: Path
) -> None:
    page = opened.page
    items = page.locator("nav#contents li")
    assert items.count() == 2
    (last,) = _rung(report, 2)
    best_f1 = min(float(r["metric.f1"]) for r in _kept(report)[0])
    assert items.nth(0).inner_text() == (
        f"halving — {HALVING}: 13 point(s); best loss of rung 2 (steps=900): {as_shown(_loss(last)):g}"
    )
    assert items.nth(1).inner_text() == f"zdt — {ZDT}: 8 point(s); best f1: {as_shown(best_f1):g}"
    items.nth(1).locator("a").click()
    assert page.evaluate("location.hash") == "#sweep-zdt"
    box = opened.sweep("zdt").bounding_box()
    assert box is not None and abs(box["y"]) < 2  # the section at the top of the window
    opened.sweep("zdt").locator("a.up").click()
    top = page.locator("nav#contents").bounding_box()
    assert top is not None and abs(top["y"]) < 30 and page.evaluate("location.hash") == "#contents"


def test_a_click_on_a_row_or_a_line_opens_that_points_detail(opened: Opened, report: Path) -> None:
    halving = opened.sweep("halving")
    halving.locator("select[name=rung]").select_option("1")
    detail = opened.page.locator("aside#detail")
    assert detail.is_hidden()
    everything = {r["experiment"]: r for r in read_csv(report / "halving.csv")}
    for row in _rung(report, 1):
        halving.locator(f'table.points tr:has-text("{row["experiment"]}") td').nth(2).click()
        assert detail.is_visible() and detail.locator("h3").inner_text() == row["experiment"]
        params = _pairs(detail, "params")
        assert params == {k[6:]: v for k, v in row.items() if k.startswith("param.")}
        metrics = _pairs(detail, "metrics")
        assert {k: float(v) for k, v in metrics.items()} == {
            k[7:]: as_shown(float(v)) for k, v in row.items() if k.startswith("metric.")
        }
        facts = _pairs(detail, "facts")
        parent = everything[facts["promoted from"]]  # the same configuration, one rung lower
        assert parent["param.rung"] == "0" and all(
            parent[f"param.{x}"] == row[f"param.{x}"] for x in ("x1", "x2", "x3")
        )
    best = min(_rung(report, 1), key=_loss)
    halving.locator("svg.parallel path.line.best").dispatch_event("click")
    assert detail.locator("h3").inner_text() == best["experiment"]
    assert _pairs(detail, "facts")["rank"] == "1 by loss in rung 1 (steps=300)"
    detail.locator("button.close").click()
    assert detail.is_hidden()


def _pairs(detail: Any, name: str) -> dict[str, str]:
    rows = detail.locator(f"table.{name} tr")
    return {
        rows.nth(i).locator("th").inner_text(): rows.nth(i).locator("td").inner_text()
        for i in range(rows.count())
    }


def test_the_pareto_fronts_axis_titles_are_inside_the_figure(opened: Opened) -> None:
    figure = opened.sweep("zdt").locator('section[data-section="pareto"] svg.pareto')
    frame = figure.bounding_box()
    assert frame is not None
    for title, text in ((".y-name", "f2 (minimize)"), (".x-name", "f1 (minimize)")):
        box = figure.locator(title).bounding_box()
        assert figure.locator(title).text_content() == text and box is not None
        assert box["x"] >= frame["x"] and box["y"] >= frame["y"]
        assert box["x"] + box["width"] <= frame["x"] + frame["width"]
        assert box["y"] + box["height"] <= frame["y"] + frame["height"]


SHOT = PROJECT / "docs" / "results-page.png"


def test_the_page_at_rung_0_is_the_docs_screenshot(
    opened: Opened, report: Path, tmp_path: Path
) -> None:
    """The screenshot docs/results.md shows is this page at rung 0, 1100 x 1000: `UPDATE_GOLDEN=1
    pytest tests/test_web_rungs.py -k screenshot` writes it again (fonts differ between
    machines, so it is made on demand, not compared)."""
    page = opened.page
    page.set_viewport_size({"width": 1100, "height": 1000})
    opened.sweep("halving").locator("select[name=rung]").select_option("0")
    assert opened.sweep("halving").locator("svg.parallel path.line").count() == len(
        _rung(report, 0)
    )
    page.evaluate("window.scrollTo(0, 0)")
    shot = SHOT if os.environ.get("UPDATE_GOLDEN") else tmp_path / "page.png"
    page.screenshot(path=str(shot))
    image_checks(shot, (1000, 1100))
