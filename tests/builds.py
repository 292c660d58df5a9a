"""Shared set-up for the tests that build this project and run child pip, git and the installed
command (tests/test_distribution.py, tests/test_release.py).

A child process gets `child_env`, never the test session's environment: the session points
REQUESTS_CA_BUNDLE and GRPC_DEFAULT_SSL_ROOTS_FILE_PATH at the fake Beaker's CA (and tests set
Beaker and GitHub credentials), and a pip that trusted that CA could not reach the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import PROJECT

PIP_CACHE = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")
"""pip's cache, read at import, before the autouse fixture points HOME at a temporary directory:
warm, an install takes seconds; empty (PIP_CACHE_DIR=<an empty directory>), the tests still pass."""

TRUST = (
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
)
"""Which CAs a TLS client trusts: the session sets them to the fake Beaker's. pip's own setting
(PIP_CERT, or `cert` in pip.conf) is kept: it is how a machine points pip at its index's CA."""
CREDENTIALS = ("BEAKER_TOKEN", "BEAKER_ADDR", "GITHUB_TOKEN", "GH_TOKEN", "SWEEP_SLACK_WEBHOOK")
SESSION = ("PYTHONPATH", "VIRTUAL_ENV", "CI", "GITHUB_ACTIONS")


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """environ without the CAs the session trusts and without credentials (tests/gitworld.py's
    git runs with it too)."""
    return {k: v for k, v in environ.items() if k not in (*TRUST, *CREDENTIALS)}


def child_env(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child pip, git or installed command: this one without the fake's
    CA, credentials, the test venv, the source tree or pre-commit's settings; HOME is `home`."""
    env = {
        k: v
        for k, v in without_secrets(os.environ if environ is None else environ).items()
        if k not in SESSION and not k.startswith(("PRE_COMMIT", "GITHUB_"))
    }
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    env.update(HOME=str(home), PIP_CACHE_DIR=str(PIP_CACHE), BEAKER_CONFIG=str(home / "none.yml"))
    return env


def run(argv: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def ok(argv: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    done = run(argv, cwd, env)
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def tagged_source(tmp: Path, tag: str | None, changes: Mapping[str, str] | None = None) -> Path:
    """The files git would commit from this tree (tracked and new), away from its build dirs,
    with `changes` (path -> text), as a repository of one commit tagged `tag` (None: no tag, a
    development build): what the release workflow checks out."""
    env = without_secrets(os.environ)
    listed = ok(["git", "ls-files", "-co", "--exclude-standard"], PROJECT, env)
    copy = tmp / "source"
    for name in listed.splitlines():
        if (PROJECT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_bytes((PROJECT / name).read_bytes())
    for name, text in (changes or {}).items():
        (copy / name).write_text(text, encoding="utf-8")
    tagging = [["tag", "-a", tag, "-m", f"release {tag}"]] if tag is not None else []
    for argv in (
        ["init", "--quiet", "--initial-branch", "main"],
        ["add", "-A"],
        ["commit", "--quiet", "--no-verify", "-m", "the tree under test"],
        *tagging,
    ):
        ok(["git", *argv], copy, env)
    return copy
