"""Composition: pyyaml's parse events to nodes (aliases kept as shared nodes, expanded size and
depth counted, so a "billion laughs" file stops at ``MAX_NODES`` without being materialised), then
plain Python data with the source position of every key and value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from runner.core.errors import Problem
from runner.core.marks import KeyPath, Pos, field_path
from runner.core.values import type_name
from runner.yaml12._scalars import MAP, SCALAR_TAGS, SEQ, Invalid, resolve_plain, show_tag

MAX_NODES = 100_000  # nodes that aliases expand to; a 2 000-line manifest has ~8 000 in all
MAX_DEPTH = 100  # nesting levels, also after alias expansion; keeps recursion well bounded


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


class StopComposing(Exception):
    """Composition cannot go on; the reason is already in the problem list."""


def _pos(event: yaml.Event) -> Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark else (1, 1)


class Composer:
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

    def stop(self, pos: Pos, path: KeyPath | None, message: str) -> StopComposing:
        self.problem(pos, path, message)
        return StopComposing()

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


def build(node: _Node, path: KeyPath, values: dict[KeyPath, Pos], keys: dict[KeyPath, Pos]) -> Any:
    """Plain Python data for ``node``; each alias becomes its own copy."""
    if path:
        values[path] = node.pos
    real = node.target or node
    if real.kind == "seq":
        return [build(item, (*path, i), values, keys) for i, item in enumerate(real.children)]
    if real.kind == "map":
        out: dict[str, Any] = {}
        for name, key, value in real.children:
            child = (*path, name)
            keys[child] = key.pos
            out[name] = build(value, child, values, keys)
        return out
    return real.children
