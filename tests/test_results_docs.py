"""docs/results.md's reporting-line examples do what the page says: the plain-Python one runs
and prints lines `status --live` reads; the Hugging Face and OLMo-core callbacks, run against
stand-ins for their base classes, print the values they are given as such lines."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.commands.wait import EXITS
from runner.observe.live import Reported, reports
from tests.conftest import PROJECT

PAGE = (PROJECT / "docs" / "results.md").read_text(encoding="utf-8")
SECTION = PAGE.split("## Live values while points run", 1)[1].split("\n## ", 1)[0]
PLAIN, HUGGING_FACE, OLMO_CORE = re.findall(r"```python\n(.*?)```", SECTION, re.S)


def _printed(
    code: str, namespace: dict[str, object] | None = None
) -> tuple[str, dict[str, object]]:
    ast.parse(code)
    scope: dict[str, object] = dict(namespace or {}, __name__="example")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/results.md", "exec"), scope)
    return out.getvalue(), scope


def test_the_plain_python_example_prints_reporting_lines() -> None:
    printed, _ = _printed(PLAIN)
    found = reports(printed.splitlines())
    assert [r.step for r in found] == [100, 200, 300]
    assert found[0].values == {"loss": pytest.approx(2.0 * 2.718281828**-1, rel=1e-6), "lr": 3e-4}


def _module(monkeypatch: pytest.MonkeyPatch, name: str, **attributes: object) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    monkeypatch.setitem(sys.modules, name, module)


def test_the_hugging_face_callback_reports_what_the_trainer_logs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _module(monkeypatch, "transformers", TrainerCallback=object)
    _, scope = _printed(HUGGING_FACE)
    state = types.SimpleNamespace(is_world_process_zero=True, global_step=1200)
    logs = {"loss": 2.31, "learning_rate": 3e-4, "epoch": 0.5, "note": "text is left out"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        scope["SweepMetrics"]().on_log(None, state, None, logs=logs)  # type: ignore[operator]
        other = types.SimpleNamespace(is_world_process_zero=False, global_step=1200)
        scope["SweepMetrics"]().on_log(None, other, None, logs=logs)  # type: ignore[operator]
    assert reports(out.getvalue().splitlines()) == (
        Reported(1200, {"loss": 2.31, "learning_rate": 3e-4, "epoch": 0.5}),
    )


def test_the_olmo_core_callback_reports_the_metrics_of_rank_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclass
    class Callback:
        pass

    rank = [0]
    _module(monkeypatch, "olmo_core")
    _module(monkeypatch, "olmo_core.distributed")
    _module(monkeypatch, "olmo_core.distributed.utils", get_rank=lambda: rank[0])
    _module(monkeypatch, "olmo_core.train")
    _module(monkeypatch, "olmo_core.train.callbacks", Callback=Callback)
    _, scope = _printed(OLMO_CORE)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        scope["SweepMetrics"]().log_metrics(300, {"train/CE loss": 3.2})  # type: ignore[operator]
        rank[0] = 1
        scope["SweepMetrics"]().log_metrics(300, {"train/CE loss": 3.2})  # type: ignore[operator]
    assert reports(out.getvalue().splitlines()) == (Reported(300, {"train/CE loss": 3.2}),)


def test_the_page_names_every_code_wait_exits_with() -> None:
    section = PAGE.split("## Wait for a sweep in CI", 1)[1].split("\n## ", 1)[0]
    codes = {int(code) for code in EXITS.values()} | {1, 5}
    assert all(f"**{code}**" in section for code in codes), codes
    assert Path(PROJECT / "docs" / "guarantees.md").read_text().count("| 124 |") == 1
