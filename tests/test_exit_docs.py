"""The exit codes the docs give are the code's (`runner.core.errors.Exit`): the tables of
docs/guarantees.md, the list of docs/commands.md, and each `exits N` a page says (docs/local.md
said a local submit stopped by `cancel` exits 5; it exits 7)."""

from __future__ import annotations

import re

import pytest

from runner.core.errors import Exit, RunResult
from tests.conftest import PROJECT

DOCS = PROJECT / "docs"


def _table(page: str, title: str) -> list[list[str]]:
    """The rows of the first table after `title`, each a list of its cells."""
    text = (DOCS / page).read_text(encoding="utf-8")
    after = text[text.index(title) :]
    rows = re.findall(r"^\|(.+)\|$", after[: after.index("\n\n", after.index("|"))], re.M)
    return [[c.strip() for c in row.split("|")] for row in rows[2:]]


def test_submits_exit_table_gives_each_code_its_result_word() -> None:
    rows = _table("guarantees.md", "**Exit codes of `submit`**")
    for row in rows:
        codes = [int(c) for c in row[0].split("/")]
        word = row[1].strip("`")
        for code in codes:  # `—`: no result, the run ended first (a user error, a bug)
            assert Exit(code).result == (RunResult.ERROR if word == "—" else word), row
    listed = {int(c) for row in rows for c in row[0].split("/")}
    assert listed == {e.value for e in Exit} - {Exit.WOULD_CHANGE, Exit.TIMED_OUT}


def test_waits_exit_table_lists_the_codes_wait_returns() -> None:
    codes = {int(row[0]) for row in _table("guarantees.md", "**Exit codes of `wait`**")}
    assert codes == {Exit.OK, Exit.USER_ERROR, Exit.INCOMPLETE, Exit.RUNS_FAILED, Exit.TIMED_OUT}


@pytest.mark.parametrize("page", ["local.md", "commands.md", "lifecycle.md", "results.md"])
def test_every_exit_code_a_page_names_is_one_of_the_runners(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    said = [int(n) for n in re.findall(r"\bexits? (\d+)\b", text)]
    assert said and set(said) <= {e.value for e in Exit} | {66}, said  # 66: the example trainer's


def test_a_local_submit_that_cancel_stopped_exits_as_the_local_page_says() -> None:
    """The code itself is exercised in tests/test_wait.py (a local submit canceled mid-run)."""
    text = " ".join((DOCS / "local.md").read_text(encoding="utf-8").split())
    cancel = text[text.index("**Cancel.**") :]
    (code,) = re.findall(r"reports them `not-started` and exits (\d+) \(`(\w+)`\)", cancel)
    assert (int(code[0]), code[1]) == (Exit.CANCELED, Exit.CANCELED.result)
