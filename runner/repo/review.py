"""Plan pinning: a merge submits only the points that a reviewed plan showed.

A pull request's plan comment carries one hidden pin per sweep with points to submit: a digest of
all of them, and a short token for each point its table lists. On merge, the submit workflow
reads the plan comments of the pull requests of the pushed commits (and of recently merged ones,
so a dropped run is repaired by the next) through GitHub's API with a read-only token, and
submits a `+` point only when a pin covers it: the sweep's whole `+` set has a pinned digest, or
the point's token is pinned. Anything else (the cross-term of two pull requests that each changed
one axis, say) is held back and listed as "not in a reviewed plan".

Unlike a Terraform plan file, a pin names points, not a state: a plan made against an empty or
stale ledger pins only what it showed, so a stale plan can never approve more than it showed.
A token covers the point's key and its rendered spec, so editing the template after review is
not covered either.

The comment is text anyone with write access can edit, and GitHub keeps its author when they do.
So it is evidence, not authority: it names the pull request's head commit it was planned for
(`head_line`), and the reviewed job (`reviewed_pins`) reads that head's manifests through the API
and recomputes every point they define, offline and deterministically (the code of
`expand --plan`). A comment whose head is not the merged head approves nothing; a pin approves
only points the merged head defines, and the budget approval only while the pull request has
the approval label. Editing the text can drop approvals, never add one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.core.errors import RunnerError
from runner.plan import COMMENT_MARKER, PlanStatus, Row, SweepPlan

PIN_MARK = "beaker-sweep-runner:reviewed"
HEAD_MARK = "beaker-sweep-runner:planned"
NO_DIGEST = "0" * 64
"""The digest of a checked pin: it approves by its tokens only (no real digest is all zeros)."""
_HEAD = re.compile(r"<!-- " + re.escape(HEAD_MARK) + r" head=([0-9a-f]{7,64}) -->")
TOKEN_HEX = 16
LISTED = 200
"""Tokens listed per sweep, as many as the plan table shows; beyond that only the digest."""
BOT = "github-actions[bot]"
RECENT_PULLS = 30
"""Recently merged pull requests whose plans count, besides those of the pushed commits."""
_PIN = re.compile(
    r"<!-- " + re.escape(PIN_MARK) + r" sweep=(\S+) points=(\d+) sha256=([0-9a-f]{64})"
    r"( approved=budget)?(?: tokens=([0-9a-f,]*))? -->"
)


@dataclass(frozen=True)
class Pin:
    """What one plan showed for one sweep."""

    sweep: str
    points: int
    digest: str
    tokens: frozenset[str]
    approved: bool = False
    """The plan was approved over the budget policy (its pull request had the approval label)."""


@dataclass(frozen=True)
class Review:
    """The plans with every unreviewed `+` point taken out, and those points."""

    plans: tuple[SweepPlan, ...]
    held: tuple[tuple[str, Row], ...]
    """(sweep name, row) of each point held back."""


def _full_token(row: Row) -> str:
    spec = row.rendered.spec_hash if row.rendered else ""
    return hashlib.sha256(f"{row.key}:{spec}".encode()).hexdigest()


def token(row: Row) -> str:
    return _full_token(row)[:TOKEN_HEX]


def digest(rows: Iterable[Row]) -> str:
    return hashlib.sha256("\n".join(sorted(_full_token(r) for r in rows)).encode()).hexdigest()


def _pending(plan: SweepPlan) -> tuple[Row, ...]:
    """Every `+` point a merge approves: those waiting under max_running too, which the
    schedule's top-ups submit later (drafts: none, they never go to Beaker)."""
    if plan.sweep.draft:
        return ()
    return tuple(r for r in plan.rows if r.status == PlanStatus.SUBMIT)


def pins(plans: Sequence[SweepPlan], listed: int = LISTED) -> list[Pin]:
    """The pins of a plan: one per sweep that would submit something, now or in a top-up."""
    found = []
    for plan in plans:
        rows = _pending(plan)
        if rows:
            tokens = frozenset(token(r) for r in rows) if len(rows) <= listed else frozenset()
            found.append(Pin(plan.sweep.name, len(rows), digest(rows), tokens))
    return found


def pin_lines(found: Sequence[Pin]) -> str:
    """Hidden lines for the comment (HTML comments do not render)."""
    lines = []
    for pin in found:
        tokens = f" tokens={','.join(sorted(pin.tokens))}" if pin.tokens else ""
        approved = " approved=budget" if pin.approved else ""
        lines.append(
            f"<!-- {PIN_MARK} sweep={pin.sweep} points={pin.points} sha256={pin.digest}"
            f"{approved}{tokens} -->"
        )
    return "".join(line + "\n" for line in lines)


def head_line(sha: str) -> str:
    """The hidden line naming the pull request's head commit the plan was made for."""
    return f"<!-- {HEAD_MARK} head={sha} -->\n" if sha else ""


def planned_head(text: str) -> str:
    found = _HEAD.search(text)
    return found[1] if found else ""


def parse_pins(text: str) -> list[Pin]:
    return [
        Pin(m[1], int(m[2]), m[3], frozenset(t for t in (m[5] or "").split(",") if t), bool(m[4]))
        for m in _PIN.finditer(text)
    ]


def hold_back(plans: Sequence[SweepPlan], found: Sequence[Pin]) -> Review:
    """Keep the `+` points some pin covers; hold back the rest (drafts submit nothing anyway)."""
    kept: list[SweepPlan] = []
    held: list[tuple[str, Row]] = []
    for plan in plans:
        rows = _pending(plan)
        mine = [p for p in found if p.sweep == plan.sweep.name]
        if not rows or any(p.digest == digest(rows) for p in mine):
            kept.append(plan)
            continue
        tokens = frozenset().union(*(p.tokens for p in mine))
        out = {r.key for r in rows if token(r) not in tokens}
        held += [(plan.sweep.name, r) for r in rows if r.key in out]
        kept.append(SweepPlan(plan.sweep, tuple(r for r in plan.rows if r.key not in out)))
    return Review(tuple(kept), tuple(held))


def held_markdown(review: Review, limit: int = 200) -> str:
    """The job summary's list of held-back points; empty when there are none."""
    if not review.held:
        return ""
    lines = [
        "## Not in a reviewed plan",
        "",
        f"**{len(review.held)} point(s) held back**: no plan comment of a merged pull request"
        " showed them. Open a pull request that changes their sweep (its plan shows them), or"
        " dispatch Submit with `unreviewed` ticked to submit them as they are.",
        "",
        "| sweep | experiment | key | params |",
        "|---|---|---|---|",
    ]
    for sweep, row in review.held[:limit]:
        params = " ".join(f"{k}={v}" for k, v in row.params).replace("|", "\\|")
        lines.append(f"| `{sweep}` | `{row.name}` | `{row.key[:12]}` | {params} |")
    if len(review.held) > limit:
        lines.append(f"\n…and {len(review.held) - limit} more.")
    return "\n".join(lines) + "\n\n"


# -- reading the reviewed plans from GitHub ---------------------------------------------------


@dataclass(frozen=True)
class Api:
    """GitHub's REST API for one repository, with a read-only token."""

    url: str
    repository: str
    token: str
    timeout: float = 30.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Api:
        repository, token = environ.get("GITHUB_REPOSITORY", ""), environ.get("GITHUB_TOKEN", "")
        if not repository or not token:
            raise RunnerError(
                "GITHUB_REPOSITORY and GITHUB_TOKEN must be set to read the reviewed plans"
                " (in the workflow: env GITHUB_TOKEN: ${{ github.token }}, pull-requests: read)"
            )
        return cls(environ.get("GITHUB_API_URL", "https://api.github.com"), repository, token)

    def get(self, path: str, query: Mapping[str, str] | None = None) -> Any:
        """One GET; a RunnerError that names the URL when GitHub cannot answer."""
        url = f"{self.url.rstrip('/')}/repos/{self.repository}/{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(
            url,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "beaker-sweep-runner",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                return json.loads(reply.read().decode("utf-8"))
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RunnerError(f"GitHub API GET {url} failed: {exc}") from None

    def pulls_of(self, sha: str) -> list[int]:
        """Merged pull requests a commit belongs to (the merged commit's pull request)."""
        return [p["number"] for p in self.get(f"commits/{sha}/pulls") if p.get("merged_at")]

    def recently_merged(self, base: str) -> list[int]:
        query = {"state": "closed", "base": base, "sort": "updated", "direction": "desc"}
        found = self.get("pulls", {**query, "per_page": str(RECENT_PULLS)})
        return [p["number"] for p in found if p.get("merged_at")]

    def pull(self, number: int) -> Any:
        return self.get(f"pulls/{number}")

    def files_at(self, sha: str, directory: str = "sweeps") -> dict[str, str]:
        """The text of every file under `directory` at commit `sha` except the ledgers (the
        manifests, their lock files and the budget policy), by path."""
        tree = self.get(f"git/trees/{sha}", {"recursive": "1"})
        paths = [
            e["path"]
            for e in tree.get("tree", ())
            if e.get("type") == "blob"
            and e["path"].startswith(directory + "/")
            and not e["path"].startswith(f"{directory}/ledger/")
        ]
        files = {}
        for path in paths:
            found = self.get(f"contents/{urllib.parse.quote(path)}", {"ref": sha})
            files[path] = base64.b64decode(found.get("content", "")).decode("utf-8")
        return files

    def plan_comment(self, number: int) -> str | None:
        """The body of the plan comment of a pull request, if the plan workflow left one."""
        page = 1
        while True:
            found = self.get(f"issues/{number}/comments", {"per_page": "100", "page": str(page)})
            for comment in found:
                login = (comment.get("user") or {}).get("login")
                body = comment.get("body") or ""
                if login == BOT and body.startswith(COMMENT_MARKER):
                    return str(body)
            if len(found) < 100:
                return None
            page += 1


@dataclass(frozen=True)
class Reviewed:
    pins: Mapping[int, Sequence[Pin]]
    """By pull request: what its plan showed that its merged head defines."""
    refused: Mapping[int, str]
    """By pull request: why its plan comment approves nothing."""


def reviewed_pins(api: Api, commits: Sequence[str], base: str, label: str) -> Reviewed:
    """The pins of the plans of the pushed commits' pull requests and of recent merges, each
    checked against its pull request's merged head (see the module's docstring). `label`: the
    budget policy's approval label."""
    numbers: list[int] = []
    for sha in commits:
        numbers += api.pulls_of(sha)
    numbers += api.recently_merged(base)
    found: dict[int, list[Pin]] = {}
    refused: dict[int, str] = {}
    for number in dict.fromkeys(numbers):
        body = api.plan_comment(number)
        if body is None:
            continue
        pull = api.pull(number)
        head, planned = str((pull.get("head") or {}).get("sha") or ""), planned_head(body)
        if not head or planned != head:
            shown = planned[:12] or "no commit"
            refused[number] = f"its plan comment is of {shown}, not of its head {head[:12]}"
            continue
        labels = {str(x.get("name")) for x in pull.get("labels") or ()}
        found[number] = checked(parse_pins(body), defined(api.files_at(head)), label in labels)
    return Reviewed(found, refused)


def defined(files: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """The token of every point each sweep defines in these files (path -> text), as
    `expand --plan` renders them against an empty ledger; a sweep with problems defines none."""
    import tempfile
    from pathlib import Path

    from runner.plan import catalog

    with tempfile.TemporaryDirectory(prefix="sweeps-at-head-") as tmp:
        for path, text in files.items():
            target = Path(tmp, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        Path(tmp, "sweeps").mkdir(exist_ok=True)
        plans, _ = catalog.load(Path(tmp), []).readable_plans()
        return {p.sweep.name: frozenset(token(r) for r in p.rows if r.rendered) for p in plans}


def checked(shown: Sequence[Pin], tokens: Mapping[str, frozenset[str]], labeled: bool) -> list[Pin]:
    """The pins a comment shows, cut down to the points the head defines: listed tokens that it
    defines, or (a pin with only a digest, for a sweep too large to list) every point it
    defines; approved over the budget only while the pull request has the label."""
    out = []
    for pin in shown:
        mine = tokens.get(pin.sweep, frozenset())
        kept = pin.tokens & mine if pin.tokens else mine
        out.append(Pin(pin.sweep, len(kept), NO_DIGEST, kept, pin.approved and labeled))
    return out
