"""requirements.txt, the hash-pinned lock the workflows install from, is kept in step with
pyproject.toml: a dependency added, removed or re-ranged there without recompiling fails here.

Recompile with the command in the lock's header (pip-tools, Python 3.11 as in the workflows).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

LOCK = PROJECT / "requirements.txt"
BUILD_LOCK = PROJECT / "requirements-build.txt"
"""What builds the runner in the actions (install.sh) and a release's sdist and wheel."""


def _pins(lock: Path = LOCK) -> dict[str, tuple[str, list[str], str]]:
    """name -> (version, hashes, the `# via` annotation) of each package the lock pins."""
    text = lock.read_text()
    pins: dict[str, tuple[str, list[str], str]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = re.match(r"([A-Za-z0-9._-]+)==(\S+)", block)
        if match:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
            via = " ".join(re.findall(r"#\s+(?:via\s+)?(.+)", block))
            pins[str(canonicalize_name(match[1]))] = (str(match[2]), hashes, via)
    return pins


def test_every_pin_has_hashes_and_the_header_says_how_to_regenerate() -> None:
    pins = _pins()
    assert pins and all(hashes for _, hashes, _ in pins.values())
    assert "pip-compile --generate-hashes" in LOCK.read_text().split("\n\n")[0]


def test_the_lock_pins_exactly_pyprojects_dependencies_within_their_ranges() -> None:
    declared = [
        Requirement(r)
        for r in tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["dependencies"]
    ]
    pins = _pins()
    direct = {name for name, (_, _, via) in pins.items() if "pyproject.toml" in via}
    assert direct == {canonicalize_name(r.name) for r in declared}, "recompile requirements.txt"
    for requirement in declared:
        version = pins[canonicalize_name(requirement.name)][0]
        assert requirement.specifier.contains(version), f"{requirement}: lock has {version}"


def test_the_build_lock_pins_the_build_requirements_and_build_itself_with_hashes() -> None:
    """install.sh builds the runner without build isolation from this lock (an unpinned
    setuptools-scm would be fetched otherwise), and release.yml builds the release from it."""
    build_system = tomllib.loads((PROJECT / "pyproject.toml").read_text())["build-system"]
    declared = [Requirement(r) for r in build_system["requires"]]
    listed = [
        Requirement(line)
        for line in (PROJECT / "requirements-build.in").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert {str(r) for r in listed} == {*(str(r) for r in declared), "build"}
    pins = _pins(BUILD_LOCK)
    assert all(hashes for _, hashes, _ in pins.values())
    assert "pip-compile --allow-unsafe --generate-hashes" in BUILD_LOCK.read_text()
    for requirement in [*declared, Requirement("build")]:
        version = pins[canonicalize_name(requirement.name)][0]
        assert requirement.specifier.contains(version), f"{requirement}: lock has {version}"
    install = (PROJECT / ".github" / "actions" / "install.sh").read_text()
    assert '--require-hashes --no-deps -r "$root/requirements-build.txt"' in install


def test_the_all_extra_installs_every_optional_feature() -> None:
    extras = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    features = set(extras["optional-dependencies"]) - {"all", "test"}
    assert features == {"plot", "search", "adaptive"}
    (everything,) = extras["optional-dependencies"]["all"]
    requirement = Requirement(everything)
    assert requirement.name == extras["name"] and requirement.extras == features
