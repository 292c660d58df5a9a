"""Synthetic objectives for adaptive-search tests and benchmarks, standard library only:
Branin (2-D, minimum 0.397887) and Hartmann-6 (6-D, minimum -3.32237), the usual test functions,
and a bowl whose first parameter matters and whose second barely does (for `report`'s importance).

As a task it reads its parameters from argv (`--x1 0.5 --x2 0.2 …`, in the unit box for
Hartmann-6, Branin's own box for Branin) and writes `{"value": f}` to `$RESULTS_DIR/metrics.json`
(`--metric loss` names it otherwise):

    python -m runner.examples.objectives branin --x1 1.2 --x2 3.4
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

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


def hartmann6(x: Sequence[float]) -> float:
    """On the unit cube [0, 1]^6."""
    return -sum(
        a * math.exp(-sum(h * (xi - p) ** 2 for h, xi, p in zip(row, x, prow, strict=True)))
        for a, row, prow in zip(_A, _H, _P, strict=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("function", choices=["branin", "hartmann6", "bowl"])
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
    args = parser.parse_args(argv)
    xs = [getattr(args, f"x{i}") for i in range(1, 7)]
    functions = {"branin": branin, "bowl": bowl}
    value = functions[args.function](*xs[:2]) if args.function in functions else hartmann6(xs)
    out = Path(os.environ.get("RESULTS_DIR", "."))
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps({args.metric: value}) + "\n", encoding="utf-8")
    for step in range(1, args.report_steps + 1):  # from twice the value (plus 1) down to it
        reached = value + (abs(value) + 1) * (args.report_steps - step) / args.report_steps
        print(f"[sweep-metric] {json.dumps({'step': step, args.metric: reached})}")
    print(f"{args.function} = {value:.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
