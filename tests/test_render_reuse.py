"""A renderer remembers the text of each axis value it wrote (per hole, by the value object):
what it remembers never changes a point's spec, whatever values look equal to Python."""

from __future__ import annotations

import json
from pathlib import Path

from runner.core.space import iter_points
from runner.render import Renderer
from tests.helpers import MINIMAL, load, minimal

# 1, true and "1": three values of x that Python's == and hash() partly confuse (1 == True).
BODY = MINIMAL.replace('["--lr={{lr}}"]', '["--x={{x}}", "--seed={{seed}}"]').replace(
    "lr: [0.1, 0.01]", 'x: [1, true, "1", 1.5]\n    seed: [1, 2]'
)


def test_a_point_renders_the_same_after_others_as_alone(tmp_path: Path) -> None:
    sweep = load(tmp_path, minimal(tmp_path, body=BODY.format(name="same")))
    shared = Renderer(sweep)
    points = list(iter_points(sweep.space))
    for point in points * 2:  # the second time round, every value is remembered
        alone = Renderer(sweep).render(point)
        assert shared.render(point) == alone
    texts = []
    for point in points:
        task = json.loads(shared.render(point).spec_json)["tasks"][0]
        env = {var["name"]: var.get("value") for var in task["envVars"]}
        texts.append((task["arguments"][0], env["SWEEP_PARAM_X"]))
    assert (
        sorted(set(texts))
        == [
            ("--x=1", "1"),
            ("--x=1.5", "1.5"),
            ("--x=true", "true"),
        ]
        and texts.count(("--x=1", "1")) == 4
    )
