"""Malformed manifests and the exact problems `validate` must print for each.

Every file in tests/corpus/ starts with the schema modeline, then one `# expect:` line per problem
in the order the tool prints them, with the shown path written as `{path}`. Optional lines:
`# file: NAME` copies the manifest under that name (to test file-name checks), and
`# xfail: REASON` marks a known bug elsewhere: the expect lines say what the tool *should* print.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.cli import main
from runner.core import space
from runner.plan import rendering

CORPUS = Path(__file__).resolve().parent / "corpus"
MODELINE = "# yaml-language-server: $schema=../../schemas/sweep.schema.json"
_DIRECTIVE = re.compile(r"# (expect|file|xfail): (.*)")
_POSITION = re.compile(r"\{path\}:(\d+):(\d+): ")


@dataclass(frozen=True)
class Case:
    path: Path
    expected: tuple[str, ...]
    file_name: str
    xfail: str | None


def read_case(path: Path) -> Case:
    """The directives at the top of a corpus file (every comment line after the modeline)."""
    expected: list[str] = []
    file_name, xfail = path.name, None
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        match = _DIRECTIVE.fullmatch(line)
        if match is None:
            break
        kind, value = match.groups()
        if kind == "expect":
            expected.append(value)
        elif kind == "file":
            file_name = value
        else:
            xfail = value
    return Case(path, tuple(expected), file_name, xfail)


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


def _cases() -> Iterator[object]:
    for path in corpus_files():
        case = read_case(path)
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        yield pytest.param(case, id=path.stem, marks=marks)


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    shown: str
    """The path `validate` shows for the manifest."""


def validate(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Outcome:
    """Run `validate` in-process on a copy of the case inside a fresh repository root."""
    root = tmp_path / "repo"
    (root / "sweeps").mkdir(parents=True)
    target = root / "sweeps" / case.file_name
    shutil.copyfile(case.path, target)
    code = main(["-C", str(root), "validate", str(target)])
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err, f"sweeps/{case.file_name}")


@pytest.mark.parametrize("case", list(_cases()))
def test_corpus_file(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcome = validate(case, tmp_path, capsys)
    assert "Traceback" not in outcome.err
    assert "unexpected error" not in outcome.err
    expected = [line.replace("{path}", outcome.shown) for line in case.expected]
    assert outcome.err.splitlines() == expected
    assert outcome.code == 1
    assert outcome.out == ""


def test_corpus_is_large_and_every_file_states_its_problems() -> None:
    files = corpus_files()
    assert len(files) >= 40
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[:1]
        assert first == [MODELINE], f"{path.name}: must start with the schema modeline"
        case = read_case(path)
        assert case.expected, f"{path.name}: no '# expect:' line"
        positions = []
        for line in case.expected:
            match = _POSITION.match(line)
            assert match, f"{path.name}: expect line must start with {{path}}:LINE:COL: {line!r}"
            positions.append((int(match[1]), int(match[2])))
        assert positions == sorted(positions), f"{path.name}: expect lines are not in print order"


def test_a_huge_grid_is_refused_from_axis_lengths_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """10^12 points: counting them by expansion would never finish, so it must not be tried."""

    def refuse(*_: object) -> None:
        pytest.fail("the points of an over-sized sweep were expanded")

    for module in (space, rendering):
        monkeypatch.setattr(module, "iter_points", refuse)
    case = read_case(CORPUS / "max-points-huge-grid.yaml")
    outcome = validate(case, tmp_path, capsys)
    assert outcome.code == 1
    assert "the sweep has 1000000000000 points" in outcome.err
    assert outcome.err.splitlines() == [
        line.replace("{path}", outcome.shown) for line in case.expected
    ]
