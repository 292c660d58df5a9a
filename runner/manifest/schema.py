"""JSON Schema validation of manifests, with errors reworded for people editing YAML."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from runner.core.errors import Problem
from runner.core.marks import Document, KeyPath
from runner.core.values import type_name
from runner.render.argv import CODE_REPO_PATTERN

SCHEMAS = files("runner.schemas")
"""schemas/, which setup.py ships as the package `runner.schemas`: through importlib.resources
it reads the same in a wheel, a zip and an editable install."""
SWEEP_SCHEMA, POLICY_SCHEMA = "sweep.schema.json", "policy.schema.json"
SCHEMA_FILE = SCHEMAS / SWEEP_SCHEMA

_NAME_RULE = "use letters, digits, '.', '_' and '-', starting with a letter or digit"
PATTERN_RULES = {
    "^[A-Za-z0-9][A-Za-z0-9._-]*$": _NAME_RULE,
    "^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$": (
        "expected 'org/name' (each part: letters, digits, '.', '_' and '-')"
    ),
    "^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9*][A-Za-z0-9._*-]*$": (
        "expected 'org/name' or a glob such as 'ai2/*' (each part: letters, digits, '.', '_'"
        " and '-'; '*' in the name matches any text)"
    ),
    "^/": "must be an absolute path (starting with '/')",
    "^[A-Za-z_][A-Za-z0-9_]*$": "use letters, digits and '_', not starting with a digit",
    "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$": (
        "use letters, digits and '_', not starting with a digit; '.' nests (e.g. 'optim.lr')"
    ),
    "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$": (
        "expected a duration such as '30m', '24h' or '1h30m' (units ns, us, ms, s, m, h)"
    ),
    "^[0-9]+(\\.[0-9]+)?\\s?([KkMmGgTtPp][Ii]?[Bb]?|[Bb])?$": (
        "expected a size such as '64GiB', '512MiB', '1TB' or '10.24gb' (units are case-insensitive)"
    ),
    "\\{[^{}]+\\}": "expected a template such as '{name}'",
    CODE_REPO_PATTERN: (
        "expected owner/name (a GitHub repository) or an https:// URL without credentials"
        " (a private repository's token goes in code.secret)"
    ),
}
"""What each pattern of the schema allows, in words; a test checks that none is missing."""

_TYPE_WORDS = {"array": "list", "object": "mapping"}
_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n"}


def schema_document(name: str) -> Any:
    """One of the schemas of schemas/, parsed: the one place that knows where they are kept."""
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@cache
def _validator(name: str = SWEEP_SCHEMA) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema_document(name))


def schema_problems(doc: Document, schema: str = SWEEP_SCHEMA) -> list[Problem]:
    """Every schema violation in the document, one Problem each, deduplicated per field."""
    problems: dict[tuple[str, str], Problem] = {}
    for error in _validator(schema).iter_errors(doc.data):
        for problem in _problems_for(error, doc):
            problems.setdefault((problem.field, problem.message), problem)
    return sorted(problems.values())


def _parts(error: ValidationError) -> tuple[str, Any, Any, dict[str, Any]]:
    """The error's keyword, value, keyword argument and schema (the stubs type them loosely)."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    return str(error.validator), error.instance, error.validator_value, schema


def _problems_for(error: ValidationError, doc: Document) -> list[Problem]:
    path = tuple(error.absolute_path)
    kind, value, _, schema = _parts(error)
    if kind == "additionalProperties":
        known = schema.get("properties", {})
        extras = [k for k in value if k not in known]
        return [_unknown(doc, (*path, extra), sorted(known)) for extra in extras]
    if "propertyNames" in error.relative_schema_path and isinstance(value, str):
        # propertyNames checks each key as a value of its own, and the error's path stops at the
        # mapping: point at the key instead.
        return [_at(doc, (*path, value), _bad_name(error), key=True)]
    names = _exactly_one_of(schema)
    if names and kind in ("oneOf", "minProperties", "maxProperties"):
        if _only_unknown(value, names, schema):
            return []  # the unknown field's own problem says it (`normal:` for `uniform:`)
        message = _exactly_one_message(names, value)
        return [] if message is None else [_at(doc, path, message)]
    if kind == "uniqueItems":
        return [_duplicate_item(doc, path, value)]
    if kind in ("oneOf", "anyOf"):
        branch = _fitting_branch(error)
        if branch:
            return [p for e in branch for p in _problems_for(e, doc)]
    return [_at(doc, path, _describe(error))]


def _fitting_branch(error: ValidationError) -> list[ValidationError]:
    """The errors of the one alternative whose type matches the value, if exactly one does.

    `-1` for "integer or template" fails the integer branch on `minimum`: saying so beats "not
    valid under any alternative". A branch that only fails an undocumented pattern (the template
    alternative, for a plain string) says less than the alternatives' description, so it is skipped.
    """
    branches: dict[int | str, list[ValidationError]] = {}
    for e in error.context or []:
        branches.setdefault(e.relative_schema_path[0], []).append(e)
    fitting = [
        errors
        for errors in branches.values()
        if not any(e.validator == "type" and not e.relative_path for e in errors)
    ]
    if len(fitting) != 1:
        return []
    errors = fitting[0]
    if all(e.validator == "pattern" and "description" not in _parts(e)[3] for e in errors):
        return []
    return errors


def _exactly_one_of(schema: dict[str, Any]) -> list[str]:
    """The field names of an 'exactly one of these' object (an image, a mount), else []."""
    branches = schema.get("oneOf", [])
    if branches and all(set(b) == {"required"} and len(b["required"]) == 1 for b in branches):
        return [b["required"][0] for b in branches]
    if schema.get("maxProperties") == 1 and schema.get("properties"):
        return list(schema["properties"])
    return []


def _only_unknown(instance: object, names: list[str], schema: dict[str, Any]) -> bool:
    """Whether a mapping has none of the alternatives but a field the schema does not know."""
    if not isinstance(instance, dict) or any(n in instance for n in names):
        return False
    return any(key not in schema.get("properties", {}) for key in instance)


def _exactly_one_message(names: list[str], instance: object) -> str | None:
    present = [n for n in names if isinstance(instance, dict) and n in instance]
    if len(present) == 1:  # the count is right: another problem (an unknown field) is the cause
        return None
    found = " and ".join(present) or "none"
    return f"must have exactly one of {', '.join(names)}, got {found}"


def _unknown(doc: Document, path: KeyPath, allowed: list[str]) -> Problem:
    name = str(path[-1])
    hint = difflib.get_close_matches(name, allowed, n=1)
    suggestion = f"did you mean {hint[0]!r}? " if hint else ""
    allowed_text = ", ".join(allowed) if allowed else "none"
    return _at(doc, path, f"unknown field {name!r} ({suggestion}allowed: {allowed_text})", key=True)


def _at(doc: Document, path: tuple[Any, ...], message: str, key: bool = False) -> Problem:
    return Problem.at(doc.marks, doc.source, path, message, key)


def _description(error: ValidationError) -> str:
    """The schema's description as a phrase: 'An axis ...' becomes 'an axis ...'."""
    text = str(_parts(error)[3].get("description", "")).rstrip(".")
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return text


def _bad_name(error: ValidationError) -> str:
    noun = re.sub(r"^(an?|the) ", "", _description(error).split(":")[0]) or "name"
    return f"{_short(_parts(error)[1])} is not a valid {noun}: {_rule(error)}"


def _rule(error: ValidationError) -> str:
    kind, _, pattern, _ = _parts(error)
    if kind != "pattern":
        return error.message
    return PATTERN_RULES.get(pattern) or f"must match {pattern}"


NOT_OFFERED = {
    "cmaes": "CMA-ES is not offered: Optuna's CmaEsSampler keeps its state in its own trials,"
    " which a study rebuilt from the lock each round does not have (measured in rounds of 8, it"
    " did worse than random); use tpe or gp",
}
"""Values people reach for that are refused on purpose, and why."""


def _expected_types(arg: str | Sequence[str]) -> str:
    """'integer' reads 'an integer'; ['string', 'number'] reads 'a string or number'."""
    words = [_TYPE_WORDS.get(name, name) for name in ([arg] if isinstance(arg, str) else arg)]
    text = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    return f"{'an' if text[0] in 'aeiou' else 'a'} {text}"


def _type_message(expected: str | Sequence[str], value: object) -> str:
    got = "null" if value is None else f"{type_name(value)} {_short(value)}"
    message = f"expected {_expected_types(expected)}, got {got}"
    if expected == "boolean" and isinstance(value, str) and value.lower() in _YAML11_BOOLS:
        message += " (YAML 1.2 reads yes, no, on and off as strings: write true or false)"
    return message


def _describe(error: ValidationError) -> str:
    kind, value, arg, _ = _parts(error)
    if kind == "required":
        missing = [name for name in arg if name not in value]
        if len(missing) == 1:
            return f"missing required field {missing[0]!r}"
        return "missing required fields " + ", ".join(repr(m) for m in missing)
    if kind == "type":
        return _type_message(arg, value)
    if kind == "enum":
        allowed = f"{_short(value)} is not allowed (allowed: {', '.join(str(v) for v in arg)})"
        return f"{allowed}; {NOT_OFFERED[value]}" if value in NOT_OFFERED else allowed
    if kind == "const":
        return f"must be {arg!r}, got {_short(value)}"
    if kind == "pattern":
        return f"{_short(value)} is not valid: {_rule(error)}"
    if kind in ("minItems", "minProperties", "minLength") and arg == 1:
        return "must not be empty"
    if kind == "minItems":
        return f"needs at least {arg} items, got {len(value)}"
    if kind == "maxItems":
        return f"allows at most {arg} items, got {len(value)}"
    if kind in ("maxProperties", "oneOf", "anyOf", "minProperties"):
        return f"{_short(value)} is not valid: expected {_description(error) or 'another form'}"
    if kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        return f"must be {word} {arg}, got {_short(value)}"
    if kind == "maxLength":
        return f"is {len(value)} characters long, at most {arg} allowed"
    return error.message


def _duplicate_item(doc: Document, path: tuple[Any, ...], items: list[Any]) -> Problem:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        text = _short(item)
        if text in seen:
            return _at(doc, (*path, i), f"duplicate item {text} (also item {seen[text]})")
        seen.setdefault(text, i)
    return _at(doc, path, "has duplicate items")


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= 60:
        return text
    return text[:57] + ("..." if isinstance(value, dict | list) else '..."')
