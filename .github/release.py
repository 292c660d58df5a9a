"""The steps of a release (.github/workflows/release.yml) that are more than one command.

    python .github/release.py notes vX.Y.Z       the version's section of CHANGELOG.md: the release notes
    python .github/release.py check vX.Y.Z DIST  DIST's sdist and wheel are that version and ship the
                                                 schemas; the wheel, installed in a new virtual
                                                 environment, says so and its `init` pins the tag
    python .github/release.py latest             the newest released version in CHANGELOG.md

Standard library only: it runs before anything is installed. A problem is one line on stderr and
exit 1. The changelog keeps https://keepachangelog.com's shape: `## [X.Y.Z] - YYYY-MM-DD`
sections, newest first, under an `## [Unreleased]` one (docs/releasing.md).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "beaker_sweep_runner"
TAG = re.compile(r"v(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)")
HEADING = re.compile(r"## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*")
LINK = re.compile(r"\[[^\]]+\]: \S+")
"""A link reference definition: the links of the headings, after the last section."""


class ReleaseError(Exception):
    """What stops a release, in one line."""


def version_of(tag: str) -> str:
    """The version a tag releases: `v1.2.3` -> `1.2.3` (also `v1.2.3rc1`)."""
    match = TAG.fullmatch(tag)
    if match is None:
        raise ReleaseError(f"{tag!r} is not a release tag: vX.Y.Z (e.g. v0.2.0, or v0.2.0rc1)")
    return match[1]


def _sections(changelog: str) -> dict[str, tuple[str | None, str]]:
    """version -> (its date, its text), in the file's order."""
    dates: dict[str, str | None] = {}
    lines: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in changelog.splitlines():
        heading = HEADING.fullmatch(line)
        if heading is not None:
            dates[heading["version"]] = heading["date"]
            current = lines[heading["version"]] = []
        elif line.startswith("## ") or LINK.fullmatch(line):
            current = None
        elif current is not None:
            current.append(line)
    return {version: (dates[version], "\n".join(lines[version])) for version in dates}


def notes(changelog: str, version: str) -> str:
    """The text of a released version's section, for its GitHub release."""
    sections = _sections(changelog)
    if version not in sections:
        raise ReleaseError(
            f"CHANGELOG.md has no section `## [{version}] - YYYY-MM-DD`: move the [Unreleased]"
            " entries under it (docs/releasing.md)"
        )
    date, text = sections[version]
    if date is None:
        raise ReleaseError(
            f"CHANGELOG.md: `## [{version}]` has no date: `## [{version}] - YYYY-MM-DD`"
        )
    if not text.strip():
        raise ReleaseError(f"CHANGELOG.md: the section of {version} is empty")
    return text.strip() + "\n"


def latest(changelog: str) -> str:
    """The newest released version (the first dated section)."""
    for version, (date, _) in _sections(changelog).items():
        if date is not None:
            return version
    raise ReleaseError("CHANGELOG.md has no released version yet")


def _run(argv: Sequence[str | Path], cwd: Path) -> str:
    """Run a command of the check: the wheel's own code, never a source tree on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        shown = " ".join(str(a) for a in argv)
        raise ReleaseError(f"`{shown}` exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def _one(dist: Path, name: str) -> Path:
    found = sorted(dist.glob("*.whl" if name.endswith(".whl") else "*.tar.gz"))
    if [p.name for p in found] != [name]:
        raise ReleaseError(f"{dist} holds {[p.name for p in found]}, not [{name!r}]")
    return found[0]


def check_files(dist: Path, version: str) -> Path:
    """The sdist and the wheel are this version and the wheel holds every schema the sdist
    holds; returns the wheel."""
    wheel = _one(dist, f"{DISTRIBUTION}-{version}-py3-none-any.whl")
    sdist = _one(dist, f"{DISTRIBUTION}-{version}.tar.gz")
    with tarfile.open(sdist) as archive:
        schemas = {
            Path(n).name
            for n in archive.getnames()
            if re.fullmatch(r"[^/]+/schemas/[^/]+\.json", n)
        }
    shipped = set(zipfile.ZipFile(wheel).namelist())
    metadata = zipfile.ZipFile(wheel).read(f"{DISTRIBUTION}-{version}.dist-info/METADATA").decode()
    if f"\nVersion: {version}\n" not in metadata:
        raise ReleaseError(f"{wheel.name}: its METADATA does not say Version: {version}")
    if "sweep.schema.json" not in schemas:
        raise ReleaseError(f"{sdist.name} has no schemas/sweep.schema.json")
    missing = sorted(s for s in schemas if f"runner/schemas/{s}" not in shipped)
    if missing:
        raise ReleaseError(f"{wheel.name} lacks runner/schemas/ {missing}")
    return wheel


def check_installed(wheel: Path, version: str, tag: str, work: Path) -> None:
    """The wheel in a new virtual environment: `sweep-runner --version` names the version and
    `sweep-runner init` writes workflows that call this tag (and the schema from the wheel)."""
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], work)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            venv / "bin" / "python",
            "install",
            "--quiet",
            wheel,
        ],
        work,
    )
    tool = venv / "bin" / "sweep-runner"
    said = _run([tool, "--version"], work)
    if said != f"sweep-runner {version}\n":
        raise ReleaseError(
            f"the installed wheel says {said.strip()!r}, not 'sweep-runner {version}'"
        )
    repo = work / "research"
    repo.mkdir()
    _run(["git", "init", "--quiet", "--initial-branch", "main"], repo)
    _run([tool, "init"], repo)
    plan = (repo / ".github" / "workflows" / "sweep-plan.yml").read_text()
    if f"/.github/actions/plan@{tag}" not in plan:
        raise ReleaseError(f"`sweep-runner init` of the wheel does not call the actions @{tag}")
    schema = zipfile.ZipFile(wheel).read("runner/schemas/sweep.schema.json").decode()
    if (repo / "schemas" / "sweep.schema.json").read_text() != schema:
        raise ReleaseError("`sweep-runner init` did not write the wheel's schema")


def check(tag: str, dist: Path) -> None:
    version = version_of(tag)
    wheel = check_files(dist, version)
    with tempfile.TemporaryDirectory(prefix="release-check-") as work:
        check_installed(wheel.resolve(), version, tag, Path(work))


def main(argv: Sequence[str]) -> int:
    try:
        match list(argv):
            case ["notes", tag]:
                print(
                    notes((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), version_of(tag)),
                    end="",
                )
            case ["latest"]:
                print(latest((ROOT / "CHANGELOG.md").read_text(encoding="utf-8")))
            case ["check", tag, dist]:
                check(tag, Path(dist))
                print(f"release: {dist} holds {tag}'s sdist and wheel, and the wheel works")
            case _:
                print(__doc__, file=sys.stderr)
                return 2
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
