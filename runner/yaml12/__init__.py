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

from runner.errors import ManifestError, Problem
from runner.marks import Document, KeyPath, Marks, Pos, field_path
from runner.values import type_name
from runner.yaml12._scalars import (
    MAP,
    SCALAR_TAGS,
    SEQ,
    Invalid,
    resolve_plain,
    show_tag,
)

MAX_NODES = 100_000  # nodes that aliases expand to; a 2 000-line manifest has ~8 000 in all
MAX_DEPTH = 100  # nesting levels, also after alias expansion; keeps recursion well bounded

_LOADER: Callable[[str], Any] = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

_BREAK = re.compile(r"\r\n|\r|\n")
# Line breaks to YAML 1.1 (and pyyaml), ordinary characters to YAML 1.2: refused, not guessed.
_DISPUTED_BREAKS = re.compile("[\x85\u2028\u2029]")


class _Node:
    """A composed node; an alias is a node of its own that points at its anchor's node."""

    __slots__ = ("children", "height", "kind", "open", "plain", "pos", "raw", "size", "target")

    def __init__(self, kind: str, pos: Pos, value: Any = None, raw: str = "") -> None:
        self.kind = kind  # "scalar", "seq", "map" or "alias"
        self.pos = pos
        self.raw = raw
        self.plain = False  # an untagged plain scalar
        self.target: _Node | None = None
        # a scalar's value; a list's items; a mapping's (name, key node, value node) triples
        self.children: Any = value
        self.size = 1  # nodes in this subtree with aliases expanded
        self.height = 0
        self.open = False

    def describe(self) -> str:
        real = self.target or self
        kinds = {"seq": "a list", "map": "a mapping"}
        return kinds.get(real.kind) or type_name(real.children)


class _Frame:
    __slots__ = ("key", "key_name", "node", "path", "seen")

    def __init__(self, node: _Node, path: KeyPath) -> None:
        self.node = node
        self.path = path
        self.key: _Node | None = None  # a mapping's key waiting for its value
        self.key_name = ""
        self.seen: dict[str, Pos] = {}


class _Stop(Exception):
    """Composition cannot go on; the reason is already in the problem list."""


def _pos(event: yaml.Event) -> Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark else (1, 1)


class _Composer:
    """Turns parse events into a tree of ``_Node`` and collects every problem on the way."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self.stack: list[_Frame] = []
        self.anchors: dict[str, _Node] = {}
        self.expanded = 0
        self.documents = 0
        self.root: _Node | None = None

    def problem(self, pos: Pos, path: KeyPath | None, message: str) -> None:
        where = "" if path is None else field_path(path)
        self.problems.append(Problem(self.source, pos[0], pos[1], where, message))

    def stop(self, pos: Pos, path: KeyPath | None, message: str) -> _Stop:
        self.problem(pos, path, message)
        return _Stop()

    def run(self, loader: Any) -> None:
        handlers: dict[type, Callable[[Any], None]] = {
            yaml.ScalarEvent: self.scalar,
            yaml.MappingStartEvent: self.start,
            yaml.SequenceStartEvent: self.start,
            yaml.MappingEndEvent: self.end,
            yaml.SequenceEndEvent: self.end,
            yaml.AliasEvent: self.alias,
            yaml.DocumentStartEvent: self.document,
            yaml.DocumentEndEvent: self.check_root,
        }
        check, get = loader.check_event, loader.get_event
        while check():
            event = get()
            handler = handlers.get(type(event))
            if handler is not None:
                handler(event)
        if not self.documents:
            self.problem((1, 1), None, "file is empty")

    def document(self, event: yaml.DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            raise self.stop(_pos(event), None, "found a second document; one document per file")
        if event.version not in (None, (1, 2)):
            major, minor = event.version
            message = f"%YAML {major}.{minor} is not supported; manifests are read as YAML 1.2"
            self.problem(_pos(event), None, message)

    def check_root(self, _event: yaml.DocumentEndEvent) -> None:
        root = self.root
        if root is None or root.kind == "map":
            return
        if root.plain and root.raw == "":
            self.problem((1, 1), None, "file is empty")
        else:
            message = f"the top level must be a mapping (key: value), got {root.describe()}"
            self.problem(root.pos, (), message)

    def child_path(self) -> KeyPath:
        """Path of the node being composed (computed only when needed: it is not cheap)."""
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if frame.node.kind == "seq":
            return (*frame.path, len(frame.node.children))
        return frame.path if frame.key is None else (*frame.path, frame.key_name)

    def count(self, node: _Node, alias: bool = False) -> None:
        """Bound what aliases expand to (a billion laughs) and the nesting depth.

        Only alias expansions count towards MAX_NODES: a large manifest written out in full
        costs what it weighs, and gets the max_points message if it has too many points."""
        if alias:
            self.expanded += node.size
        if self.expanded > MAX_NODES:
            message = f"aliases expand to more than {MAX_NODES} nodes"
            raise self.stop(node.pos, self.child_path(), message)
        if len(self.stack) + node.height > MAX_DEPTH:
            message = f"nesting is deeper than {MAX_DEPTH} levels"
            raise self.stop(node.pos, self.child_path(), message)

    def scalar(self, event: yaml.ScalarEvent) -> None:
        tag, text = event.tag, event.value
        node = _Node("scalar", _pos(event), text, text)
        try:
            if tag is None:
                if event.implicit[0]:
                    node.plain = True
                    node.children = resolve_plain(text)
            elif tag in SCALAR_TAGS:
                node.children = SCALAR_TAGS[tag](text)
            elif tag != "!":  # the non-specific tag: a string
                self.check_tag(tag, "a scalar", node.pos)
        except Invalid as error:
            self.problem(node.pos, self.child_path(), str(error))
        self.count(node)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
        self.attach(node)

    def start(self, event: yaml.CollectionStartEvent) -> None:
        kind = "seq" if isinstance(event, yaml.SequenceStartEvent) else "map"
        node = _Node(kind, _pos(event), [])
        if event.tag not in (None, "!", SEQ if kind == "seq" else MAP):
            self.check_tag(event.tag, "a list" if kind == "seq" else "a mapping", node.pos)
        node.open = True
        self.count(node)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
        self.stack.append(_Frame(node, self.child_path()))

    def end(self, _event: yaml.CollectionEndEvent) -> None:
        node = self.stack.pop().node
        node.open = False
        self.attach(node)

    def alias(self, event: yaml.AliasEvent) -> None:
        pos, name = _pos(event), event.anchor
        target = self.anchors.get(name or "")
        if target is None:
            self.problem(pos, self.child_path(), f"undefined alias *{name}")
            target = _Node("scalar", pos)
        elif target.open:
            message = f"recursive alias *{name} refers to a node containing it"
            raise self.stop(pos, self.child_path(), message)
        node = _Node("alias", pos)
        node.target, node.size, node.height = target, target.size, target.height
        self.count(node, alias=True)
        self.attach(node)

    def check_tag(self, tag: str, kind: str, pos: Pos) -> None:
        shown = show_tag(tag)
        if tag in SCALAR_TAGS or tag in (SEQ, MAP):
            self.problem(pos, self.child_path(), f"tag {shown} cannot be applied to {kind}")
        else:
            allowed = "!!str, !!int, !!float, !!bool, !!null, !!seq, !!map"
            self.problem(pos, self.child_path(), f"unsupported tag {shown} (allowed: {allowed})")

    def attach(self, node: _Node) -> None:
        if not self.stack:
            self.root = node
            return
        frame = self.stack[-1]
        parent = frame.node
        parent.size += node.size
        if node.height >= parent.height:
            parent.height = node.height + 1
        if parent.kind == "seq":
            parent.children.append(node)
        elif frame.key is None:
            frame.key, frame.key_name = node, self.key_name(frame, node)
        else:
            parent.children.append((frame.key_name, frame.key, node))
            frame.key = None

    def key_name(self, frame: _Frame, key: _Node) -> str:
        real = key.target or key
        if real.kind != "scalar" or not isinstance(real.children, str):
            hint = f' (quote it: "{real.raw}")' if real.kind == "scalar" and real.raw else ""
            self.problem(key.pos, frame.path, f"keys must be strings, got {key.describe()}{hint}")
            return real.raw or "?"
        name: str = real.children
        if name == "<<" and real.plain:
            message = "merge keys (<<) are not supported; write the keys out in full"
            self.problem(key.pos, frame.path, message)
        elif name in frame.seen:
            message = f"duplicate key {name!r} (first defined on line {frame.seen[name][0]})"
            self.problem(key.pos, (*frame.path, name), message)
        else:
            frame.seen[name] = key.pos
        return name


def _build(node: _Node, path: KeyPath, values: dict[KeyPath, Pos], keys: dict[KeyPath, Pos]) -> Any:
    """Plain Python data for ``node``; each alias becomes its own copy."""
    if path:
        values[path] = node.pos
    real = node.target or node
    if real.kind == "seq":
        return [_build(item, (*path, i), values, keys) for i, item in enumerate(real.children)]
    if real.kind == "map":
        out: dict[str, Any] = {}
        for name, key, value in real.children:
            child = (*path, name)
            keys[child] = key.pos
            out[name] = _build(value, child, values, keys)
        return out
    return real.children


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
    composer = _Composer(source)
    try:
        loader = _LOADER(text)
    except yaml.YAMLError as error:  # the pure-Python reader checks characters up front
        raise ManifestError([_syntax_problem(error, text, source)]) from None
    try:
        composer.run(loader)
    except yaml.YAMLError as error:
        composer.problems.append(_syntax_problem(error, text, source))
    except _Stop:
        pass
    finally:
        loader.dispose()
    if composer.problems or composer.root is None:
        raise ManifestError(composer.problems)
    values: dict[KeyPath, Pos] = {}
    keys: dict[KeyPath, Pos] = {}
    data = _build(composer.root, (), values, keys)
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
