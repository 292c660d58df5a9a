"""The results page in a real browser, for the tests of `report --output`'s `index.html`: Debian's
Chromium (which `.ci/run` installs), driven by Playwright's Python package with the machine's
binary (nothing is downloaded), and a page opened with what it logged and asked for.

Where Chromium is missing (a developer's machine) the browser tests skip, saying so; in CI (`CI`
set when this module loads: the tests' own fixture clears it for each test) they fail."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
IN_CI = bool(os.environ.get("CI"))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """One Chromium (a fresh profile) as a Playwright browser context; skips (fails in CI)
    without it."""
    if not CHROMIUM.exists():
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (CI installs it)")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    with tempfile.TemporaryDirectory() as profile, sync.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            viewport={"width": 1200, "height": 900},
        )
        yield context
        context.close()


class Opened:
    """The page, with what it logged and asked for."""

    def __init__(self, context: Any, path: Path) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready=true]")

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)

    def clean(self) -> bool:
        """No error logged, nothing asked for but the file itself."""
        return self.errors == [] and self.requests == [self.url]

    def sweep(self, name: str) -> Any:
        """A sweep's section, as a locator."""
        return self.page.locator(f'section.sweep[data-sweep="{name}"]')

    def rows(self, sweep: str | None = None) -> list[str]:
        """The experiments of the points table's rows, in order."""
        scope = self.sweep(sweep) if sweep else self.page
        return list(scope.locator("table.points tbody tr td:nth-child(2)").all_inner_texts())

    def column(self, sweep: str, header: str) -> list[str]:
        """The cells of one column of a sweep's points table, in the rows' order."""
        table = self.sweep(sweep).locator("table.points")
        headers = table.locator("thead th").all_inner_texts()
        at = [h.rstrip(" ▲▼") for h in headers].index(header) + 1
        return list(table.locator(f"tbody tr td:nth-child({at})").all_inner_texts())


def page_data(html: str) -> Any:
    """The page's JSON document, refusing NaN and the infinities (not JSON)."""
    found = re.search(r'<script type="application/json" id="sweep-data">(.*?)</script>', html, re.S)
    assert found, "no page data"

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(found.group(1), parse_constant=refuse)


def read_csv(path: Path) -> list[dict[str, str]]:
    """A sweep's CSV (`report --output` writes one per sweep): every point."""
    return list(csv.DictReader(io.StringIO(path.read_text())))


def as_shown(value: float) -> float:
    """A number rounded as the page shows it (4 significant digits), for comparing."""
    return value if float(value).is_integer() else float(f"{value:.4g}")
