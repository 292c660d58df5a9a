"""A toy training script: linear regression by minibatch gradient descent, standard library only.

It behaves like a real trainer under the runner: hyperparameters come from argv, falling back to
the SWEEP_PARAM_* variables every point gets (so `--lr` or SWEEP_PARAM_LR); Beaker's replica
contract (BEAKER_REPLICA_RANK, BEAKER_REPLICA_COUNT) picks this replica's shard of the data; and
replica 0 writes `$RESULTS_DIR/metrics.json`, which `python -m runner status` shows as columns.
The replicas do not talk to each other (a real multi-node job would all-reduce through
BEAKER_LEADER_REPLICA_HOSTNAME); each trains on its own shard and reports its progress.

It checkpoints as a successive halving's points are told (`runner.examples.checkpoints`):
replica 0 writes its weights and step to `--checkpoint DIR` (else `SWEEP_CHECKPOINT`), and a
run told to resume (`SWEEP_PARENT_KEY`, or `--resume DIR`) starts from the checkpoint in
`--resume DIR` (else `SWEEP_PARENT_CHECKPOINT`) and trains on to `--steps`; when that checkpoint
is not there it exits 66 with one line naming it instead of starting over.

    python -m runner.examples.toy_trainer --lr 0.1 --steps 300 --checkpoint /tmp/c100
    python -m runner.examples.toy_trainer --lr 0.1 --steps 900 --resume /tmp/c100
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from runner.examples.checkpoints import FILE, Missing, refuse, resuming, saving

FEATURES = 8
SAMPLES = 1024
DATA_SEED = 1234
FAILED = 3
"""Exit code of a replica told to fail (--fail-rank)."""


def _env(name: str, default: str) -> str:
    return os.environ.get(f"SWEEP_PARAM_{name}", default)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="toy linear-regression trainer")
    parser.add_argument("--lr", type=float, default=float(_env("LR", "0.05")))
    parser.add_argument("--steps", type=int, default=int(_env("STEPS", "300")))
    parser.add_argument("--batch-size", type=int, default=int(_env("BATCH_SIZE", "32")))
    parser.add_argument("--seed", type=int, default=int(_env("SEED", "0")))
    parser.add_argument(
        "--step-sleep",
        type=float,
        default=float(_env("STEP_SLEEP", "0")),
        help="seconds to sleep after each step, to imitate a slower model",
    )
    parser.add_argument(
        "--fail-rank",
        type=int,
        default=int(_env("FAIL_RANK", "-1")),
        help=f"this replica exits with code {FAILED} after its first step (for trying failures)",
    )
    parser.add_argument("--checkpoint", default="", help="where replica 0 writes its checkpoint")
    parser.add_argument("--resume", default="", help="the checkpoint to resume from")
    return parser.parse_args(argv)


def dataset() -> tuple[list[list[float]], list[float]]:
    """The same synthetic data in every replica: y = x·w + noise, for a fixed random w."""
    rng = random.Random(DATA_SEED)
    weights = [rng.uniform(-1, 1) for _ in range(FEATURES)]
    xs = [[rng.gauss(0, 1) for _ in range(FEATURES)] for _ in range(SAMPLES)]
    ys = [sum(a * b for a, b in zip(x, weights, strict=True)) + rng.gauss(0, 0.1) for x in xs]
    return xs, ys


def mse(w: list[float], xs: list[list[float]], ys: list[float]) -> float:
    return sum(
        (sum(a * b for a, b in zip(x, w, strict=True)) - y) ** 2
        for x, y in zip(xs, ys, strict=True)
    ) / len(xs)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    rank = int(os.environ.get("BEAKER_REPLICA_RANK", "0"))
    count = int(os.environ.get("BEAKER_REPLICA_COUNT", "1"))
    leader = os.environ.get("BEAKER_LEADER_REPLICA_HOSTNAME", "localhost")
    # Flushed: a replica stopped by its sibling's failure must still leave this line in its log.
    print(
        f"replica {rank} of {count} (leader {leader}): lr={args.lr} steps={args.steps}",
        flush=True,
    )
    started = time.monotonic()
    try:
        resumed = resuming(args.resume)
    except Missing as missing:
        return refuse(missing)
    first, w = 1, [0.0] * FEATURES
    if resumed is not None:
        saved = json.loads(resumed.read_text())
        first, w = int(saved["step"]) + 1, [float(v) for v in saved["weights"]]
        print(f"replica {rank}: resumed from step {first - 1} ({resumed})", flush=True)
    xs, ys = dataset()
    shard = list(range(rank, SAMPLES, count))
    rng = random.Random(args.seed * 1000 + rank + first)
    for step in range(first, args.steps + 1):
        batch = rng.sample(shard, min(args.batch_size, len(shard)))
        grad = [0.0] * FEATURES
        for i in batch:
            err = sum(a * b for a, b in zip(xs[i], w, strict=True)) - ys[i]
            for j in range(FEATURES):
                grad[j] += 2 * err * xs[i][j] / len(batch)
        w = [a - args.lr * g for a, g in zip(w, grad, strict=True)]
        if rank == args.fail_rank:
            print(f"replica {rank}: failing on purpose (--fail-rank {rank})", file=sys.stderr)
            return FAILED
        if step % 100 == 0 or step == args.steps:
            now = mse(w, xs, ys)  # and the reporting line `status --live` and `report` read
            report = json.dumps({"step": step, "loss": now if math.isfinite(now) else str(now)})
            print(f"step {step} loss {now:.6g} [sweep-metric] {report}", flush=True)
        if args.step_sleep:
            time.sleep(args.step_sleep)
    loss = mse(w, xs, ys)
    if rank == 0:
        metrics = {
            "final_loss": loss if math.isfinite(loss) else str(loss),
            "steps": args.steps,
            **({"resumed_from": first - 1} if resumed is not None else {}),
            "seconds": round(time.monotonic() - started, 3),
        }
        place = saving(args.checkpoint)
        if place is not None:
            place.mkdir(parents=True, exist_ok=True)
            (place / FILE).write_text(json.dumps({"step": args.steps, "weights": w}) + "\n")
        results = os.environ.get("RESULTS_DIR")
        if results:  # the runner always sets it; run by hand without it, just print
            Path(results).mkdir(parents=True, exist_ok=True)
            (Path(results) / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        else:
            print(f"metrics (set RESULTS_DIR to write metrics.json): {json.dumps(metrics)}")
    print(f"replica {rank} done: final loss {loss:.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
