"""`reviewed-plans`: the pins of the plans reviewed on merged pull requests, for `submit --reviewed`.

Runs in its own workflow job with a read-only token (pull-requests: read), so the job that holds
BEAKER_TOKEN and a write token never talks to the GitHub API.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from runner.commands.common import Subparsers, stderr, write_output


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "reviewed-plans",
        help="in GitHub Actions: what the plans of the merged pull requests showed (for submit --reviewed)",
    )
    parser.add_argument("--output", metavar="FILE", help="write the pins to FILE (default: stdout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return reviewed_plans(args.directory, output=args.output)


def reviewed_plans(directory: str, *, output: str | None = None) -> int:
    from runner.plan import policy
    from runner.plan.catalog import find_root
    from runner.repo import github, review

    event = github.read_event()
    api = review.Api.from_env(os.environ)
    label = policy.read(find_root(Path(directory))).approval_label
    found = review.reviewed_pins(api, event.commits, event.default_branch or "main", label)
    pins = [pin for number in sorted(found.pins) for pin in found.pins[number]]
    text = review.pin_lines(pins)
    write_output(text, output)
    if output:
        github.set_outputs({"pins": text.rstrip("\n")})
    said = ", ".join(f"#{n} ({len(p)} sweep(s))" for n, p in sorted(found.pins.items())) or "none"
    lines = [f"reviewed plans of merged pull requests: {said}"]
    lines += [f"#{n} approves nothing: {why}" for n, why in sorted(found.refused.items())]
    for line in lines:
        stderr(line)
    github.append_summary("".join(f"{line[0].upper()}{line[1:]}.\n\n" for line in lines))
    return 0
