"""What `sweep-runner init` writes into a research repository, and how it compares with what is
there: pure, no git, no printing (`runner.commands.init` does those).

Each file is rendered from `files/` (workflows, Dependabot, the example sweep) or from the
package (the schema); `.pre-commit-config.yaml` is merged (the hook appended to a file that has
other hooks), and so is `.gitignore` (`.runs/` appended to the user's lines, once). A file that exists and differs is never overwritten without `force`: the plan says
which and carries the difference.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from importlib.resources import files
from pathlib import Path

REPOSITORY = "allenai/beaker-sweep-runner"
HOOK = "validate-sweeps"
_FILES = files("runner.scaffold") / "files"
_WORKFLOWS = ("sweep-plan.yml", "sweep-submit.yml", "sweep-status.yml", "sweep-propose.yml")
IGNORED = "# Local runs of sweep-runner: run directories, logs, each `code:` checkout.\n.runs/\n"
"""What init adds to .gitignore (appended to the user's own, never replacing it)."""
_RUNS_LINES = frozenset({".runs", ".runs/", "/.runs", "/.runs/", ".runs/*", "/.runs/*"})
CODEOWNERS_LINE = "/sweeps/policy.yaml  @your-org/sweep-budget-owners"
_RELEASE = re.compile(r"(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?)")
FIRST_RELEASE = "v0.1.0"
"""The first release CHANGELOG.md records: what a build from before any tag (setuptools-scm's
0.0.post1.devN, or 0+unknown) pins, never a `v0.0` that no tag will ever be."""


class Change(str, Enum):
    CREATE = "create"
    SAME = "unchanged"
    UPDATE = "update"
    """It differs and `force` overwrites it (or, for .pre-commit-config.yaml, the hook is added)."""
    KEEP = "differs, kept"
    """It differs and is left as it is: the user's edits win without `force`."""


@dataclass(frozen=True)
class Planned:
    path: str
    """Relative to the repository root, with `/`."""
    change: Change
    text: str
    """What init writes (the merged text for .pre-commit-config.yaml)."""
    diff: str = ""
    """For KEEP and UPDATE: the unified difference, the file as it is -> as init writes it."""


@dataclass(frozen=True)
class Settings:
    ref: str
    """The tag or commit of this repository the workflows and the hook call."""
    version: str
    branch: str
    """The default branch: the one merges submit from."""


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("beaker-sweep-runner")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "0+unknown"


BUILT = "_build.txt"
"""Written into the package by setuptools-scm at build time: the version, then the commit."""


def built_commit() -> str | None:
    """The commit this package was built from, whole; None when unknown (a source tree, or a
    build whose commit was abbreviated)."""
    try:
        lines = (files("runner.scaffold") / BUILT).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    node = lines[1].strip().removeprefix("g") if len(lines) > 1 else ""
    return node if pinned(node) else None


def released(version: str) -> bool:
    """Whether the version is a release's, built from its tag (not a `.dev` build after one)."""
    return ".dev" not in version and _RELEASE.match(version) is not None and version != "0+unknown"


def default_ref(version: str, commit: str | None) -> str:
    """What `init` pins by default: a release's own tag; for an unreleased build, the commit it
    was built from (an older tag's actions lack what this build has), else, when that commit is
    unknown, the latest release before it (`release_ref`)."""
    if not released(version) and commit is not None:
        return commit
    return release_ref(version)


def ref_comment(ref: str, version: str) -> str:
    """What a pinned commit says of itself, for people and Dependabot: its release's tag, or
    that it is unreleased."""
    if released(version) or ref != built_commit():
        return release_ref(version)
    return f"unreleased {version}"


def release_ref(version: str) -> str:
    """The tag of the latest release at or before this version, which `init` pins by default:
    `v0.2.0` for 0.2.0, and for a commit after it (0.2.0.post1.dev3+gHASH, setuptools-scm's
    no-guess-dev scheme) too; `v0.2.0rc1` for a release candidate; FIRST_RELEASE for a build
    from before any tag."""
    match = _RELEASE.match(version)
    if match is None or all(part == "0" for part in match[1].split(".")):
        return FIRST_RELEASE
    return f"v{match[1]}"


def wanted(settings: Settings) -> dict[str, str]:
    """Every file init writes, path -> text (the pre-commit file as it would be if new)."""
    ref = settings.ref
    if pinned(ref):  # a commit, named by its tag (or as unreleased) for people and Dependabot
        ref = f"{ref}  # {ref_comment(ref, settings.version)}"
    fields = {"ref": ref, "version": settings.version, "branch": settings.branch}
    texts = {
        "sweeps/example.yaml": (_FILES / "example.yaml").read_text(encoding="utf-8"),
        "schemas/sweep.schema.json": (files("runner.schemas") / "sweep.schema.json").read_text(
            encoding="utf-8"
        ),
        ".github/dependabot.yml": (_FILES / "dependabot.yml").read_text(encoding="utf-8"),
        ".pre-commit-config.yaml": "repos:\n" + hook_entry(settings.ref, settings.version),
        ".gitignore": IGNORED,
    }
    for name in _WORKFLOWS:
        template = (_FILES / name).read_text(encoding="utf-8")
        texts[f".github/workflows/{name}"] = template.format(**fields)
    return texts


def pinned(ref: str) -> bool:
    """Whether ref is a full commit hash (what zizmor asks actions to be pinned to)."""
    return len(ref) == 40 and all(c in "0123456789abcdef" for c in ref)


def hook_entry(ref: str, version: str = "") -> str:
    frozen = f"  # frozen: {ref_comment(ref, version)}" if version and pinned(ref) else ""
    return (
        f"  # Validate sweep manifests before they are pushed (beaker-sweep-runner).\n"
        f"  - repo: https://github.com/{REPOSITORY}\n"
        f"    rev: {ref}{frozen}\n"
        f"    hooks:\n"
        f"      - id: {HOOK}\n"
    )


def plan(root: Path, settings: Settings, force: bool = False) -> list[Planned]:
    """What init would do to each file under root."""
    out = []
    for path, text in wanted(settings).items():
        target = root / path
        if not target.exists():
            out.append(Planned(path, Change.CREATE, text))
            continue
        current = target.read_text(encoding="utf-8")
        if path == ".gitignore":
            text = _merged_gitignore(current)
        if path == ".pre-commit-config.yaml":
            text = _merged_pre_commit(current, hook_entry(settings.ref, settings.version))
            if f"id: {HOOK}" not in text:  # a `repos:` it cannot extend: say what to add
                entry = hook_entry(settings.ref, settings.version)
                out.append(Planned(path, Change.KEEP, current, f"add under repos:\n{entry}"))
                continue
        if current == text:
            out.append(Planned(path, Change.SAME, text))
            continue
        diff = "".join(
            difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"{path} (yours)",
                f"{path} (init)",
            )
        )
        merge = path == ".gitignore" or (
            path == ".pre-commit-config.yaml" and f"id: {HOOK}" in text
        )
        change = Change.UPDATE if force or merge else Change.KEEP
        out.append(Planned(path, change, text, diff))
    return out


def _merged_gitignore(current: str) -> str:
    """The user's .gitignore with `.runs/` appended, unless a line already ignores it."""
    if any(line.strip() in _RUNS_LINES for line in current.splitlines()):
        return current
    return (current.rstrip("\n") + "\n\n" if current.strip() else "") + IGNORED


def _merged_pre_commit(current: str, entry: str) -> str:
    """The user's file with the hook inserted first under its `repos:` (a file without `repos:`
    gets one); as it is when it has the hook, or a `repos:` this cannot extend (`repos: []`)."""
    if f"id: {HOOK}" in current:
        return current
    lines = current.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip() == "repos:":
            return "".join(lines[: i + 1]) + entry + "".join(lines[i + 1 :])
    if any(line.startswith("repos:") for line in lines):
        return current
    return (current.rstrip("\n") + "\n" if current.strip() else "") + "repos:\n" + entry


def apply(root: Path, planned: Sequence[Planned]) -> list[Planned]:
    """Write every CREATE and UPDATE; the ones written."""
    written = []
    for item in planned:
        if item.change in (Change.CREATE, Change.UPDATE):
            target = root / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(item.text, encoding="utf-8")
            written.append(item)
    return written


def admin_steps(branch: str) -> str:
    """What only a repository admin can do, with the exact names the workflows use."""
    return f"""\
Three steps only a repository admin can take (Settings of the repository on GitHub):
  1. Environments -> New environment `beaker`; Deployment branches: `{branch}` only. Environment
     secrets: BEAKER_TOKEN (a Beaker token of the account that creates the experiments);
     optional SWEEP_SLACK_WEBHOOK (a Slack incoming webhook URL); SWEEP_PR_TOKEN (a
     fine-grained token or a GitHub App's, with contents and pull requests write) if you run
     adaptive searches: without it the rounds' pull requests, opened with the workflow's own
     token, never get their "Plan sweeps" check (GitHub starts no workflow for them).
  2. If `{branch}` is protected: Deploy keys -> Add deploy key with write access, its private key
     as the `beaker` environment's secret SWEEP_DEPLOY_KEY, and the deploy key in the ruleset's
     bypass list (the submit job pushes the ledger commit with it).
  3. Rules -> Rulesets -> New branch ruleset for `{branch}`: require a pull request and the
     status check "Plan sweeps" (the sweep-plan workflow).
If you add a budget policy (sweeps/policy.yaml), let CODEOWNERS guard it:
  {CODEOWNERS_LINE}
"""
