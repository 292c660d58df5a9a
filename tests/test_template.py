from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.core.values import as_text
from runner.render.template import MAX_FORMAT_SIZE, Field, Template, TemplateError, parse

# --- parse --------------------------------------------------------------------------------------


def test_parse_literals_and_fields_in_order() -> None:
    parsed = parse("lr{lr}-w{warmup}")
    assert parsed.parts == ("lr", Field("lr", ""), "-w", Field("warmup", ""))
    assert parsed.names == ("lr", "warmup")
    assert not parsed.is_literal


def test_render_writes_values_as_text() -> None:
    parsed = parse("lr{lr}-w{warmup}")
    assert parsed.render({"lr": 0.0003, "warmup": 100}) == "lr0.0003-w100"
    assert parsed.render({"lr": 1e-05, "warmup": True}) == "lr1e-05-wtrue"


def test_adjacent_fields_and_empty_template() -> None:
    assert parse("{a}{b}").parts == (Field("a", ""), Field("b", ""))
    assert parse("{a}{b}").render({"a": "x", "b": 2}) == "x2"
    assert parse("").parts == ()
    assert parse("").render({}) == ""


def test_dotted_name_is_one_parameter() -> None:
    parsed = parse("--lr={optim.lr}")
    assert parsed.names == ("optim.lr",)
    assert parsed.render({"optim.lr": 0.0001}) == "--lr=0.0001"


def test_dotted_name_is_not_attribute_access() -> None:
    with pytest.raises(KeyError):
        parse("{optim.lr}").render({"optim": "adam"})


def test_format_spec() -> None:
    parsed = parse("lr{lr:.0e}")
    assert parsed.parts == ("lr", Field("lr", ".0e"))
    assert parsed.names == ("lr",)
    assert parsed.render({"lr": 0.0001}) == "lr1e-04"
    assert parse("{bs:05d}").render({"bs": 42}) == "00042"
    assert parse("{x:>4}").render({"x": "ab"}) == "  ab"


def test_format_spec_that_does_not_fit_the_value() -> None:
    with pytest.raises(TemplateError, match="does not apply to 'adam'"):
        parse("{opt:.0e}").render({"opt": "adam"})


def test_format_spec_writes_booleans_as_true_and_false() -> None:
    assert parse("{flag:>6}").render({"flag": True}) == "  true"
    assert parse("{flag:<6}|").render({"flag": False}) == "false |"
    with pytest.raises(TemplateError):
        parse("{flag:d}").render({"flag": True})


@pytest.mark.parametrize("spec", [".1000000000f", "999999999", "0101", ">101", "x^500", ",.200f"])
def test_huge_width_or_precision_is_refused_before_rendering(spec: str) -> None:
    with pytest.raises(TemplateError, match=f"above {MAX_FORMAT_SIZE}"):
        parse(f"{{lr:{spec}}}")


@pytest.mark.parametrize("spec", [".100f", "100", "0100", "x^100", ",.2f", ".0e"])
def test_width_and_precision_up_to_the_limit_are_fine(spec: str) -> None:
    assert parse(f"{{lr:{spec}}}").parts == (Field("lr", spec),)


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("{{lr}}", "{lr}"),
        ("a}}b", "a}b"),
        ("{{", "{"),
        ("}}{{", "}{"),
        ("no braces", "no braces"),
    ],
)
def test_doubled_braces_are_literal(text: str, literal: str) -> None:
    parsed = parse(text)
    assert parsed.is_literal
    assert parsed.names == ()
    assert parsed.literal() == literal
    assert parsed.render({}) == literal


def test_escapes_around_a_field() -> None:
    parsed = parse("{{{lr}}}")
    assert parsed.parts == ("{", Field("lr", ""), "}")
    assert parsed.render({"lr": 0.5}) == "{0.5}"


@pytest.mark.parametrize("text", ["lr{", "lr}", "{lr", "}{", "a}b", "{lr}}", "{{lr}", "{lr:{w}}"])
def test_stray_brace_is_an_error(text: str) -> None:
    with pytest.raises(TemplateError, match="unmatched"):
        parse(text)


def test_stray_brace_error_says_where_and_how_to_escape() -> None:
    with pytest.raises(TemplateError) as info:
        parse("ab}")
    assert "character 3" in str(info.value)
    assert "}}" in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["{}", "{a b}", "{0}", "{1abc}", "{a..b}", "{a.}", "{.a}", "{x[0]}", "{x!r}", "{:>3}", "{-x}"],
)
def test_malformed_field_is_an_error(text: str) -> None:
    with pytest.raises(TemplateError, match="is not a parameter reference"):
        parse(text)


def test_attribute_like_name_is_only_a_name() -> None:
    parsed = parse("{x.__class__}")
    assert parsed.names == ("x.__class__",)
    # The lookup is of the whole string: it never reaches the value of `x`.
    with pytest.raises(KeyError, match=re.escape("x.__class__")):
        parsed.render({"x": 1})
    assert parsed.render({"x.__class__": "plain"}) == "plain"


def test_unknown_name_fails_on_render() -> None:
    with pytest.raises(KeyError, match="warmup"):
        parse("{lr}-{warmup}").render({"lr": 1})


def test_a_default_is_written_where_the_parameter_is_absent() -> None:
    parsed = parse("m{momentum?none}-{optim|slug}-{lr?0:.1e}-{x?}")
    assert parsed.parts[1] == Field("momentum", "", "", "none")
    assert parsed.names == ("momentum", "optim", "lr", "x")
    assert parsed.render({"optim": "sgd"}) == "mnone-sgd-0-"
    assert parsed.render({"optim": "sgd", "momentum": 0.9, "lr": 0.0003, "x": 1}) == (
        "m0.9-sgd-3.0e-04-1"
    )
    assert parsed.needs(frozenset({"momentum", "optim"})) == frozenset({"optim"})
    assert parse("{gpus?8}").render_value({}) == "8"
    assert parse("{gpus?8}").render_value({"gpus": 4}) == 4
    assert parse("{t?a b|slug}").render({}) == "a-b"
    with pytest.raises(KeyError, match="momentum"):
        parse("{momentum}").render_value({})


# --- render_value -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [512, 0.0003, True, False, "adam"])
def test_single_plain_field_keeps_its_type(value: bool | int | float | str) -> None:
    out = parse("{x}").render_value({"x": value})
    assert out == value
    assert type(out) is type(value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("{x:d}", "512"), ("n{x}", "n512"), ("{x}{x}", "512512"), ("{x} ", "512 "), ("512", "512")],
)
def test_anything_else_renders_to_a_string(text: str, expected: str) -> None:
    assert parse(text).render_value({"x": 512}) == expected


# --- properties ---------------------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


@given(st.text(max_size=30))
@settings(max_examples=100, deadline=None)
def test_escaped_text_parses_to_itself(text: str) -> None:
    parsed = parse(_escape(text))
    assert parsed.is_literal
    assert parsed.render({}) == text


names = st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,5}(\.[A-Za-z_][A-Za-z0-9_]{0,5}){0,2}", fullmatch=True
)
values = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)


@given(st.lists(st.tuples(st.text(max_size=6), names, values), max_size=4), st.text(max_size=6))
@settings(max_examples=100, deadline=None)
def test_render_is_literals_and_values_as_text(
    pieces: list[tuple[str, str, bool | int | float | str]], tail: str
) -> None:
    text = "".join(f"{_escape(lit)}{{{name}}}" for lit, name, _ in pieces) + _escape(tail)
    params = {name: value for _, name, value in pieces}
    expected = "".join(lit + as_text(params[name]) for lit, name, _ in pieces) + tail
    parsed = parse(text)
    assert parsed.names == tuple(name for _, name, _ in pieces)
    assert parsed.render(params) == expected
    assert parse(text) == parsed
    assert isinstance(parsed, Template)
