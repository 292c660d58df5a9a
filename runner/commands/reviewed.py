"""`reviewed-plans`: the pins of the plans reviewed on merged pull requests, for `submit --reviewed`.

Runs in its own workflow job with a read-only token (pull-requests: read), so the job that holds
BEAKER_TOKEN and a write token never talks to the GitHub API.
"""

from __future__ import annotations

import argparse
import os

from runner.commands.common import Subparsers, stderr, write_output


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "reviewed-plans",
        help="in GitHub Actions: what the plans of the merged pull requests showed (for submit --reviewed)",
    )
    parser.add_argument("--output", metavar="FILE", help="write the pins to FILE (default: stdout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return reviewed_plans(output=args.output)


def reviewed_plans(*, output: str | None = None) -> int:
    from runner.repo import github, review

    event = github.read_event()
    api = review.Api.from_env(os.environ)
    found = review.reviewed_pins(api, event.commits, event.default_branch or "main")
    pins = [pin for number in sorted(found) for pin in found[number]]
    text = review.pin_lines(pins)
    write_output(text, output)
    if output:
        github.set_outputs({"pins": text.rstrip("\n")})
    said = ", ".join(f"#{n} ({len(p)} sweep(s))" for n, p in sorted(found.items())) or "none"
    stderr(f"reviewed plans of merged pull requests: {said}")
    github.append_summary(f"Reviewed plans of merged pull requests: {said}.\n")
    return 0
