"""A stand-in for the parts of GitHub's REST API the workflows use, on 127.0.0.1.

Pull requests (merged or not, with the commits they landed as, their head commit and labels; a
commit's pull requests, those it landed or heads; the commits that changed a path),
their comments (listed in pages with a Link header, created and updated; over 65 536 characters
is refused with 422, as GitHub does), a commit's tree and file contents (read from `origin`, a
bare repository, with git; a file over 1 MB comes back empty with `"encoding": "none"`, as from
GitHub), and tokens: a request without the right one gets 401. `requests` records every call.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.loopback import Loopback, QuietHandler

BOT = "github-actions[bot]"
COMMENT_LIMIT = 65_536
CONTENTS_LIMIT = 1_048_576
"""The contents API returns larger files with `"encoding": "none"` and `"content": ""`."""


@dataclass
class FakeGitHub:
    repository: str = "ai2/sweeps"
    token: str = "ghs_job_token"
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    origin: Path | None = None
    """The bare repository the trees and contents endpoints read."""
    lose_pull_creates: int = 0
    """Fault: the next creates of a pull request commit it, then answer 502 (the reply lost)."""
    _next_id: int = 1000

    def __post_init__(self) -> None:
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                fake._serve(self, "GET")

            def do_POST(self) -> None:
                fake._serve(self, "POST")

            def do_PATCH(self) -> None:
                fake._serve(self, "PATCH")

        self.http = Loopback(Handler)

    @property
    def url(self) -> str:
        return self.http.url

    def close(self) -> None:
        self.http.close()

    # -- test helpers ---------------------------------------------------------------------------

    def open_pull(self, number: int) -> None:
        self.pulls[number] = {"number": number, "merged_at": None, "commits": []}

    def merged(self, number: int, sha: str) -> None:
        pull = self.pulls.setdefault(number, {"number": number, "commits": []})
        pull["merged_at"] = f"2025-01-01T00:00:{number % 60:02d}Z"
        pull["commits"].append(sha)

    def comment(self, number: int, body: str, login: str = BOT) -> int:
        self._next_id += 1
        self.comments.setdefault(number, []).append(
            {"id": self._next_id, "body": body, "user": {"login": login}}
        )
        return self._next_id

    def bodies(self, number: int) -> list[str]:
        return [c["body"] for c in self.comments.get(number, [])]

    # -- serving --------------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(handler.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.requests.append((method, handler.path))
        if handler.headers.get("Authorization") not in (
            f"Bearer {self.token}",
            f"token {self.token}",
        ):
            return _reply(handler, 401, {"message": "Bad credentials"})
        prefix = f"/repos/{self.repository}/"
        if not url.path.startswith(prefix):
            return _reply(handler, 404, {"message": "Not Found"})
        path = url.path[len(prefix) :]
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}") if length else {}
        if method == "GET" and (m := re.fullmatch(r"commits/(\w+)/pulls", path)):
            # GitHub lists a pull request for the commits it merged and for those of its branch
            found = [
                p for p in self.pulls.values() if m[1] in p["commits"] or p.get("head") == m[1]
            ]
            return _reply(handler, 200, [_pull(p) for p in found])
        if method == "GET" and path == "commits":  # the commits that changed a path, newest first
            limit = ["-n", query["per_page"]] if "per_page" in query else []
            shas = self._git("log", "--format=%H", *limit, query["sha"], "--", query["path"])
            return _reply(handler, 200, [{"sha": sha} for sha in shas.split()])
        if method == "GET" and (m := re.fullmatch(r"pulls/(\d+)", path)):
            pull = self.pulls.get(int(m[1]))
            if pull is None:
                return _reply(handler, 404, {"message": "Not Found"})
            return _reply(handler, 200, _pull(pull))
        if method == "GET" and (m := re.fullmatch(r"git/trees/(\w+)", path)):
            listed = self._git("ls-tree", "-r", m[1]).splitlines()
            tree = [{"path": line.split("\t", 1)[1], "type": line.split()[1]} for line in listed]
            return _reply(handler, 200, {"sha": m[1], "tree": tree, "truncated": False})
        if method == "GET" and (m := re.fullmatch(r"contents/(.+)", path)):
            text = self._git("show", f"{query['ref']}:{m[1]}")
            data = text.encode()
            if len(data) > CONTENTS_LIMIT:  # GitHub: 1-100 MB files come without their content
                empty = {"path": m[1], "size": len(data), "encoding": "none", "content": ""}
                return _reply(handler, 200, empty)
            content = base64.b64encode(data).decode()
            return _reply(handler, 200, {"path": m[1], "encoding": "base64", "content": content})
        if method == "GET" and path == "pulls" and "head" in query:  # one branch's, any state
            branch = query["head"].split(":", 1)[-1]
            wanted = query.get("state", "open")
            found = [
                _pull(p)
                for p in self.pulls.values()
                if p.get("head_ref") == branch and wanted in ("all", p.get("state", "open"))
            ]
            return _reply(handler, 200, found)
        if method == "POST" and path == "pulls":
            number = max([*self.pulls, *self.comments, 0]) + 1
            self.pulls[number] = {
                "number": number,
                "merged_at": None,
                "commits": [],
                "state": "open",
                "head_ref": body["head"],
                "base": body["base"],
                "title": body["title"],
                "body": body["body"],
            }
            if self.lose_pull_creates:
                self.lose_pull_creates -= 1
                return _reply(handler, 502, {"message": "Bad Gateway (the pull request was made)"})
            return _reply(handler, 201, _pull(self.pulls[number]))
        if method == "PATCH" and (m := re.fullmatch(r"pulls/(\d+)", path)):
            pull = self.pulls[int(m[1])]
            pull.update({k: body[k] for k in ("title", "body") if k in body})
            return _reply(handler, 200, _pull(pull))
        if method == "GET" and path == "pulls":
            merged = [p for p in self.pulls.values() if p.get("merged_at")]
            merged.sort(key=lambda p: p["number"], reverse=True)
            return _reply(
                handler, 200, [_pull(p) for p in merged[: int(query.get("per_page", 30))]]
            )
        if m := re.fullmatch(r"issues/(\d+)/comments", path):
            number = int(m[1])
            if method == "GET":
                return self._page(handler, url.path, self.comments.get(number, []), query)
            if len(body.get("body", "")) > COMMENT_LIMIT:
                return _reply(handler, 422, _too_long())
            return _reply(handler, 201, self._find(self.comment(number, body["body"])))
        if method == "PATCH" and (m := re.fullmatch(r"issues/comments/(\d+)", path)):
            comment = self._find(int(m[1]))
            if len(body.get("body", "")) > COMMENT_LIMIT:
                return _reply(handler, 422, _too_long())
            comment["body"] = body["body"]
            return _reply(handler, 200, comment)
        return _reply(handler, 404, {"message": "Not Found"})

    def _git(self, *args: str) -> str:
        assert self.origin is not None, "FakeGitHub(origin=...) serves trees and contents"
        done = subprocess.run(
            ["git", *args], cwd=self.origin, capture_output=True, text=True, check=True
        )
        return done.stdout

    def _find(self, comment_id: int) -> dict[str, Any]:
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == comment_id:
                    return comment
        raise KeyError(comment_id)

    def _page(
        self, handler: BaseHTTPRequestHandler, path: str, items: list[Any], query: dict[str, str]
    ) -> None:
        size, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        chunk = items[(page - 1) * size : page * size]
        links = {}
        if page * size < len(items):
            links["Link"] = f'<{self.url}{path}?per_page={size}&page={page + 1}>; rel="next"'
        _reply(handler, 200, chunk, links)


def _pull(pull: dict[str, Any]) -> dict[str, Any]:
    """A pull request as GitHub answers it, in a list or alone: its head commit and labels too."""
    keys = ("state", "title", "body")
    head = {"sha": pull.get("head", "")}
    if "head_ref" in pull:
        head["ref"] = pull["head_ref"]
    return {
        "number": pull["number"],
        "merged_at": pull.get("merged_at"),
        **{k: pull[k] for k in keys if k in pull},
        "head": head,
        "labels": [{"name": name} for name in pull.get("labels", ())],
    }


def _too_long() -> dict[str, Any]:
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "IssueComment",
                "code": "custom",
                "field": "body",
                "message": "body is too long (maximum is 65536 characters)",
            }
        ],
        "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        "status": "422",
    }


def _reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)
