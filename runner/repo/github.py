"""GitHub Actions' environment: the triggering event, the job summary and step outputs; and
the few read-only REST calls plan pinning makes (`Api`).

Workflows stay thin: they run `python -m runner ...`, and this module reads what GitHub provides
(`GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`, `GITHUB_REF`) and writes what GitHub shows
(`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`). Outside Actions every writer is a no-op.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.errors import RunnerError
from runner.plan import COMMENT_MARKER

ALL = ("", "all", "*")
"""What the `manifests` dispatch input may say to mean every manifest under sweeps/."""


@dataclass(frozen=True)
class Dispatch:
    """The inputs of a `workflow_dispatch` run of the submit workflow."""

    paths: tuple[str, ...] = ()
    """Empty: every manifest under sweeps/."""
    dry_run: bool = False
    concurrency: int | None = None
    restart_failed: bool = False
    """Also restart the failed points (`submit --restart-failed`)."""
    unreviewed: bool = False
    """Also submit points that no reviewed plan showed (plan pinning is off for this run)."""


@dataclass(frozen=True)
class Event:
    name: str
    """push, pull_request, workflow_dispatch, ..."""
    ref: str
    """GITHUB_REF, e.g. refs/heads/main."""
    default_branch: str | None
    dispatch: Dispatch | None
    """Set for workflow_dispatch events only."""
    commits: tuple[str, ...] = ()
    """The commits a push brought (its head last); empty for other events."""
    labels: tuple[str, ...] = ()
    """A pull request's labels when the event was sent; empty for other events."""
    head: str = ""
    """A pull request's head commit (the branch's last commit, not the merge ref); else empty."""

    @property
    def branch(self) -> str | None:
        return self.ref.removeprefix("refs/heads/") if self.ref.startswith("refs/heads/") else None


def read_event(environ: Mapping[str, str] = os.environ) -> Event:
    """The event this workflow run was triggered by; a RunnerError outside GitHub Actions."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        raise RunnerError(
            "GITHUB_EVENT_PATH is not set: --github-event works in GitHub Actions only"
        )
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunnerError(f"cannot read the GitHub event at {path}: {exc}") from None
    return parse_event(environ.get("GITHUB_EVENT_NAME", ""), environ.get("GITHUB_REF", ""), payload)


def event_labels(environ: Mapping[str, str] = os.environ) -> tuple[str, ...] | None:
    """The pull request's labels, from the workflow's event (none outside GitHub Actions);
    None in a merge queue, where the pull request's check has decided."""
    if not environ.get("GITHUB_EVENT_PATH"):
        return ()
    event = read_event(environ)
    return None if event.name == "merge_group" else event.labels


def event_head(environ: Mapping[str, str] = os.environ) -> str:
    """The pull request's head commit a plan is of, from the workflow's event; empty outside a
    pull request's workflow (and outside GitHub Actions)."""
    return read_event(environ).head if environ.get("GITHUB_EVENT_PATH") else ""


def parse_event(name: str, ref: str, payload: Mapping[str, Any]) -> Event:
    repository = payload.get("repository") or {}
    dispatch = None
    if name == "workflow_dispatch":
        dispatch = parse_dispatch(payload.get("inputs") or {})
    commits: tuple[str, ...] = ()
    if name == "push":
        shas = [str(c.get("id")) for c in payload.get("commits") or [] if c.get("id")]
        after = str(payload.get("after") or "")
        if after.strip("0"):  # all zeros: the branch was deleted
            shas.append(after)
        commits = tuple(dict.fromkeys(shas))
    pull = payload.get("pull_request") or {}
    labels = tuple(str(label.get("name")) for label in pull.get("labels") or [])
    head = str((pull.get("head") or {}).get("sha") or "")
    return Event(name, ref, repository.get("default_branch"), dispatch, commits, labels, head)


def parse_dispatch(inputs: Mapping[str, Any]) -> Dispatch:
    """Inputs arrive as strings in the event payload ('true', '8'); booleans are accepted too."""
    manifests = str(inputs.get("manifests") or "").strip()
    paths = (
        () if manifests.lower() in ALL else tuple(p for p in re.split(r"[\s,]+", manifests) if p)
    )
    raw = str(inputs.get("concurrency") or "").strip()
    concurrency = None
    if raw:
        try:
            concurrency = int(float(raw))
        except ValueError:
            raise RunnerError(f"dispatch input concurrency must be a number, not {raw!r}") from None
        if concurrency < 1:
            raise RunnerError("dispatch input concurrency must be at least 1")
    return Dispatch(
        paths,
        _flag(inputs, "dry_run"),
        concurrency,
        restart_failed=_flag(inputs, "restart_failed"),
        unreviewed=_flag(inputs, "unreviewed"),
    )


def _flag(inputs: Mapping[str, Any], name: str) -> bool:
    return str(inputs.get(name, "false")).lower() == "true"


def check_submit_branch(event: Event, dry_run: bool) -> None:
    """Submitting is for the default branch, where manifests arrive reviewed; dry runs go anywhere."""
    if dry_run or event.default_branch is None or event.branch == event.default_branch:
        return
    raise RunnerError(
        f"submit runs on the default branch ({event.default_branch}) only, where manifests arrive"
        f" through reviewed pull requests; this run is on {event.ref or 'no branch'}."
        " Dispatch it on the default branch, or tick dry run."
    )


# -- writing ----------------------------------------------------------------------------------


def append_summary(markdown: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Append to the job summary; False when there is none (not in Actions)."""
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return True


def set_outputs(values: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> bool:
    """Write step outputs; multi-line values use a random heredoc delimiter, as GitHub documents."""
    path = environ.get("GITHUB_OUTPUT")
    if not path:
        return False
    lines = []
    for name, value in values.items():
        if "\n" in value:
            delimiter = f"EOF_{uuid.uuid4().hex}"
            lines += [f"{name}<<{delimiter}", value, delimiter]
        else:
            lines.append(f"{name}={value}")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return True


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (`escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """A workflow command's property value (`file=`), escaped as the toolkit does it
    (`escapeProperty`): its message's escapes, and the separators of properties."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, file: str = "", line: int = 0, col: int = 0) -> str:
    """A workflow command such as `::error file=sweeps/a.yaml,line=3,col=5::message`: GitHub shows
    it on that line of the pull request's diff."""
    where = [f"file={_escape_property(file)}"] if file else []
    where += [f"line={line}"] if line else []
    where += [f"col={col}"] if col else []
    props = " " + ",".join(where) if where else ""
    return f"::{level}{props}::{_escape_data(message)}"


def in_actions(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


# -- the REST API, read-only: merged pull requests and their plan comments ---------------------

BOT = "github-actions[bot]"
RECENT_PULLS = 30
"""Recently merged pull requests whose plans count, besides those of the pushed commits."""


@dataclass(frozen=True)
class Merged:
    """A merged pull request as GitHub lists it: its head commit (fixed once merged) and the
    labels it carries now."""

    number: int
    head: str
    labels: frozenset[str]

    @classmethod
    def of(cls, found: Any) -> Merged:
        labels = frozenset(str(x.get("name")) for x in found.get("labels") or ())
        return cls(int(found["number"]), str((found.get("head") or {}).get("sha") or ""), labels)


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

    def merged_pulls(self, commits: Sequence[str], base: str) -> list[Merged]:
        """The merged pull requests the pushed commits belong to, then the last RECENT_PULLS
        merged into `base`: one call per pushed commit and one for the list (each answer
        carries the head commit and the labels)."""
        found = [p for sha in commits for p in self.get(f"commits/{sha}/pulls")]
        query = {"state": "closed", "base": base, "sort": "updated", "direction": "desc"}
        found += self.get("pulls", {**query, "per_page": str(RECENT_PULLS)})
        merged = {int(p["number"]): Merged.of(p) for p in reversed(found) if p.get("merged_at")}
        order = dict.fromkeys(int(p["number"]) for p in found)
        return [merged[n] for n in order if n in merged]

    def last_merge_of(self, path: str, base: str) -> list[Merged]:
        """The merged pull request that last changed `path` on `base` (an automatic search's
        manifest, whose envelope it approved): the path's last commit, then its pull requests."""
        found = self.get("commits", {"path": path, "sha": base, "per_page": "1"})
        if not found:
            return []
        sha = str(found[0].get("sha") or "")
        pulls = self.get(f"commits/{sha}/pulls") if sha else []
        return [Merged.of(p) for p in pulls if p.get("merged_at")]

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
