"""``python -m tests.fake_beaker``: serve a fake Beaker until SIGTERM/SIGINT, for benchmarks.

Prints one JSON line with the client env on stdout, then serves. Call counters are at
``GET {BEAKER_ADDR}/_fake/stats``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from .certs import mint_bundle
from .server import FakeBeaker


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_beaker", description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every call")
    parser.add_argument(
        "--workspace",
        action="append",
        default=[],
        help="workspace org/name to create (repeatable; default ai2/sweeps-test)",
    )
    parser.add_argument("--rate-limit", type=float, default=None, help="max creates per second")
    parser.add_argument("--page-size", type=int, default=50, help="max items per list page")
    parser.add_argument("--user", default="fake-user")
    parser.add_argument("--token", default="fake-token")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with tempfile.TemporaryDirectory(prefix="fake-beaker-") as tmp:
        fake = FakeBeaker(
            user=args.user,
            token=args.token,
            page_size=args.page_size,
            latency=args.latency,
            certs=mint_bundle(Path(tmp) / "certs"),
            workdir=Path(tmp) / "config",
        )
        for workspace in args.workspace or ["ai2/sweeps-test"]:
            fake.add_workspace(workspace)
        fake.rate_limit(args.rate_limit)
        with fake:
            sys.stdout.write(json.dumps(fake.env, sort_keys=True) + "\n")
            sys.stdout.flush()
            while not done.wait(0.5):
                pass
    return 0
