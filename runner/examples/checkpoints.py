"""Where the example trainers save a checkpoint and where they resume one, as a successive
halving's points are told (standard library only, as a trainer of your own would do it).

The runner gives every point of a halving with `params.fidelity.checkpoint` the path it writes
its checkpoint to (`SWEEP_CHECKPOINT`, `{checkpoint}`) and a promoted point the path its parent
wrote one to (`SWEEP_PARENT_CHECKPOINT`, `{parent_checkpoint}`); a promoted point also carries
`SWEEP_PARENT_KEY`, which is what tells it to resume. Told to resume, a trainer must never start
over: a promoted point that retrains from step 0 costs the full length and looks like a
success. So a missing checkpoint is one line on stderr, with the marker `status` recognises,
and exit 66 (EX_NOINPUT: an input it needs is not there):

    [sweep-checkpoint-missing] /weka/.../halving-0a1b2c3d4e5f: told to resume (SWEEP_PARENT_KEY
    is set) from this checkpoint, and there is none: not starting over
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MISSING = "[sweep-checkpoint-missing]"
"""The line's marker (`runner.observe.live.CHECKPOINT_MISSING` reads it; a test keeps them one)."""
NO_INPUT = 66
"""The exit code of a run told to resume that has nothing to resume (sysexits' EX_NOINPUT)."""
FILE = "checkpoint.json"
"""What the examples write into a checkpoint directory."""


class Missing(Exception):
    """Told to resume, and nothing to resume from: the one line to print."""


def saving(given: str) -> Path | None:
    """The directory to write this run's checkpoint into: `--checkpoint`, else
    `SWEEP_CHECKPOINT`; None when neither says (a run by hand, or a halving without
    `params.fidelity.checkpoint`)."""
    path = given or os.environ.get("SWEEP_CHECKPOINT", "")
    return Path(path) if path else None


def resuming(given: str) -> Path | None:
    """The checkpoint file to resume from: None when the run is not told to resume (no
    `SWEEP_PARENT_KEY`: rung 0, or a run by hand without `--resume`). Missing when it is told
    to and the checkpoint (`--resume`, else `SWEEP_PARENT_CHECKPOINT`) is not there, or none
    is named."""
    told = os.environ.get("SWEEP_PARENT_KEY", "")
    path = given or os.environ.get("SWEEP_PARENT_CHECKPOINT", "")
    if not told and not given:
        return None
    why = "told to resume (SWEEP_PARENT_KEY is set)" if told else "told to resume (--resume)"
    if not path:
        raise Missing(
            f"{MISSING} (none named): {why}, and no checkpoint is named: set"
            " params.fidelity.checkpoint (SWEEP_PARENT_CHECKPOINT) or pass --resume PATH; not"
            " starting over"
        )
    found = Path(path) / FILE
    if not found.is_file():
        raise Missing(
            f"{MISSING} {path}: {why} from this checkpoint, and there is none: not starting over"
        )
    return found


def refuse(missing: Missing) -> int:
    """Say why the run does not start, in one line on stderr; the exit code."""
    print(missing, file=sys.stderr, flush=True)
    return NO_INPUT
