"""A stand-in Slack incoming webhook on 127.0.0.1: records each message, or fails as told.

`mode`: "ok" (200), "fail" (500, not taken), "drop" (reads the message, then closes the
connection without a reply: a lost reply). Bodies over 64 KiB are refused with 413, as a bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tests.loopback import Loopback, QuietHandler

LIMIT = 64 * 1024


@dataclass
class Webhook:
    mode: str = "ok"
    received: list[str] = field(default_factory=list)
    """The text of every message that reached it, taken or not."""
    taken: list[str] = field(default_factory=list)
    """The messages answered with 200."""

    def __post_init__(self) -> None:
        hook = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > LIMIT:
                    self.send_response(413)
                    self.end_headers()
                    return
                text = json.loads(self.rfile.read(length))["text"]
                hook.received.append(text)
                if hook.mode == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                status = 200 if hook.mode == "ok" else 500
                if status == 200:
                    hook.taken.append(text)
                body = b"ok" if status == 200 else b"internal_error"
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.http = Loopback(Handler)

    @property
    def url(self) -> str:
        return f"{self.http.url}/services/T0/B0/secret"

    def close(self) -> None:
        self.http.close()
