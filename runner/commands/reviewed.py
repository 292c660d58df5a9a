"""`reviewed-plans`: the pins of the plans reviewed on merged pull requests, for `submit --reviewed`.

Runs in its own workflow job with a read-only token (pull-requests: read), so the job that holds
BEAKER_TOKEN and a write token never talks to the GitHub API. Its GitHub calls do not grow with
the files under sweeps/: one per pushed commit, one for the recent merges and one per pull
request with a plan comment; each merged head is read with one `git fetch` (runner/repo/review.py).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.commands.common import stderr, write_output
from runner.core.errors import Exit
from runner.ledger import LEDGER_DIR
from runner.plan import SweepPlan, catalog, envelope, policy
from runner.plan.catalog import SWEEPS_DIR
from runner.repo import github, gitrepo, review
from runner.repo.github import Api, Merged
from runner.repo.review import Pin


def run(args: argparse.Namespace) -> int:
    return reviewed_plans(args.directory, output=args.output)


def reviewed_plans(directory: str, *, output: str | None = None) -> int:

    event = github.read_event()
    api = github.Api.from_env(os.environ)
    root = catalog.find_root(Path(directory))
    label = policy.read(root).approval_label
    base = event.default_branch or "main"
    found = reviewed_pins(api, root, event.commits, base, label)
    plans, _ = catalog.load(root, []).readable_plans()  # the `+` points of this checkout
    found = _with_envelopes(api, root, found, plans, (base, label))
    pins = review.approvals(
        plans, [pin for number in sorted(found.pins) for pin in found.pins[number]]
    )
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
    return Exit.OK


@dataclass(frozen=True)
class Reviewed:
    pins: Mapping[int, Sequence[Pin]]
    """By pull request: what its plan showed that its merged head defines."""
    refused: Mapping[int, str]
    """By pull request: why its plan comment approves nothing."""


def _with_envelopes(
    api: Api, root: Path, found: Reviewed, plans: Sequence[SweepPlan], at: tuple[str, str]
) -> Reviewed:
    """An automatic search whose envelope no recent merge's pin carries: the pins of the pull
    request that last changed its manifest too (its envelope was approved there, however many
    merges ago), checked the same way. Two calls and a comment's per such sweep."""
    base, label = at
    sealed = {p.envelope for pins in found.pins.values() for p in pins}
    wanted = [
        p
        for p in plans
        if p.sweep.search.auto and not p.sweep.draft and envelope.digest(p) not in sealed
    ]
    pulls = [pull for p in wanted for pull in api.last_merge_of(str(p.sweep.path), base)]
    pulls = [pull for pull in pulls if pull.number not in found.pins]
    if not pulls:
        return found
    more = _checked(api, root, pulls, label)
    return Reviewed({**found.pins, **more.pins}, {**more.refused, **found.refused})


def reviewed_pins(api: Api, root: Path, commits: Sequence[str], base: str, label: str) -> Reviewed:
    """The pins of the plans of the pushed commits' pull requests and of recent merges, each
    checked against its pull request's merged head, read with git from `origin` (GitHub's
    contents API would take a call per file and return files over 1 MB empty). `label`: the
    budget policy's approval label."""
    return _checked(api, root, api.merged_pulls(commits, base), label)


def _checked(api: Api, root: Path, pulls: Sequence[Merged], label: str) -> Reviewed:
    """The pins of these merged pull requests' plans, each checked against its merged head."""
    shown: dict[int, tuple[str, bool, list[Pin]]] = {}
    refused: dict[int, str] = {}
    for pull in pulls:
        body = api.plan_comment(pull.number)
        if body is None:
            continue
        planned = review.planned_head(body)
        if not pull.head or planned != pull.head:
            shown_as = planned[:12] or "no commit"
            refused[pull.number] = (
                f"its plan comment is of {shown_as}, not of its head {pull.head[:12]}"
            )
            continue
        shown[pull.number] = (pull.head, label in pull.labels, review.parse_pins(body))
    gitrepo.fetch_commits(root, sorted({head for head, _, _ in shown.values()}), api.token)
    ledgers = str(LEDGER_DIR)
    found = {}
    for number, (head, labeled, pins) in shown.items():
        files = gitrepo.files_at(root, head, SWEEPS_DIR, skip=ledgers)
        there = review.at_head(files, review.named(pins))
        found[number] = review.checked(pins, there.tokens, labeled, there.envelopes)
    return Reviewed(found, refused)
