"""Every YAML block in the README and the docs pages parses, and every manifest among them
validates (a sampled one once its lock is drawn); the docs site builds strictly."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.cli import main
from tests.conftest import PROJECT
from tests.helpers import DOC_BLOCKS as BLOCKS
from tests.helpers import is_manifest, ready


def test_the_readme_and_the_docs_have_yaml_blocks() -> None:
    assert len(BLOCKS) >= 4
    assert {page.name for page, _, _ in BLOCKS} >= {"manifest.md", "search.md", "cost.md"}


@pytest.mark.parametrize(
    ("page", "index", "text"),
    BLOCKS,
    ids=[f"{page.relative_to(PROJECT)}-{index}" for page, index, _ in BLOCKS],
)
def test_every_yaml_block_parses_and_manifests_validate(
    page: Path,
    index: int,
    text: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    if not is_manifest(text):
        return  # not a manifest (a params fragment, a policy, the pre-commit configuration)
    ready(tmp_path, text, lambda: request.getfixturevalue("fake_beaker"))
    assert main(["-C", str(tmp_path), "validate"]) == 0, capsys.readouterr().err


def test_every_docs_page_is_in_the_site_navigation() -> None:
    nav = (PROJECT / "mkdocs.yml").read_text()
    pages = {p.name for p in (PROJECT / "docs").glob("*.md")}
    assert pages == set(re.findall(r": (\S+\.md)$", nav, re.M))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mkdocs") is None, reason="mkdocs is in the test extra")
@pytest.mark.parametrize("break_it", ["page left out of the nav", "anchor that is not there"])
def test_the_strict_site_build_fails_on_an_omitted_page_or_a_broken_anchor(
    tmp_path: Path, break_it: str
) -> None:
    shutil.copytree(PROJECT / "docs", tmp_path / "docs")
    shutil.copy(PROJECT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    build = ["mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    ok = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    if break_it.startswith("page"):
        (tmp_path / "docs" / "extra.md").write_text("# Extra\n")
    else:
        with (tmp_path / "docs" / "index.md").open("a") as index:
            index.write("\n[gone](gitops.md#no-such-section)\n")
    failed = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0


def _anchors(page: Path) -> set[str]:
    """The heading anchors GitHub (and mkdocs' toc) give a page, for plain ASCII headings."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_link_of_the_readme_into_the_docs_lands() -> None:
    text = (PROJECT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#\s]*)(?:#([^)\s]+))?\)", text)
    assert links
    for path, anchor in links:
        target = PROJECT / path
        assert target.exists(), path
        if anchor:
            assert anchor in _anchors(target), f"{path}#{anchor}"


def _row_references(text: str) -> list[tuple[str, str]]:
    """Each `(row N` of a benchmarks page with the words before it on its line, when they do
    not name the title of row N of the page's table (its second cell)."""
    titles: dict[str, list[str]] = {}
    for number, title in re.findall(r"^\| (\d+) \| ([^|]+) \|", text, re.M):
        titles.setdefault(number, []).append(title.strip().lower())
    wrong = []
    for found in re.finditer(r"\(row (\d+)", text):
        line = text.rfind("\n", 0, found.start()) + 1
        before = text[max(line, found.start() - 80) : found.start()].lower()
        if not any(title in before for title in titles.get(found[1], [])):
            wrong.append((found[0], before.strip()))
    return wrong


def test_the_benchmarks_page_names_its_rows_by_their_numbers() -> None:
    """The restart probe was called row 11; it is row 12 (tests/benchmarks/RESULTS.md too)."""
    assert _row_references((PROJECT / "docs" / "benchmarks.md").read_text(encoding="utf-8")) == []


def test_the_row_check_finds_a_wrong_number() -> None:
    page = "| 7 | `status` of a sweep | ... |\n| 8 | what users do today | ... |\n"
    right = "What users do today (row 8)\n`status` of a sweep (row 7)\n"
    assert _row_references(page + right) == []
    assert _row_references(page + right.replace("(row 7)", "(row 8)")) == [
        ("(row 8", "`status` of a sweep")
    ]


UNRELEASED = [
    ("README.md", "`[all]` for the three"),
    ("README.md", "`gpu_type: [h100]`"),
    ("README.md", "(`report`"),
    ("README.md", "a team's priority allocation"),
    ("docs/results.md", "`sweep-runner report [PATH...]"),
    ("docs/commands.md", "each sweep's results page"),
    ("docs/commands.md", "resolve a cluster selector"),
    ("docs/manifest.md", "**Conditional parameters (`when:`)**"),
    ("docs/manifest.md", "## Clusters by what they are"),
    ("docs/manifest.md", "`beaker.gpu_type: [h100, …]`"),
    ("docs/search.md", "takes `when:` beside its"),
    ("docs/cost.md", "## A team's priority allocation"),
    ("docs/cost.md", "| `priority_allocation` |"),
    ("docs/gitops.md", "priority allocation"),
    ("docs/coming-from-gantry.md", "`--gpu-type h100`"),
    ("docs/coming-from-gantry.md", "`--tag storage:weka`"),
    ("docs/research-repository.md", "`[all]` (the three"),
    ("docs/guarantees.md", "| 7 | `canceled`"),
    ("README.md", "A sweep can also halve"),
    ("README.md", "A search can start from what is known"),
    ("docs/search.md", "## Successive halving: reviewed rungs"),
    ("docs/search.md", "## Known points and a warm start"),
    ("docs/search.md", "## Two objectives and constraints"),
    ("docs/manifest.md", "| `params.fidelity: {param, min, max, eta, metric, goal}` |"),
    ("docs/manifest.md", "| `params.fidelity.min_timeout: 20m` |"),
    ("docs/manifest.md", "| `params.sample.enqueue:"),
    ("docs/manifest.md", "| `params.sample.seed_from:"),
    ("docs/manifest.md", "| `params.sample.constraints:"),
    ("docs/commands.md", "`python -m runner wait [--points"),
    ("docs/manifest.md", "| `params.fidelity.checkpoint:"),
    ("docs/search.md", "### Resuming a promoted point"),
    ("docs/coming-from-gantry.md", "a run that loads another's checkpoint"),
    ("docs/commands.md", "`python -m runner replay [PATH...]`"),
    ("docs/search.md", "## Automatic search: the envelope approved once"),
    ("docs/search.md", "### Asynchronous promotion"),
    ("docs/manifest.md", "| `advance: auto`"),
    ("docs/manifest.md", "| `params.fidelity.promotion: async` |"),
]
"""What `main` has and v0.1.0 lacks, by the words that introduce it on a page: a researcher who
installs the release (as README says) must see there that it is not in it. A release drops the
entries it ships (docs/releasing.md)."""


def _paragraph(text: str, words: str) -> str:
    """The paragraph (or table row) holding `words`; for a heading, the paragraph after it."""
    at = text.index(words)
    start = text.rfind("\n\n", 0, at) + 2
    end = text.find("\n\n", at)
    if text[at:].startswith("#"):
        end = text.find("\n\n", end + 2)
    row = text.rfind("\n", 0, at) + 1
    if text[row:].startswith("|"):
        start, end = row, text.find("\n", at)
    return text[start:end]


@pytest.mark.parametrize(("page", "words"), UNRELEASED)
def test_what_no_release_has_is_marked_unreleased_where_it_is_introduced(
    page: str, words: str
) -> None:
    assert "unreleased" in _paragraph((PROJECT / page).read_text(), words).lower()


def test_the_readme_and_the_set_up_page_list_the_same_unreleased_features() -> None:
    """The two lists of what v0.1.0 lacks said different things (the set-up page's had five)."""

    def lacks(page: str) -> list[str]:
        text = " ".join((PROJECT / page).read_text().split())
        listed = re.search(r"v0\.1\.0 lacks (.+?)(?:\)|\.)", text)
        assert listed is not None, page
        items = re.split(
            r", | and (?=[^,]+$)", listed.group(1).replace("the `[all]` extra", "`[all]`")
        )
        return [i.strip() for i in items]

    readme = lacks("README.md")
    assert readme == lacks("docs/research-repository.md") and len(readme) == 10, readme


def test_the_readme_says_what_is_unreleased_and_how_to_use_it() -> None:
    install = _paragraph((PROJECT / "README.md").read_text(), "1. **Install**")
    assert "v0.1.0 lacks" in install and "install `@main`" in install
    assert "pins the workflows to the commit" in install


def test_the_navigation_names_every_kind_of_search_the_search_page_holds() -> None:
    """Its title was `Sampled search` while the page taught adaptive search and halving too."""
    nav = (PROJECT / "mkdocs.yml").read_text()
    (title,) = re.findall(r'^\s+- "?([^":]+(?::[^":]+)?)"?: search\.md$', nav, re.M)
    page = (PROJECT / "docs" / "search.md").read_text()
    for kind, heading in [
        ("sampled", "# Sampled search"),
        ("adaptive", "## Adaptive search"),
        ("successive halving", "## Successive halving"),
    ]:
        assert heading in page and kind in title.lower(), (kind, title)
