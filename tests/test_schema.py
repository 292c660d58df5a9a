"""The manifest schema itself: valid 2020-12, closed, documented; the examples pass it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from runner.manifest import load_manifest
from runner.manifest import schema as schema_module
from runner.plan import render_sweep
from runner.yaml12 import load_file

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "schemas" / "sweep.schema.json"
EXAMPLES = sorted((ROOT / "sweeps").glob("*.yaml"))
MODELINE = re.compile(r"# yaml-language-server: \$schema=(\S+)")

# Keywords whose value is one subschema, a list of them, or a name -> subschema mapping.
_ONE = ("items", "additionalProperties", "propertyNames", "not", "contains", "if", "then", "else")
_MANY = ("oneOf", "anyOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "patternProperties")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def subschemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in the document with a JSON-pointer-like location, parents first."""
    if not isinstance(node, dict):
        return
    yield where, node
    for key in _ONE:
        yield from subschemas(node.get(key), f"{where}/{key}")
    for key in _MANY:
        for i, child in enumerate(node.get(key, [])):
            yield from subschemas(child, f"{where}/{key}/{i}")
    for key in _NAMED:
        for name, child in node.get(key, {}).items():
            yield from subschemas(child, f"{where}/{key}/{name}")


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (our schema only has `#/$defs/...` ones)."""
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/$defs/"), ref
    target: dict[str, Any] = schema["$defs"][ref.removeprefix("#/$defs/")]
    return target


def test_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    # check_schema does not assert formats; this also compiles every `pattern` as a regex.
    meta = jsonschema.Draft202012Validator(
        jsonschema.Draft202012Validator.META_SCHEMA,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    meta.validate(schema)


def test_every_ref_resolves_and_every_definition_is_used(schema: dict[str, Any]) -> None:
    refs = {node["$ref"] for _, node in subschemas(schema) if "$ref" in node}
    defined = {f"#/$defs/{name}" for name in schema["$defs"]}
    assert refs <= defined, f"dangling: {sorted(refs - defined)}"
    assert defined <= refs, f"unused: {sorted(defined - refs)}"


def test_every_object_decides_its_unknown_keys(schema: dict[str, Any]) -> None:
    """A record refuses unknown fields; a map (name -> value) constrains both names and values."""
    for where, node in subschemas(schema):
        if node.get("type") != "object" and "properties" not in node:
            continue
        assert "additionalProperties" in node, f"{where}: no additionalProperties decision"
        extra = node["additionalProperties"]
        if extra is False:
            assert node.get("properties"), f"{where}: closed object without properties"
        else:
            assert isinstance(extra, dict), (
                f"{where}: additionalProperties must be false or a schema"
            )
            assert "properties" not in node, f"{where}: a map with fixed properties is ambiguous"
            assert "propertyNames" in node, f"{where}: a map must constrain its key names"


def test_every_property_and_definition_is_described(schema: dict[str, Any]) -> None:
    assert schema.get("description")
    for name, node in schema["$defs"].items():
        assert node.get("description"), f"#/$defs/{name}: no description"
    for where, node in subschemas(schema):
        children = [(f"{where}/properties/{k}", v) for k, v in node.get("properties", {}).items()]
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                children.append((f"{where}/{key}", node[key]))
        for place, child in children:
            described = child.get("description") or resolve(schema, child).get("description")
            assert described, f"{place}: no description"


def test_docs_manifest_names_every_field_of_the_schema(schema: dict[str, Any]) -> None:
    """docs/manifest.md, the manifest reference, names each property (in its YAML example or
    in `code`): a field added to the schema without its documentation fails here."""
    fields = {k for _, node in subschemas(schema) for k in node.get("properties", {})}
    page = (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
    spans = re.findall(r"```yaml\n(.*?)```|`([^`\n]+)`", page, re.S)
    named = {w for block, code in spans for w in re.findall(r"[A-Za-z_]\w*", block or code)}
    assert fields - named == set()
    assert "beaker_token_secret" in fields


def test_every_pattern_has_a_rule_in_words(schema: dict[str, Any]) -> None:
    """Pattern errors print `runner.manifest.schema.PATTERN_RULES`, never a bare regex."""
    patterns = {node["pattern"] for _, node in subschemas(schema) if "pattern" in node}
    assert patterns == set(schema_module.PATTERN_RULES)


def test_the_runner_validates_against_this_schema_file() -> None:
    assert schema_module.SCHEMA_FILE.read_bytes() == SCHEMA_FILE.read_bytes()


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_validates_and_renders(schema: dict[str, Any], path: Path) -> None:
    jsonschema.Draft202012Validator(schema).validate(load_file(path).data)
    sweep = load_manifest(path, f"sweeps/{path.name}")
    assert render_sweep(sweep)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_starts_with_the_schema_modeline(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = MODELINE.fullmatch(first)
    assert match, f"{path.name}: first line must be '# yaml-language-server: $schema=...'"
    target = (path.parent / match[1]).resolve()
    assert target.is_file(), f"{path.name}: {match[1]} does not exist"
    assert target == SCHEMA_FILE
