"""Load one YAML manifest with YAML 1.2 core-schema meaning, keeping source positions.

PyYAML resolves plain scalars by YAML 1.1 rules (``yes`` is true, ``1e-4`` is a string, ``<<``
merges, a repeated key silently wins). We take only pyyaml's parse *events* (from libyaml when
it is available), compose them ourselves and resolve scalars with the YAML 1.2 core schema.

Composition keeps aliases as shared nodes and counts the nodes the document would have with every
alias expanded, so a "billion laughs" file stops at ``MAX_NODES`` without being materialised.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable
from typing import Any

import yaml

from runner.core.errors import ManifestError, Problem
from runner.core.marks import Document, KeyPath, Marks, Pos
from runner.yaml12._compose import MAX_DEPTH as MAX_DEPTH
from runner.yaml12._compose import MAX_NODES as MAX_NODES
from runner.yaml12._compose import Composer, StopComposing, build
from runner.yaml12._scalars import Invalid, resolve_plain

_LOADER: Callable[[str], Any] = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

_BREAK = re.compile(r"\r\n|\r|\n")
# Line breaks to YAML 1.1 (and pyyaml), ordinary characters to YAML 1.2: refused, not guessed.
_DISPUTED_BREAKS = re.compile("[\x85\u2028\u2029]")


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``text[index]``, counting lines the way the parser does."""
    breaks = list(_BREAK.finditer(text, 0, index))
    return len(breaks) + 1, index - (breaks[-1].end() if breaks else 0) + 1


def _disputed_breaks(text: str, source: str) -> list[Problem]:
    problems = []
    for found in _DISPUTED_BREAKS.finditer(text):
        message = f"character U+{ord(found[0]):04X} is a line break in YAML 1.1 but not in 1.2"
        line, col = _position(text, found.start())
        problems.append(Problem(source, line, col, "", f"{message}; remove it or escape it"))
    return problems


def _line_indent_has_tab(text: str, index: int) -> bool:
    lines = text.split("\n")
    if not 0 <= index < len(lines):
        return False
    line = lines[index]
    return "\t" in line[: len(line) - len(line.lstrip(" \t"))]


def _syntax_problem(error: yaml.YAMLError, text: str, source: str) -> Problem:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = error.problem or error.context or "invalid YAML"
        if mark and _line_indent_has_tab(text, mark.line):
            return Problem(
                source, line, 1, "", "tab character in indentation; YAML indents with spaces only"
            )
        context_mark = error.context_mark
        if context_mark and "quoted scalar" in (error.context or ""):
            # An unclosed quote is found at the end of the file; point where it opens instead.
            quote = (context_mark.line + 1, context_mark.column + 1)
            return Problem(source, *quote, "", f"{message} (a quote opened here is never closed)")
        if error.problem and error.context and context_mark and context_mark.line + 1 != line:
            message += f" ({error.context} started on line {context_mark.line + 1})"
        return Problem(source, line, col, "", message)
    if isinstance(error, yaml.reader.ReaderError):
        # libyaml reports a byte offset, pure pyyaml a character index: find the character instead.
        index = max(text.find(chr(error.character)), 0) if isinstance(error.character, int) else 0
        message = f"character U+{error.character:04X} is not allowed in YAML"
        return Problem(source, *_position(text, index), "", message)
    return Problem(source, 1, 1, "", str(error).splitlines()[0])


def load(text: str, source: str) -> Document:
    """Parse ``text`` as one YAML 1.2 mapping; raise ``ManifestError`` listing every problem."""
    disputed = _disputed_breaks(text, source)
    if disputed:
        raise ManifestError(disputed)
    composer = Composer(source)
    try:
        loader = _LOADER(text)
    except yaml.YAMLError as error:  # the pure-Python reader checks characters up front
        raise ManifestError([_syntax_problem(error, text, source)]) from None
    try:
        composer.run(loader)
    except yaml.YAMLError as error:
        composer.problems.append(_syntax_problem(error, text, source))
    except StopComposing:
        pass
    finally:
        loader.dispose()
    if composer.problems or composer.root is None:
        raise ManifestError(composer.problems)
    values: dict[KeyPath, Pos] = {}
    keys: dict[KeyPath, Pos] = {}
    data = build(composer.root, (), values, keys)
    return Document(data, Marks(values, keys), source)


def load_file(path: pathlib.Path, display: str | None = None) -> Document:
    """Load the manifest at ``path``; problems name it as ``display`` (default: the path)."""
    source = display if display is not None else str(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        problem = Problem(source, 1, 1, "", f"cannot read file: {error.strerror or error}")
        raise ManifestError([problem]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        col = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        problem = Problem(source, line, col, "", "file is not valid UTF-8")
        raise ManifestError([problem]) from None
    return load(text, source)


class _Dumper(yaml.SafeDumper):
    """Quotes every string that YAML 1.2 would read as something else (`1e-4`, `0o17`)."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        try:
            plain_is_string = isinstance(resolve_plain(data), str)
        except Invalid:  # an unreadable plain scalar is safest quoted
            plain_is_string = False
        if not plain_is_string:
            return self.represent_scalar("tag:yaml.org,2002:str", data, style="'")
        return super().represent_str(data)


_Dumper.add_representer(str, _Dumper.represent_str)


def dump(data: Any) -> str:
    """Block-style YAML with sorted keys; every scalar reads back the same under YAML 1.1 and 1.2."""
    return str(
        yaml.dump(
            data,
            Dumper=_Dumper,
            sort_keys=True,
            default_flow_style=False,
            allow_unicode=True,
            width=100,
        )
    )
