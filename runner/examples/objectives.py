"""Synthetic objectives for adaptive-search tests and benchmarks, standard library only:
Branin (2-D, minimum 0.397887) and Hartmann-6 (6-D, minimum -3.32237), the usual test functions,
a bowl whose first parameter matters and whose second barely does (for `report`'s importance),
a learning curve (for successive halving: `curve`), and two with two objectives each, both
minimised (`f1`, `f2`): Branin-Currin (2-D, the unit square) and ZDT1 (6-D, the unit cube; its
Pareto front is f2 = 1 - sqrt(f1) where x2..x6 = 0).

As a task it reads its parameters from argv (`--x1 0.5 --x2 0.2 …`, in the unit box for
Hartmann-6 and the curve, Branin's own box for Branin) and writes `{"value": f}` to
`$RESULTS_DIR/metrics.json` (`--metric loss` names it otherwise):

    python -m runner.examples.objectives branin --x1 1.2 --x2 3.4
    python -m runner.examples.objectives curve --x1 0.5 --x2 0.1 --x3 0.9 --steps 300 --seed 2

The curve writes a checkpoint (its steps) into `--checkpoint DIR` (a halving's `{checkpoint}`,
else `SWEEP_CHECKPOINT`, else its results directory), and resumes the one in `--resume DIR` (a
promoted point's `{parent_checkpoint}`, else `SWEEP_PARENT_CHECKPOINT`), reporting the steps it
resumed from (`resumed_from`) and those it ran (`steps_run`). Told to resume (`SWEEP_PARENT_KEY`)
from a checkpoint that is not there, it exits 66 with one line naming it, never starting over
(`runner.examples.checkpoints`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from collections.abc import Sequence
from pathlib import Path

from runner.examples.checkpoints import FILE, Missing, refuse, resuming, saving

BRANIN_MIN = 0.397887
HARTMANN6_MIN = -3.32237
_A = (1.0, 1.2, 3.0, 3.2)
_H = (
    (10, 3, 17, 3.5, 1.7, 8),
    (0.05, 10, 17, 0.1, 8, 14),
    (3, 3.5, 1.7, 10, 17, 8),
    (17, 8, 0.05, 10, 0.1, 14),
)
_P = (
    (0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886),
    (0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991),
    (0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650),
    (0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381),
)


def branin(x1: float, x2: float) -> float:
    """On x1 in [-5, 10], x2 in [0, 15]."""
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


def bowl(x1: float, x2: float) -> float:
    """10 (x1 - 0.3)^2 + 0.001 x2: lowest at x1 = 0.3 and the smallest x2."""
    return 10 * (x1 - 0.3) ** 2 + 0.001 * x2


CURVE_WEIGHTS = (2.0, 1.2, 0.6)


def curve(x: Sequence[float], steps: float, seed: int = 0) -> float:
    """A learning curve on the unit cube [0, 1]^3: the loss after `steps` (100 or more) decays
    as `floor + amp · (steps / 100)^-rate` toward a floor the configuration sets (lowest at a
    centre `seed` draws), at a rate that grows with x1 (a learning rate: fast early, but its
    floor is the same bowl), from a start that grows with x3. Fast and slow curves cross: the
    best configuration at 100 steps is often not the best at 2 700."""
    rng = random.Random(seed)
    centre = [rng.uniform(0.2, 0.8) for _ in range(3)]
    floor = 0.2 + sum(w * (xi - c) ** 2 for w, xi, c in zip(CURVE_WEIGHTS, x, centre, strict=True))
    rate = 0.3 + 0.9 * x[0]
    amp = 1.0 + 0.5 * x[2]
    return floor + amp * math.pow(steps / 100, -rate)


def hartmann6(x: Sequence[float]) -> float:
    """On the unit cube [0, 1]^6."""
    return -sum(
        a * math.exp(-sum(h * (xi - p) ** 2 for h, xi, p in zip(row, x, prow, strict=True)))
        for a, row, prow in zip(_A, _H, _P, strict=True)
    )


def branin_currin(x1: float, x2: float) -> tuple[float, float]:
    """Branin on the unit square (rescaled to its own box) and Currin's exponential function."""
    first = branin(15 * x1 - 5, 15 * x2)
    factor = 1 - math.exp(-1 / (2 * max(x2, 1e-9)))
    ratio = (2300 * x1**3 + 1900 * x1**2 + 2092 * x1 + 60) / (
        100 * x1**3 + 500 * x1**2 + 4 * x1 + 20
    )
    return first, factor * ratio


def zdt1(x: Sequence[float]) -> tuple[float, float]:
    """ZDT1 on the unit cube: f1 = x1, f2 = g (1 - sqrt(x1 / g)), g = 1 + 9 mean(x2..)."""
    g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
    return x[0], g * (1 - math.sqrt(x[0] / g))


TWO = {"branin_currin": lambda xs: branin_currin(*xs[:2]), "zdt1": zdt1}
"""The two-objective functions, by name: each writes `f1` and `f2`."""


def values(function: str, xs: Sequence[float]) -> dict[str, float]:
    """What the task writes to metrics.json for `function` at xs (`value`, or `f1` and `f2`)."""
    if function in TWO:
        first, second = TWO[function](xs)
        return {"f1": first, "f2": second}
    one = {"branin": branin, "bowl": bowl}
    return {"value": one[function](*xs[:2]) if function in one else hartmann6(xs)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("function", choices=["branin", "hartmann6", "bowl", "curve", *TWO])
    parser.add_argument("--metric", default="value", help="the name of the value in metrics.json")
    for i in range(1, 7):
        parser.add_argument(f"--x{i}", type=float, default=0.5)
    parser.add_argument(
        "--report-steps",
        type=int,
        default=0,
        metavar="N",
        help="also print N `[sweep-metric]` lines, the value reached by step N (a learning curve)",
    )
    parser.add_argument("--steps", type=float, default=100.0, help="curve: the run's length")
    parser.add_argument("--seed", type=int, default=0, help="curve: which instance")
    parser.add_argument("--checkpoint", default="", help="curve: where to write its checkpoint")
    parser.add_argument("--resume", default="", help="curve: the checkpoint to resume from")
    args = parser.parse_args(argv)
    xs = [getattr(args, f"x{i}") for i in range(1, 7)]
    out = Path(os.environ.get("RESULTS_DIR", "."))
    out.mkdir(parents=True, exist_ok=True)
    extra: dict[str, float] = {}
    if args.function == "curve":
        try:
            extra = _resumed(resuming(args.resume), args.steps)
        except Missing as missing:
            return refuse(missing)
        found = {"value": curve(xs[:3], args.steps, args.seed)}
        saved = saving(args.checkpoint) or out
        saved.mkdir(parents=True, exist_ok=True)
        (saved / FILE).write_text(json.dumps({"steps": args.steps}) + "\n")
    else:
        found = values(args.function, xs)
    if "value" in found:
        found = {args.metric: found["value"]}
    metrics = {**found, **extra}
    (out / "metrics.json").write_text(json.dumps(metrics) + "\n", encoding="utf-8")
    steps = args.report_steps
    for step in range(1, steps + 1):  # from twice the value (plus 1) down to it
        reached = {k: v + (abs(v) + 1) * (steps - step) / steps for k, v in found.items()}
        print(f"[sweep-metric] {json.dumps({'step': step, **reached})}")
    print(f"{args.function}: " + ", ".join(f"{k} = {v:.6f}" for k, v in found.items()))
    return 0


def _resumed(checkpoint: Path | None, steps: float) -> dict[str, float]:
    """The steps a curve resumed from (its parent's checkpoint) and the steps it ran; from 0
    when it was not told to resume."""
    before = float(json.loads(checkpoint.read_text())["steps"]) if checkpoint else 0.0
    return {"resumed_from": before, "steps_run": steps - before}


if __name__ == "__main__":
    raise SystemExit(main())
