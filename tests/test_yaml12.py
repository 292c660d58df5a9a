from __future__ import annotations

import math
import pathlib
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner import yaml12
from runner.core.errors import ManifestError
from runner.core.marks import Mark, field_path
from runner.yaml12 import MAX_DEPTH, MAX_NODES, load, load_file

HAS_LIBYAML = hasattr(yaml, "CBaseLoader")


@pytest.fixture(params=["libyaml", "pure"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each test with libyaml's parser and with pyyaml's pure-Python fallback."""
    if request.param == "libyaml":
        if not HAS_LIBYAML:
            pytest.skip("pyyaml was built without libyaml")
        monkeypatch.setattr(yaml12, "_LOADER", yaml.CBaseLoader)
    else:
        monkeypatch.setattr(yaml12, "_LOADER", yaml.BaseLoader)
    return str(request.param)


pytestmark = pytest.mark.usefixtures("parser")
# The fixture only swaps a module constant, which is the same for every generated example.
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


def problems(text: str) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load(text, "m.yaml")
    return [str(problem) for problem in info.value.problems]


def value(text: str) -> Any:
    return load(f"v: {text}\n", "m.yaml").data["v"]


# --- field_path ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((), "(root)"),
        (("tasks",), "tasks"),
        (("tasks", 0, "image"), "tasks[0].image"),
        (("a", 1, 2, "b"), "a[1][2].b"),
        ((0, "a"), "[0].a"),
        (("env", "beaker.org/x"), 'env["beaker.org/x"]'),
        (("a b",), '["a b"]'),
    ],
)
def test_field_path(path: tuple[str | int, ...], expected: str) -> None:
    assert field_path(path) == expected


# --- scalar resolution --------------------------------------------------------------------------

CORE_CASES: list[tuple[str, Any]] = [
    ("1e-4", 1e-4),
    ("3e6", 3e6),
    ("1.5", 1.5),
    ("-2.5E+3", -2500.0),
    ("1.", 1.0),
    (".5", 0.5),
    ("+1.5e3", 1500.0),
    (".inf", math.inf),
    ("-.inf", -math.inf),
    ("+.INF", math.inf),
    ("12", 12),
    ("-12", -12),
    ("+12", 12),
    ("017", 17),  # core schema: [-+]?[0-9]+ is decimal, a leading zero does not mean octal
    ("0o17", 15),
    ("0x1F", 31),
    ("0", 0),
    ("1_000", "1_000"),  # underscores are YAML 1.1 only
    ("0X1F", "0X1F"),
    ("0O17", "0O17"),
    ("-0x1F", "-0x1F"),
    ("0b101", "0b101"),
    ("1:30", "1:30"),  # YAML 1.1 sexagesimal
    ("1e", "1e"),
    ("inf", "inf"),
    ("nan", "nan"),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("False", False),
    ("FALSE", False),
    ("tRUE", "tRUE"),
    ("yes", "yes"),
    ("no", "no"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("n", "n"),
    ("Yes", "Yes"),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("~", None),
    ("", None),
    ("nULL", "nULL"),
    ("2024-01-01", "2024-01-01"),
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
    ("=", "="),
    ("hello world", "hello world"),
]


@pytest.mark.parametrize(("text", "expected"), CORE_CASES)
def test_plain_scalars_follow_the_core_schema(text: str, expected: Any) -> None:
    got = value(text)
    assert type(got) is type(expected)
    assert got == expected


def test_nan() -> None:
    for text in (".nan", ".NaN", ".NAN"):
        got = value(text)
        assert isinstance(got, float)
        assert math.isnan(got)


@pytest.mark.parametrize("text", ["'1e-4'", '"true"', "'yes'", '"null"', "''", "'12'", '"~"'])
def test_quoted_scalars_are_strings(text: str) -> None:
    assert value(text) == text[1:-1]


def test_block_scalars_are_strings() -> None:
    assert load("a: |\n  12\nb: >-\n  true\n", "m").data == {"a": "12\n", "b": "true"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!!str 12", "12"),
        ("!!str true", "true"),
        ("!!str", ""),
        ("! 12", "12"),  # the non-specific tag makes a scalar a string
        ("!!int '12'", 12),
        ("!!int 0x10", 16),
        ("!!float 1", 1.0),
        ("!!float '2.5'", 2.5),
        ("!!float .inf", math.inf),
        ("!!bool 'true'", True),
        ("!!null ''", None),
        ("!!null ~", None),
        ("!!seq [1, a]", [1, "a"]),
        ("!!map {a: 1}", {"a": 1}),
        ("! [1]", [1]),
    ],
)
def test_standard_tags_are_honoured(text: str, expected: Any) -> None:
    got = value(text)
    assert type(got) is type(expected)
    assert got == expected


ALLOWED = "(allowed: !!str, !!int, !!float, !!bool, !!null, !!seq, !!map)"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("!!python/object:os.system x", "!!python/object:os.system"),
        ("!!python/name:os.system ''", "!!python/name:os.system"),
        ("!custom x", "!custom"),
        ("!!timestamp 2024-01-01", "!!timestamp"),
        ("!!binary aGk=", "!!binary"),
        ("!!set {a: null}", "!!set"),
        ("!!omap [a: 1]", "!!omap"),
        ("!<tag:example.com,2024:x> 1", "!<tag:example.com,2024:x>"),
    ],
)
def test_other_tags_are_errors(text: str, shown: str) -> None:
    assert problems(f"v: {text}\n") == [f"m.yaml:1:4: v: unsupported tag {shown} {ALLOWED}"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("!!int abc", "'abc' is not a valid !!int"),
        ("!!int 1.5", "'1.5' is not a valid !!int"),
        ("!!int 1_000", "'1_000' is not a valid !!int"),
        ("!!float abc", "'abc' is not a valid !!float"),
        ("!!bool yes", "'yes' is not a valid !!bool (use true or false)"),
        ("!!null 0", "'0' is not a valid !!null"),
        ("!!int [1]", "tag !!int cannot be applied to a list"),
        ("!!str {a: 1}", "tag !!str cannot be applied to a mapping"),
        ("!!map [1]", "tag !!map cannot be applied to a list"),
        ("!!seq x", "tag !!seq cannot be applied to a scalar"),
    ],
)
def test_bad_tagged_values(text: str, message: str) -> None:
    assert problems(f"v: {text}\n") == [f"m.yaml:1:4: v: {message}"]


def test_integer_too_long_for_python() -> None:
    assert problems("v: " + "9" * 5000 + "\n") == [
        "m.yaml:1:4: v: integer 99999999999999999999... has too many digits"
    ]


# --- keys ---------------------------------------------------------------------------------------


def test_duplicate_keys_are_all_reported() -> None:
    text = "a: 1\nb:\n  x: 1\n  x: 2\n  y: 3\n  x: 4\na: 5\nc: {k: 1, k: 2}\n"
    assert problems(text) == [
        "m.yaml:4:3: b.x: duplicate key 'x' (first defined on line 3)",
        "m.yaml:6:3: b.x: duplicate key 'x' (first defined on line 3)",
        "m.yaml:7:1: a: duplicate key 'a' (first defined on line 1)",
        "m.yaml:8:11: c.k: duplicate key 'k' (first defined on line 8)",
    ]


def test_duplicate_keys_in_list_items() -> None:
    text = "tasks:\n  - image: a\n    image: b\n"
    assert problems(text) == [
        "m.yaml:3:5: tasks[0].image: duplicate key 'image' (first defined on line 2)"
    ]


def test_same_key_in_sibling_mappings_is_fine() -> None:
    assert load("a: {x: 1}\nb: {x: 2}\n", "m").data == {"a": {"x": 1}, "b": {"x": 2}}


@pytest.mark.parametrize(
    ("key", "where", "message"),
    [
        ("1", "1:1", 'keys must be strings, got an integer (quote it: "1")'),
        ("1.5", "1:1", 'keys must be strings, got a number (quote it: "1.5")'),
        ("true", "1:1", 'keys must be strings, got a boolean (quote it: "true")'),
        ("null", "1:1", 'keys must be strings, got null (quote it: "null")'),
        ("~", "1:1", 'keys must be strings, got null (quote it: "~")'),
        ("!!int 7", "1:1", 'keys must be strings, got an integer (quote it: "7")'),
        ("? [a, b]\n", "1:3", "keys must be strings, got a list"),
        ("? {a: b}\n", "1:3", "keys must be strings, got a mapping"),
        ("?\n", "1:2", "keys must be strings, got null"),
    ],
)
def test_keys_must_be_strings(key: str, where: str, message: str) -> None:
    assert problems(f"{key}: x\n") == [f"m.yaml:{where}: (root): {message}"]


def test_nested_key_problem_names_the_mapping() -> None:
    assert problems("tasks:\n  - 1: x\n") == [
        'm.yaml:2:5: tasks[0]: keys must be strings, got an integer (quote it: "1")'
    ]


@pytest.mark.parametrize("key", ['"1"', "'true'", "yes", "on", "'null'", "2024-01-01", "!!str 1"])
def test_string_keys_that_yaml11_would_change(key: str) -> None:
    data = load(f"{key}: x\n", "m").data
    assert list(data.values()) == ["x"]
    assert all(isinstance(name, str) for name in data)


def test_merge_key_is_an_error() -> None:
    text = "base: &b {x: 1}\njob:\n  <<: *b\n  y: 2\n"
    message = "merge keys (<<) are not supported; write the keys out in full"
    assert problems(text) == [f"m.yaml:3:3: job: {message}"]


def test_quoted_merge_key_is_an_ordinary_string() -> None:
    assert load("'<<': 1\n", "m").data == {"<<": 1}


def test_merge_tag_is_unsupported() -> None:
    assert problems("a: !!merge x\n") == [f"m.yaml:1:4: a: unsupported tag !!merge {ALLOWED}"]


# --- aliases ------------------------------------------------------------------------------------


def test_aliases_are_independent_copies() -> None:
    doc = load("a: &x {k: [1, 2]}\nb: *x\nc: [*x, *x]\n", "m")
    assert doc.data == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}, "c": [{"k": [1, 2]}] * 2}
    doc.data["a"]["k"].append(3)
    doc.data["c"][0]["k"].clear()
    assert doc.data["b"] == {"k": [1, 2]}
    assert doc.data["c"][1] == {"k": [1, 2]}
    assert doc.data["a"] is not doc.data["b"]


def test_alias_marks() -> None:
    doc = load("a: &x\n  k: 1\nb: *x\n", "m")
    assert doc.marks.value(("b",)) == Mark(3, 4)  # the alias itself
    assert doc.marks.key(("b",)) == Mark(3, 1)
    assert doc.marks.value(("b", "k")) == Mark(2, 6)  # inside: where the content is written
    assert doc.marks.key(("b", "k")) == Mark(2, 3)


def test_scalar_alias_and_alias_key() -> None:
    assert load("n: &n name\n*n : 1\n", "m").data == {"n": "name", "name": 1}


def test_anchor_can_be_redefined() -> None:
    assert load("a: &x 1\nb: &x 2\nc: *x\n", "m").data == {"a": 1, "b": 2, "c": 2}


def test_undefined_alias() -> None:
    assert problems("a: *nope\nb: [*gone]\n") == [
        "m.yaml:1:4: a: undefined alias *nope",
        "m.yaml:2:5: b[0]: undefined alias *gone",
    ]


def test_recursive_alias() -> None:
    assert problems("a: &a\n  b: *a\n") == [
        "m.yaml:2:6: a.b: recursive alias *a refers to a node containing it"
    ]


def test_billion_laughs_stops_quickly() -> None:
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    # 9**9 (387 million) nodes if expanded: returning at all shows nothing was materialised.
    found = problems("\n".join(lines) + "\n")
    assert found == [f"m.yaml:6:8: f[0]: aliases expand to more than {MAX_NODES} nodes"]


def test_aliases_within_the_bound_work() -> None:
    # 1 + 10 * (1 + 10 * (1 + 100)) nodes for the value of c, well under the bound
    text = "a: &a [" + ", ".join(["x"] * 100) + "]\nb: &b [" + ", ".join(["*a"] * 10) + "]\n"
    text += "c: [" + ", ".join(["*b"] * 10) + "]\n"
    data = load(text, "m").data
    assert len(data["c"]) == 10
    assert data["c"][9][9] == ["x"] * 100


def test_deep_nesting_is_an_error() -> None:
    # under the root mapping, list number MAX_DEPTH + 1 has MAX_DEPTH + 1 enclosing collections
    depth = MAX_DEPTH + 1
    found = problems("a: " + "[" * depth + "]" * depth + "\n")
    path = "a" + "[0]" * MAX_DEPTH
    assert found == [f"m.yaml:1:{3 + depth}: {path}: nesting is deeper than {MAX_DEPTH} levels"]


def test_deep_nesting_through_aliases_is_an_error() -> None:
    half = MAX_DEPTH // 2 + 1
    text = "a: &a " + "[" * half + "]" * half + "\nb: " + "[" * half + "*a" + "]" * half + "\n"
    assert any("nesting is deeper than" in line for line in problems(text))


def test_nesting_at_the_limit_works() -> None:
    depth = MAX_DEPTH
    value = load("a: " + "[" * depth + "]" * depth + "\n", "m").data["a"]
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


# --- documents ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "# just a comment\n", "---\n", "--- \n...\n"])
def test_empty_file(text: str) -> None:
    assert problems(text) == ["m.yaml:1:1: file is empty"]


def test_multiple_documents() -> None:
    assert problems("a: 1\n---\nb: 2\n") == [
        "m.yaml:2:1: found a second document; one document per file"
    ]


def test_multiple_documents_after_explicit_end() -> None:
    assert problems("---\na: 1\n...\n---\nb: 2\n") == [
        "m.yaml:4:1: found a second document; one document per file"
    ]


@pytest.mark.parametrize(
    ("text", "got"),
    [
        ("- a\n- b\n", "a list"),
        ("hello\n", "a string"),
        ("12\n", "an integer"),
        ("null\n", "null"),
        ("'x'\n", "a string"),
    ],
)
def test_top_level_must_be_a_mapping(text: str, got: str) -> None:
    assert problems(text) == [
        f"m.yaml:1:1: (root): the top level must be a mapping (key: value), got {got}"
    ]


def test_yaml_11_directive_is_refused() -> None:
    assert problems("%YAML 1.1\n---\na: 1\n") == [
        "m.yaml:1:1: %YAML 1.1 is not supported; manifests are read as YAML 1.2"
    ]
    assert load("%YAML 1.2\n---\na: yes\n", "m").data == {"a": "yes"}


def test_all_problems_in_one_pass() -> None:
    text = "a: 1\na: 2\n3: x\nb: !!binary aGk=\nc:\n  <<: {}\n"
    assert problems(text) == [
        "m.yaml:2:1: a: duplicate key 'a' (first defined on line 1)",
        'm.yaml:3:1: (root): keys must be strings, got an integer (quote it: "3")',
        f"m.yaml:4:4: b: unsupported tag !!binary {ALLOWED}",
        "m.yaml:6:3: c: merge keys (<<) are not supported; write the keys out in full",
    ]


# --- syntax errors ------------------------------------------------------------------------------

SYNTAX_CASES = [
    (
        "a: [1, 2\nb: 3\n",
        (2, 2),
        {
            "libyaml": "did not find expected ',' or ']' "
            "(while parsing a flow sequence started on line 1)",
            "pure": "expected ',' or ']', but got ':' "
            "(while parsing a flow sequence started on line 1)",
        },
    ),
    (
        "a: 1\n b: 2\n",
        (2, 3),
        {
            "libyaml": "mapping values are not allowed in this context",
            "pure": "mapping values are not allowed here",
        },
    ),
    (
        "a: 'x\n",
        (1, 4),  # where the unclosed quote opens, not the end of the file
        {
            "libyaml": "found unexpected end of stream (a quote opened here is never closed)",
            "pure": "found unexpected end of stream (a quote opened here is never closed)",
        },
    ),
]


@pytest.mark.parametrize(("text", "where", "messages"), SYNTAX_CASES)
def test_syntax_errors(
    text: str, where: tuple[int, int], messages: dict[str, str], parser: str
) -> None:
    with pytest.raises(ManifestError) as info:
        load(text, "m.yaml")
    (problem,) = info.value.problems
    assert (problem.path, problem.line, problem.col, problem.field) == ("m.yaml", *where, "")
    assert problem.message == messages[parser]
    assert "\n" not in str(info.value)


def test_syntax_error_keeps_problems_found_before_it() -> None:
    found = problems("a: 1\na: 2\nb: [\n")
    assert found[0] == "m.yaml:2:1: a: duplicate key 'a' (first defined on line 1)"
    assert len(found) == 2


@pytest.mark.parametrize(
    ("text", "where", "code"),
    [("a: \x07\n", "1:4", "U+0007"), ("éé: x\nbé: \x00\n", "2:5", "U+0000")],
)
def test_unprintable_characters(text: str, where: str, code: str) -> None:
    assert problems(text) == [f"m.yaml:{where}: character {code} is not allowed in YAML"]


@pytest.mark.parametrize(
    ("text", "where", "code"),
    [("a: x\u2028y\n", "1:5", "U+2028"), ("a: 1\r\nb: '\x85'\n", "2:5", "U+0085")],
)
def test_characters_that_yaml_11_and_12_break_differently(text: str, where: str, code: str) -> None:
    message = f"character {code} is a line break in YAML 1.1 but not in 1.2; remove it or escape it"
    assert problems(text) == [f"m.yaml:{where}: {message}"]


def test_escaped_line_separator_is_fine() -> None:
    assert load('a: "x\\u2028y"\n', "m").data == {"a": "x\u2028y"}


def test_crlf_and_bom() -> None:
    doc = load("\ufeffa: 1\r\nb:\r\n  - x\r\n", "m")
    assert doc.data == {"a": 1, "b": ["x"]}
    assert doc.marks.value(("b", 0)) == Mark(3, 5)
    assert problems("a: 1\r\na: 2\r\n") == [
        "m.yaml:2:1: a: duplicate key 'a' (first defined on line 1)"
    ]


def test_positions_count_characters_not_bytes() -> None:
    doc = load("éé: [x, ü]\nb: 1\n", "m")
    assert doc.marks.value(("éé", 1)) == Mark(1, 9)


# --- marks --------------------------------------------------------------------------------------


def test_marks() -> None:
    text = (
        "# header\nname: sweep\ntasks:\n  - image: img\n    args: [a, b]\n  - image: other\n"
        "empty:\n"
    )
    marks = load(text, "m").marks
    assert marks.value(()) == Mark(1, 1)
    assert marks.key(()) == Mark(1, 1)
    assert marks.value(("name",)) == Mark(2, 7)
    assert marks.key(("name",)) == Mark(2, 1)
    assert marks.value(("tasks",)) == Mark(4, 3)
    assert marks.value(("tasks", 0)) == Mark(4, 5)
    assert marks.key(("tasks", 0)) == Mark(4, 5)  # list items have no key: the item itself
    assert marks.value(("tasks", 0, "args", 1)) == Mark(5, 15)
    assert marks.key(("tasks", 1, "image")) == Mark(6, 5)
    assert marks.value(("tasks", 1, "image")) == Mark(6, 12)
    assert marks.value(("empty",)) == Mark(7, 7)
    # missing paths fall back to the nearest existing ancestor
    assert marks.value(("tasks", 1, "nope", 3)) == Mark(6, 5)
    assert marks.key(("tasks", 1, "nope")) == Mark(6, 5)
    assert marks.value(("tasks", 7)) == Mark(4, 3)
    assert marks.value(("missing",)) == Mark(1, 1)
    assert marks.value(("tasks", "0")) == Mark(4, 3)  # "0" is a key, 0 an index


# --- load_file ----------------------------------------------------------------------------------


def test_load_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert load_file(path).data == {"a": 1}
    assert load_file(path).source == str(path)
    assert load_file(path, "sweeps/sweep.yaml").source == "sweeps/sweep.yaml"


def test_load_file_problems_use_display_name(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text("a: 1\na: 2\n", encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_file(path, "sweeps/sweep.yaml")
    assert (
        str(info.value) == "sweeps/sweep.yaml:2:1: a: duplicate key 'a' (first defined on line 1)"
    )


def test_load_file_missing(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_file(tmp_path / "nope.yaml", "nope.yaml")
    assert str(info.value) == "nope.yaml:1:1: cannot read file: No such file or directory"


def test_load_file_not_utf8(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(ManifestError) as info:
        load_file(path, "bad.yaml")
    assert str(info.value) == "bad.yaml:2:7: file is not valid UTF-8"


def test_load_file_with_bom(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    doc = load_file(path)
    assert doc.data == {"a": 1}
    assert doc.marks.key(("a",)) == Mark(1, 1)


# --- properties ---------------------------------------------------------------------------------

# The YAML 1.2 core schema's non-string plain scalars, written out independently of the module.
CORE_NON_STRING = re.compile(
    r"|~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)


def unambiguous(text: str) -> bool:
    """safe_dump quotes what YAML 1.1 would misread; the 1.2 core schema must agree on the rest."""
    return CORE_NON_STRING.fullmatch(text) is None


texts = st.text(max_size=12).filter(unambiguous)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


@pytest.mark.slow
@fixture_ok
@given(data=st.dictionaries(texts, values, max_size=6), flow=st.sampled_from([False, True, None]))
def test_round_trip_of_safe_dump(data: dict[str, Any], flow: bool | None) -> None:
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=flow)
    loaded = load(text, "m").data
    assert loaded == data
    assert loaded == yaml.safe_load(text)
    assert list(loaded) == list(data)


names = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda name: name not in ("true", "false", "null")
)
trees = st.recursive(
    st.integers(),
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(names, inner, min_size=1, max_size=3)
    ),
    max_leaves=20,
)


def emit(
    node: Any, indent: int, path: tuple[str | int, ...], out: list[str], want: dict[Any, Mark]
) -> None:
    """Write ``node`` in block style, recording where each key and scalar value lands."""
    pad = " " * indent
    entries = node.items() if isinstance(node, dict) else enumerate(node)
    for label, child in entries:
        if isinstance(label, str) and label.startswith("c"):
            out.append(pad + "# a comment line shifts everything below it")
        line = len(out) + 1
        head = f"{label}:" if isinstance(label, str) else "-"
        if isinstance(label, str):
            want["key", (*path, label)] = Mark(line, indent + 1)
        if isinstance(child, int):
            out.append(f"{pad}{head} {child}")
            want["value", (*path, label)] = Mark(line, indent + len(head) + 2)
        else:
            out.append(pad + head)
            emit(child, indent + 2, (*path, label), out, want)


@pytest.mark.slow
@fixture_ok
@given(tree=st.dictionaries(names, trees, min_size=1, max_size=5))
def test_marks_point_at_generated_lines(tree: dict[str, Any]) -> None:
    out: list[str] = []
    want: dict[Any, Mark] = {}
    emit(tree, 0, (), out, want)
    doc = load("\n".join(out) + "\n", "m")
    assert doc.data == tree
    for (kind, path), mark in want.items():
        got = doc.marks.key(path) if kind == "key" else doc.marks.value(path)
        assert got == mark, (kind, path)


def test_dump_quotes_strings_that_yaml_1_2_or_1_1_would_read_as_other_types() -> None:
    data = {"lr": "1e-4", "mode": "0o17", "flag": "yes", "n": 0.0001, "s": "plain", "t": "true"}
    text = yaml12.dump(data)
    assert yaml12.load(text, "dumped").data == data
    assert yaml.safe_load(text) == data


def test_only_alias_expansions_count_towards_the_node_limit() -> None:
    """A big manifest written out in full is not a billion laughs: it loads (max_points, checked
    later, is what refuses too many points)."""
    values = ", ".join(str(i) for i in range(yaml12.MAX_NODES + 20_000))
    doc = yaml12.load(f"params:\n  grid:\n    seed: [{values}]\n", "big.yaml")
    assert len(doc.data["params"]["grid"]["seed"]) == yaml12.MAX_NODES + 20_000
