"""JSON Schema validation of manifests, with errors reworded for people editing YAML."""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from runner.errors import Problem
from runner.yaml12 import Document, field_path

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "sweep.schema.json"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    path = SCHEMA_PATH
    if not path.exists():  # installed as a package: the schema ships inside it
        path = Path(__file__).resolve().parent / "sweep.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_problems(doc: Document) -> list[Problem]:
    """Every schema violation in the document, one Problem each, deduplicated per field."""
    problems: dict[tuple[str, str], Problem] = {}
    for error in _validator().iter_errors(doc.data):
        for problem in _problems_for(error, doc):
            problems.setdefault((problem.field, problem.message), problem)
    return sorted(problems.values())


def _problems_for(error: ValidationError, doc: Document) -> list[Problem]:
    path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in error.schema.get("properties", {})]
        return [_unknown(doc, (*path, extra), allowed) for extra in extras]
    if kind == "propertyNames":
        bad = error.instance if isinstance(error.instance, str) else None
        return [_at(doc, path, _describe(error))] if bad is None else [
            _at(doc, (*path, bad), f"invalid name {bad!r}: {_description(error)}", key=True)
        ]
    if kind in ("oneOf", "anyOf") and error.context:
        # A branch whose type matched failed deeper inside: its errors say more than "no branch fit".
        deeper = [
            e
            for e in error.context
            if e.relative_path or (e.validator not in ("type", "required") and "description" in e.schema)
        ]
        if deeper:
            return [p for e in deeper for p in _problems_for(e, doc)]
    return [_at(doc, path, _describe(error))]


def _unknown(doc: Document, path: tuple[str | int, ...], allowed: list[str]) -> Problem:
    name = str(path[-1])
    hint = difflib.get_close_matches(name, allowed, n=1)
    suggestion = f"did you mean {hint[0]!r}? " if hint else ""
    allowed_text = ", ".join(allowed) if allowed else "none"
    return _at(doc, path, f"unknown field {name!r} ({suggestion}allowed: {allowed_text})", key=True)


def _at(doc: Document, path: tuple[Any, ...], message: str, key: bool = False) -> Problem:
    mark = doc.marks.key(path) if key else doc.marks.value(path)
    return Problem(doc.source, mark.line, mark.col, field_path(path), message)


def _description(error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    return str(schema.get("description", "")).rstrip(".")


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {"str": "string", "int": "integer", "float": "number", "dict": "mapping", "list": "list"}.get(
        type(value).__name__, type(value).__name__
    )


def _describe(error: ValidationError) -> str:
    kind, value, arg = error.validator, error.instance, error.validator_value
    if kind == "required":
        missing = [name for name in arg if name not in value]
        return f"missing required field {missing[0]!r}" if len(missing) == 1 else (
            "missing required fields " + ", ".join(repr(m) for m in missing)
        )
    if kind == "type":
        expected = " or ".join(arg) if isinstance(arg, list) else arg
        return f"expected {expected}, got {_type_name(value)} {_short(value)}".rstrip()
    if kind == "enum":
        return f"{_short(value)} is not allowed (allowed: {', '.join(str(v) for v in arg)})"
    if kind == "const":
        return f"must be {arg!r}, got {_short(value)}"
    if kind == "pattern":
        return f"{_short(value)} is not valid: {_description(error) or 'must match ' + arg}"
    if kind in ("minItems", "minProperties") and arg == 1:
        return "must not be empty"
    if kind == "minItems":
        return f"needs at least {arg} items, got {len(value)}"
    if kind == "maxItems":
        return f"allows at most {arg} items, got {len(value)}"
    if kind in ("maxProperties", "oneOf", "anyOf", "minProperties"):
        return f"{_short(value)} is not valid: expected {_description(error).lower() or 'another form'}"
    if kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        return f"must be {word} {arg}, got {_short(value)}"
    if kind == "maxLength":
        return f"is {len(value)} characters long, at most {arg} allowed"
    if kind == "minLength":
        return "must not be empty"
    if kind == "uniqueItems":
        return "has duplicate items"
    return error.message


def _short(value: object) -> str:
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + '..."'
