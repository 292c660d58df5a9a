"""Live values and learning curves on this machine: a local sweep whose `train.py` prints
`[sweep-metric]` lines; `status --live` shows them while it runs, the submit says when each
point starts, and `report` afterwards draws one learning curve per point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from tests.background import WAIT, wait_for
from tests.charts import image_checks
from tests.conftest import PROJECT
from tests.helpers import head, write_manifest

TRAIN = """\
import json, os, pathlib, time
lr = float(os.environ["SWEEP_PARAM_LR"])
for step in range(1, 6):
    line = json.dumps({"step": step * 10, "loss": 1 / (1 + step * lr * 10)})
    print(f"rank 0: [sweep-metric] {line}", flush=True)
print("[sweep-metric] {not json", flush=True)  # skipped
while not pathlib.Path("go").exists():  # the test lets it finish
    time.sleep(0.02)
final = 1 / (1 + 60 * lr)
pathlib.Path(os.environ["RESULTS_DIR"]).mkdir(parents=True, exist_ok=True)
pathlib.Path(os.environ["RESULTS_DIR"], "metrics.json").write_text(json.dumps({"loss": final}))
"""

SWEEP = (
    head("curves", draft=True)
    + """\
    command: [python, train.py]
params:
  grid:
    lr: [0.1, 0.3]
"""
)


def _json(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(["-C", str(root), *argv, "--backend", "local", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["sweeps"][0]


@pytest.mark.slow
def test_a_local_sweeps_reports_show_while_it_runs_and_draw_curves_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    write_manifest(tmp_path, SWEEP, "curves.yaml")
    logs = tmp_path / "submit.log"
    with open(logs, "wb") as log:
        argv = ["-C", str(tmp_path), "submit", "--backend", "local", "--concurrency", "2"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "runner", *argv], cwd=PROJECT, stdout=log, stderr=log
        )
        try:

            def reported() -> bool:
                runs = list((tmp_path / ".runs" / "curves").glob("*/replica-0.log"))
                printed = len(runs) == 2 and all("{not json" in p.read_text() for p in runs)
                states = [p["state"] for p in _json(tmp_path, capsys, "status")["points"]]
                return printed and states == ["running", "running"]  # and recorded as started

            wait_for(reported, "both points running, with their reporting lines")
            plain = _json(tmp_path, capsys, "status")["points"]
            assert [p["live"] for p in plain] == [None, None]  # without --live: no log read
            points = _json(tmp_path, capsys, "status", "--live")["points"]
            assert [p["state"] for p in points] == ["running", "running"]
            lasts = [p["live"] for p in points]
            assert lasts == [
                {"step": 50, "values": {"loss": pytest.approx(1 / (1 + 50 * lr))}}
                for lr in (0.1, 0.3)
            ]
            (tmp_path / "go").write_text("")
            assert proc.wait(timeout=WAIT) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    said = logs.read_text()
    assert said.count("] started curves-") == 2, said
    assert "[0/2 done, 1 running] started curves-" in said

    page = _json(tmp_path, capsys, "report")
    curves = page["curves"]
    assert curves["metric"] == "loss" and len(curves["points"]) == 2  # one per point
    assert [len(c["steps"]) for c in curves["points"]] == [5, 5]
    assert [c["best"] for c in curves["points"]] == [False, True]  # lr 0.3: the lowest loss
    skipped = [p["skipped_lines"] for p in page["points"]]  # the `{not json` line of each
    assert [(s["count"], s["first"]) for s in skipped] == [(1, "[sweep-metric] {not json")] * 2
    out = tmp_path / "report"
    assert main(["-C", str(tmp_path), "report", "--backend", "local", "--output", str(out)]) == 0
    image_checks(out / "curves-curves.png")
    md = (out / "curves.md").read_text()
    assert "](curves-curves.png)" in md
    assert "_2 reporting line(s) skipped in 2 point(s), [sweep-metric] lines that report" in md
