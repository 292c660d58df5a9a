"""Never a silent hang: with Beaker refusing every connection (the fake, stopped: a TCP port with
nothing listening), each command that talks to it ends within its deadline, `--timeout` or its
default, with one line naming Beaker as unreachable and what was done, exit 5.

The defaults are proved on a clock that jumps (tests/clock.py): each command is called in
process with it and the test asserts what the clock says when it returned, never how long it
took. One test goes through `main` in real time with a two-second timeout, for the line as the
user reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runner.backends import Transient
from runner.cli import main
from runner.commands.cancel import CancelArgs, cancel
from runner.commands.lock import lock
from runner.commands.logs import LogsArgs, logs
from runner.commands.propose import propose
from runner.commands.report import ReportArgs, report
from runner.commands.status import StatusArgs, status
from runner.commands.submit import submit
from runner.commands.submit_args import SubmitArgs
from runner.commands.wait import WaitArgs, wait
from runner.core.errors import Exit
from runner.observe.live import Live
from tests.clock import VirtualClock
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, add_six_clusters, eight_gpus, halving, write_manifest

Command = Callable[[Path, str | None, VirtualClock], object]
"""A command run in process on `root`, with `--timeout` (None: its default), on a clock."""

COMMANDS: dict[str, Command] = {
    "status --live": lambda root, t, c: status(root, StatusArgs(live=Live.ON, timeout=t), c),
    "report --live": lambda root, t, c: report(root, ReportArgs(live=Live.ON, timeout=t), c),
    "wait": lambda root, t, c: wait(root, WaitArgs(timeout=t), c),
    "cancel": lambda root, t, c: cancel(root, CancelArgs(("sweeps/exact.yaml",), timeout=t), c),
    "logs": lambda root, t, c: logs(root, LogsArgs(_first(root), timeout=t), c),
    "propose": lambda root, t, c: propose(
        root, ["sweeps/halving.yaml"], "beaker", (t, None), clock=c
    ),
    "lock": lambda root, t, c: lock(root / "selector", ["sweeps/h100.yaml"], t, None, c),
    "submit": lambda root, t, c: submit(root / "fresh", SubmitArgs(timeout=_seconds(t)), c),
}
DEFAULTS = {"wait": 180.0}
"""Where Beaker down from the start ends each command by default: the unreachable limit (180 s),
which comes before every default deadline (10 min; submit's 1 h); `wait` has no deadline."""
H100 = eight_gpus(
    "h100", "  clusters: ['ai2/*']\n  gpu_type: [h100]\n  cluster_tags: [storage:weka]\n", "[0.1]"
)
URGENT = eight_gpus("urgent", "  clusters: [ai2/jupiter]\n  priority: urgent\n", "[0.1, 0.2]")


def _seconds(timeout: str | None) -> float | None:
    return None if timeout is None else float(timeout.removesuffix("s"))


def _first(root: Path) -> str:
    """The first experiment the ledger of `exact` records."""
    ledger = (root / "sweeps" / "ledger" / "exact.jsonl").read_text().splitlines()
    return next(line.split('"experiment": "')[1].split('"')[0] for line in ledger[1:])


@pytest.fixture
def down(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    """Sweeps submitted to the fake (`exact`, a halving's rung), a cluster selector not locked
    yet (in selector/) and a sweep with a priority never submitted (in fresh/); then the fake
    stops."""
    add_six_clusters(fake_beaker)
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    write_manifest(tmp_path, halving(), "halving.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    write_manifest(tmp_path / "selector", H100, "h100.yaml")
    write_manifest(tmp_path / "fresh", URGENT, "urgent.yaml")
    fake_beaker.stop()
    return tmp_path


@pytest.mark.parametrize("timeout", ["20s", None], ids=["timeout", "default"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_ends_within_its_deadline_with_one_line_exit_5(
    down: Path, fake_beaker: FakeBeaker, name: str, timeout: str | None
) -> None:
    clock = VirtualClock()
    start = clock.now()
    with pytest.raises(Transient) as raised:
        COMMANDS[name](down, timeout, clock)
    lasted = 20.0 if timeout else DEFAULTS.get(name, 180.0)
    assert clock.now() == pytest.approx(start + lasted)  # what the clock says: no later
    said = str(raised.value)
    shown = "20s" if timeout else "3m"
    assert said.startswith(
        f"Beaker at {fake_beaker.agent_address} unreachable for {shown} (connection refused): "
    )
    assert said.endswith("; run it again") and "\n" not in said
    assert raised.value.exit_code == Exit.INCOMPLETE


def test_the_line_as_the_user_reads_it(
    down: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-C", str(down), "status", "--backend", "beaker", "--timeout", "2s"]
    assert main(argv) == Exit.INCOMPLETE
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("Beaker unreachable (connection refused), retrying in 1 s, attempt 2:")
    assert err[-1] == (
        f"error: Beaker at {fake_beaker.agent_address} unreachable for 2s (connection refused):"
        " workspace ai2/sweeps-test: nothing was changed; run it again"
    )


def test_a_call_that_never_answers_is_abandoned_at_the_deadline(
    tmp_path: Path, fake_beaker: FakeBeaker
) -> None:
    """No refusal, no retry: the listing is taken and never answered (held 10 min). The clock
    reaches the deadline while the call hangs, and the command ends there."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    fake_beaker.hold_reply("ListWorkloads", 600)
    clock = VirtualClock()
    start = clock.now()
    with pytest.raises(Transient) as raised:
        status(tmp_path, StatusArgs(timeout="20s"), clock)
    assert clock.now() == pytest.approx(start + 20)
    assert str(raised.value) == (
        f"Beaker at {fake_beaker.agent_address} did not answer in 20s: list experiments of"
        " exact: nothing was changed; run it again"
    )


@pytest.mark.parametrize("bad", ["5x", "-3", "soon", "1h30"])
def test_a_bad_duration_is_one_line_exit_1_before_anything_is_read(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    for argv in (
        ["status", "--timeout", bad],
        ["report", "--max-unreachable", bad],
        ["logs", "exact-x", "--timeout", bad],
        ["submit", "--dry-run", "--timeout", bad],
        ["wait", "--interval", bad],
    ):
        capsys.readouterr()
        assert main(["-C", str(tmp_path), *argv]) == Exit.USER_ERROR, argv
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"{bad!r}: not a duration" in err, err


def test_every_duration_option_takes_the_same_syntax(tmp_path: Path) -> None:
    from runner.cli import build_parser
    from runner.commands.submit_args import from_namespace

    argv = ["-C", str(tmp_path), "submit", "--timeout", "1h30m", "--max-unreachable", "5m"]
    args = from_namespace(build_parser().parse_args([*argv, "--http-timeout", "90"]))
    assert (args.timeout, args.max_unreachable, args.http_timeout) == (5400.0, 300.0, 90.0)
