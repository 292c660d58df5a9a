from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.core.keys import NAME_HEX, experiment_name, point_key, spec_hash
from runner.core.values import Value, identity, normalize

BEAKER_NAME = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
SWEEP_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"  # the schema's pattern and maxLength

sweep_names = st.from_regex(SWEEP_NAME, fullmatch=True)
workspaces = st.from_regex(r"[a-z0-9]{1,8}/[a-z0-9-]{1,12}", fullmatch=True)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
).map(normalize)
param_names = st.from_regex(r"[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6})?", fullmatch=True)
param_dicts = st.dictionaries(param_names, scalars, max_size=5)


def differs_from(old: Value) -> Callable[[Value], bool]:
    return lambda new: identity(new) != identity(old)


# --- point_key ----------------------------------------------------------------------------------


def test_point_key_is_pinned() -> None:
    """Changing how keys are computed re-runs every experiment ever submitted: keep this fixed."""
    canonical = (
        '{"format":1,"params":{"batch_size":512,"lr":0.0001},"revision":0,'
        '"sweep":"olmo-1b-lr-bs","workspace":"ai2/olmo-sweeps"}'
    )
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    key = point_key("olmo-1b-lr-bs", "ai2/olmo-sweeps", 0, {"lr": 0.0001, "batch_size": 512})
    assert key == expected == "e8b5c45f3ac2d08c7990bbda14bd49bd4a7e4c5fb55c5855a616df1f373fe597"


def test_point_key_ignores_parameter_order() -> None:
    first = point_key("s", "ai2/w", 0, {"lr": 0.001, "bs": 512})
    second = point_key("s", "ai2/w", 0, {"bs": 512, "lr": 0.001})
    assert first == second


def test_true_and_one_give_different_keys() -> None:
    keys = {point_key("s", "ai2/w", 0, {"x": value}) for value in (True, 1, "1", "true", 1.5)}
    assert len(keys) == 5


def test_integral_float_and_int_give_the_same_key_once_normalised() -> None:
    assert point_key("s", "ai2/w", 0, {"x": normalize(3e6)}) == point_key(
        "s", "ai2/w", 0, {"x": 3000000}
    )


def test_dotted_name_differs_from_plain_name() -> None:
    assert point_key("s", "ai2/w", 0, {"optim.lr": 1}) != point_key(
        "s", "ai2/w", 0, {"optim_lr": 1}
    )


@pytest.mark.slow
@given(sweep_names, workspaces, st.integers(0, 1000), param_dicts, st.data())
@settings(max_examples=100, deadline=None)
def test_point_key_changes_with_every_input(
    sweep: str, workspace: str, revision: int, params: dict[str, Value], data: st.DataObject
) -> None:
    key = point_key(sweep, workspace, revision, params)
    other_sweep = data.draw(sweep_names.filter(lambda s: s != sweep), "other sweep")
    other_workspace = data.draw(workspaces.filter(lambda w: w != workspace), "other workspace")
    assert point_key(other_sweep, workspace, revision, params) != key
    assert point_key(sweep, other_workspace, revision, params) != key
    assert point_key(sweep, workspace, revision + 1, params) != key
    for name, value in params.items():
        new = data.draw(scalars.filter(differs_from(value)), name)
        assert point_key(sweep, workspace, revision, {**params, name: new}) != key
    extra = data.draw(param_names.filter(lambda n: n not in params), "extra name")
    assert point_key(sweep, workspace, revision, {**params, extra: 1}) != key
    if params:
        dropped = dict(list(params.items())[1:])
        assert point_key(sweep, workspace, revision, dropped) != key


# --- experiment_name ----------------------------------------------------------------------------


def test_experiment_name_is_sweep_and_twelve_hex() -> None:
    key = point_key("olmo-1b-lr-bs", "ai2/olmo-sweeps", 0, {"lr": 0.0001})
    name = experiment_name("olmo-1b-lr-bs", key)
    assert name == f"olmo-1b-lr-bs-{key[:12]}"
    assert re.fullmatch(r"olmo-1b-lr-bs-[0-9a-f]{12}", name)


def test_longest_sweep_name_gives_a_valid_beaker_name() -> None:
    sweep = "s" * 100
    name = experiment_name(sweep, point_key(sweep, "ai2/w", 0, {}))
    assert len(name) == 100 + 1 + NAME_HEX
    assert len(name) <= 128
    assert BEAKER_NAME.match(name)


@given(sweep_names, param_dicts)
@settings(max_examples=100, deadline=None)
def test_experiment_name_is_always_a_beaker_name(sweep: str, params: dict[str, Value]) -> None:
    key = point_key(sweep, "ai2/w", 0, params)
    name = experiment_name(sweep, key)
    assert BEAKER_NAME.match(name)
    assert len(name) <= 128
    assert name == f"{sweep}-{key[:NAME_HEX]}"
    assert re.fullmatch(r"[0-9a-f]{12}", name[-NAME_HEX:])


# --- spec_hash ----------------------------------------------------------------------------------


def test_spec_hash_is_stable_under_key_order() -> None:
    first = {
        "version": "v2",
        "budget": "ai2/oe",
        "tasks": [
            {"name": "main", "image": {"beaker": "x"}, "envVars": [{"name": "A", "value": "1"}]}
        ],
    }
    second = {
        "tasks": [
            {"envVars": [{"value": "1", "name": "A"}], "image": {"beaker": "x"}, "name": "main"}
        ],
        "budget": "ai2/oe",
        "version": "v2",
    }
    assert spec_hash(first) == spec_hash(second)
    assert re.fullmatch(r"[0-9a-f]{64}", spec_hash(first))


def test_spec_hash_changes_with_content_and_list_order() -> None:
    base = {"tasks": [{"name": "a"}, {"name": "b"}], "budget": "ai2/oe"}
    assert spec_hash(base) != spec_hash({**base, "budget": "ai2/other"})
    assert spec_hash(base) != spec_hash({**base, "tasks": [{"name": "b"}, {"name": "a"}]})
    assert spec_hash({"x": True}) != spec_hash({"x": 1})


@given(
    st.dictionaries(st.text(max_size=4), st.dictionaries(st.text(max_size=4), scalars, max_size=4))
)
@settings(max_examples=100, deadline=None)
def test_spec_hash_ignores_insertion_order_at_every_level(
    spec: dict[str, dict[str, Value]],
) -> None:
    shuffled = {k: dict(reversed(v.items())) for k, v in reversed(spec.items())}
    assert spec_hash(spec) == spec_hash(shuffled)
