"""A small GitHub Actions runner for tests: runs a workflow's jobs the way GitHub does.

It reads the workflow YAML, evaluates the `${{ }}` expressions the workflows use (contexts
github, inputs, secrets, steps, needs, env, runner; operators ! && || == != and parentheses;
success(), failure(), cancelled(), always(), format()), runs each `run:` step with
`bash --noprofile --norc -eo pipefail` and GitHub's files (GITHUB_OUTPUT, GITHUB_ENV,
GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH, RUNNER_TEMP), and hands `uses:` steps to handlers the
test provides (checkout, setup-python, github-script), except this repository's composite
actions (`.github/actions/`), whose steps it runs itself. An environment with branch rules decides
whether a job may run and which secrets it sees, as GitHub's environments do.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import PROJECT

EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
TOKENS = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|[!().,\[\]])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


# -- expressions ------------------------------------------------------------------------------


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", -0.0)


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool | int | float):
        return float(value)
    try:
        return float(value.strip() or 0)
    except (ValueError, AttributeError):
        return float("nan")


def _equal(a: Any, b: Any) -> bool:
    """GitHub's loose equality: strings case-insensitively, mixed types as numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b):
        return bool(a == b)
    return _number(a) == _number(b)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any], status: Mapping[str, bool]) -> None:
        self.tokens = [(m.lastgroup, m.group(m.lastgroup or "")) for m in TOKENS.finditer(text)]
        rebuilt = "".join(t for _, t in self.tokens).replace(" ", "")
        assert rebuilt == re.sub(r"\s+", "", text), f"cannot parse expression {text!r}"
        self.pos, self.context, self.status = 0, context, status

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str | None, str]:
        kind, text = self.tokens[self.pos]
        assert expected is None or text == expected, f"expected {expected}, got {text}"
        self.pos += 1
        return kind, text

    def parse(self) -> Any:
        value = self.or_()
        assert self.pos == len(self.tokens), f"trailing tokens in {self.tokens}"
        return value

    def _chain(
        self,
        ops: tuple[str, ...],
        operand: Callable[[], Any],
        combine: Callable[[Any, str, Any], Any],
    ) -> Any:
        """A left-associative run `operand (op operand)*`, folded by `combine(left, op, right)`."""
        value = operand()
        while self.peek() in ops:
            op = self.take()[1]
            value = combine(value, op, operand())
        return value

    def or_(self) -> Any:
        return self._chain(("||",), self.and_, lambda a, _, b: a if _truthy(a) else b)

    def and_(self) -> Any:
        return self._chain(("&&",), self.eq, lambda a, _, b: b if _truthy(a) else a)

    def eq(self) -> Any:
        return self._chain(("==", "!="), self.unary, lambda a, op, b: _equal(a, b) == (op == "=="))

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            inner = self.or_()
            self.take(")")
            return inner
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            return self.call(text)
        value: Any = self.context.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = self.or_()
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take(")")
        if name in self.status:
            return self.status[name]
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: str(args[int(m[1]) + 1]), args[0])
        raise AssertionError(f"function {name} is not modelled")


def evaluate(
    text: str, context: Mapping[str, Any], status: Mapping[str, bool] | None = None
) -> Any:
    return _Parser(text, context, status or {}).parse()


def substitute(text: Any, context: Mapping[str, Any]) -> str:
    """`${{ expr }}` inside a string, as GitHub substitutes it (null becomes '')."""
    if isinstance(text, bool):
        return str(text).lower()

    def value(match: re.Match[str]) -> str:
        got = evaluate(match[1], context)
        if got is None:
            return ""
        if isinstance(got, bool):
            return str(got).lower()
        return str(got)

    return EXPR.sub(value, str(text))


def condition(
    text: str | bool | None, context: Mapping[str, Any], status: Mapping[str, bool]
) -> bool:
    """A step's or job's `if:`: success() unless it calls a status function itself."""
    if text is None:
        return status["success"]
    raw = str(text).strip()
    inner = EXPR.fullmatch(raw)
    expr = inner[1] if inner else raw
    if not re.search(r"\b(success|failure|cancelled|always)\(", expr):
        expr = f"success() && ({expr})"
    return _truthy(evaluate(expr, context, status))


# -- running jobs -----------------------------------------------------------------------------


@dataclass
class Step:
    """What a `uses:` handler gets."""

    uses: str
    with_: dict[str, str]
    env: dict[str, str]
    workspace: Path
    job: Job


@dataclass
class Job:
    id: str
    name: str
    outcome: str = "skipped"
    """success, failure or skipped."""
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    log: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    pip: list[list[str]] = field(default_factory=list)
    """Every `python -m pip ...` a step ran (recorded, not run: the test venv has it all)."""
    caches: list[str] = field(default_factory=list)
    """The key of every actions/cache step run."""
    artifacts: dict[str, Path] = field(default_factory=dict)
    """Each artifact uploaded, by name: a copy of what was uploaded."""

    def annotations(self, level: str = "error") -> list[str]:
        return [line for line in self.log.splitlines() if line.startswith(f"::{level}")]


Handler = Callable[[Step], None]


@dataclass
class Environment:
    branches: tuple[str, ...]
    """The branches (or tags) that may deploy to it."""
    secrets: dict[str, str]


@dataclass
class Run:
    """One workflow run of one event."""

    workflow: Path
    event: str
    payload: dict[str, Any]
    ref: str
    sha: str
    tmp: Path
    uses: Mapping[str, Handler]
    secrets: dict[str, str] = field(default_factory=dict)
    environments: dict[str, Environment] = field(default_factory=dict)
    repository: str = "ai2/sweeps"
    run_id: int = 1
    api_url: str = "http://127.0.0.1:9/"
    token: str = "ghs_job_token"
    _files: Iterator[int] = field(default_factory=itertools.count)
    """Numbers the GITHUB_OUTPUT/ENV/STEP_SUMMARY files of every step, composite ones too."""

    @property
    def document(self) -> dict[Any, Any]:
        """The workflow; PyYAML reads the key `on` as True (YAML 1.1), as it is used here."""
        return dict(yaml.safe_load(self.workflow.read_text()))

    def context(self) -> dict[str, Any]:
        inputs: dict[str, Any] = {}
        declared = (self.document.get(True) or {}).get("workflow_dispatch") or {}
        for name, spec in (declared.get("inputs") or {}).items():
            raw = (self.payload.get("inputs") or {}).get(name, spec.get("default"))
            inputs[name] = str(raw).lower() == "true" if spec.get("type") == "boolean" else raw
        return {
            "github": {
                "event_name": self.event,
                "event": self.payload,
                "ref": self.ref,
                "sha": self.sha,
                "repository": self.repository,
                "run_id": self.run_id,
                "token": self.token,
            },
            "inputs": inputs,
            "runner": {"temp": str(self.tmp / "runner-temp")},
        }

    def concurrency_group(self) -> str:
        group = self.document["concurrency"]["group"]
        return substitute(str(group), self.context()).strip()

    def run(self) -> dict[str, Job]:
        jobs: dict[str, Job] = {}
        spec = self.document["jobs"]
        while len(jobs) < len(spec):
            for job_id, job in spec.items():
                needs = job.get("needs") or []
                needs = [needs] if isinstance(needs, str) else needs
                if job_id not in jobs and all(n in jobs for n in needs):
                    jobs[job_id] = self._job(job_id, job, {n: jobs[n] for n in needs})
        return jobs

    def _job(self, job_id: str, spec: dict[str, Any], needs: dict[str, Job]) -> Job:
        context = self.context()
        context["needs"] = {
            n: {"result": j.outcome, "outputs": j.outputs} for n, j in needs.items()
        }
        job = Job(job_id, substitute(str(spec.get("name", job_id)), context))
        ok = all(j.outcome == "success" for j in needs.values())
        status = {"success": ok, "failure": not ok, "cancelled": False, "always": True}
        if not condition(spec.get("if"), context, status):
            return job
        job.secrets = dict(self.secrets)
        environment = spec.get("environment")
        if isinstance(environment, dict):  # `environment: {name: pypi, url: ...}`
            environment = environment["name"]
        if environment:
            rules = self.environments[environment]
            if (
                self.ref.removeprefix("refs/heads/").removeprefix("refs/tags/")
                not in rules.branches
            ):
                job.outcome = "failure"
                job.log = f"Branch {self.ref} is not allowed to deploy to {environment}"
                return job
            job.secrets.update(rules.secrets)
        context["secrets"] = job.secrets
        workspace = self.tmp / f"work-{job_id}"
        temp = self.tmp / f"temp-{job_id}"
        temp.mkdir(parents=True, exist_ok=True)
        context["runner"] = {"temp": str(temp)}
        job.outcome = self._steps(job, spec, context, workspace, temp)
        context["steps"] = job.steps
        job.outputs = {k: substitute(v, context) for k, v in (spec.get("outputs") or {}).items()}
        return job

    def _base_env(self, job: Job, temp: Path, workspace: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BEAKER_TOKEN"))}
        event_path = self.tmp / f"event-{job.id}.json"
        event_path.write_text(json.dumps(self.payload))
        shims = self._shims(temp)
        env.update(
            CI="true",
            GITHUB_ACTIONS="true",
            GITHUB_EVENT_NAME=self.event,
            GITHUB_EVENT_PATH=str(event_path),
            GITHUB_REF=self.ref,
            GITHUB_REF_NAME=self.ref.removeprefix("refs/heads/").removeprefix("refs/tags/"),
            GITHUB_SHA=self.sha,
            GITHUB_REPOSITORY=self.repository,
            GITHUB_API_URL=self.api_url,
            GITHUB_RUN_ID=str(self.run_id),
            GITHUB_SERVER_URL="https://github.com",
            GITHUB_WORKSPACE=str(workspace),
            RUNNER_OS="Linux",
            RUNNER_TEMP=str(temp),
            PATH=f"{shims}{os.pathsep}{env.get('PATH', '')}",
            PYTHONPATH=str(PROJECT),  # `python -m runner` from this worktree's code
        )
        return env

    def _shims(self, temp: Path) -> Path:
        """`python` on PATH: this interpreter, except that `python -m pip` is recorded."""
        shims = temp / "shims"
        shims.mkdir(exist_ok=True)
        python = shims / "python"
        python.write_text(
            "#!/usr/bin/env bash\n"
            'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
            f'  printf "%s\\n" "$*" >> "{temp}/pip.log"; exit 0\nfi\n'
            f'exec "{sys.executable}" "$@"\n'
        )
        python.chmod(0o755)
        # The console script an installed runner has (the install itself is only recorded):
        # this worktree's runner, through PYTHONPATH.
        script = shims / "sweep-runner"
        script.write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" -m runner "$@"\n')
        script.chmod(0o755)
        return shims

    def _steps(
        self, job: Job, spec: dict[str, Any], context: dict[str, Any], workspace: Path, temp: Path
    ) -> str:
        env = self._base_env(job, temp, workspace)
        ok = self._run_steps(job, spec["steps"], context, env, workspace, temp, job.steps)
        pip_log = temp / "pip.log"
        if pip_log.exists():
            job.pip = [line.split() for line in pip_log.read_text().splitlines()]
        return "success" if ok else "failure"

    def _run_steps(
        self,
        job: Job,
        steps: list[dict[str, Any]],
        context: dict[str, Any],
        env: dict[str, str],
        workspace: Path,
        temp: Path,
        results: dict[str, dict[str, Any]],
    ) -> bool:
        """Run steps in order as GitHub does (a job's, or a composite action's with its own
        `steps` context); True when none failed."""
        failed = False
        for index, step in enumerate(steps):
            context["steps"] = results
            status = {"success": not failed, "failure": failed, "cancelled": False, "always": True}
            step_id = step.get("id", f"__{index}")
            if not condition(step.get("if"), context, status):
                results[step_id] = {"outcome": "skipped", "outputs": {}}
                continue
            step_env = {k: substitute(v, context) for k, v in (step.get("env") or {}).items()}
            number = next(self._files)
            outputs = temp / f"output-{number}"
            summary = temp / f"summary-{number}"
            genv = temp / f"env-{number}"
            for path in (outputs, summary, genv):
                path.write_text("")
            full = {
                **env,
                **step_env,
                "GITHUB_OUTPUT": str(outputs),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_ENV": str(genv),
            }
            composite: dict[str, str] = {}
            if "uses" in step and _action_dir(step["uses"]) is not None:
                ok = self._composite(step, full, workspace, job, context, temp, composite)
            elif "uses" in step:
                ok = self._uses(step, full, workspace, job, context)
            else:
                ok = self._bash(substitute(step["run"], context), full, workspace, job)
            job.summary += summary.read_text()
            env.update(_read_commands(genv.read_text()))
            results[step_id] = {
                "outcome": "success" if ok else "failure",
                "outputs": {**_read_commands(outputs.read_text()), **composite},
            }
            failed = failed or not ok
        return not failed

    def _composite(
        self,
        step: dict[str, Any],
        env: dict[str, str],
        workspace: Path,
        job: Job,
        context: dict[str, Any],
        temp: Path,
        outputs: dict[str, str],
    ) -> bool:
        """A composite action of this repository (`./.github/actions/X` from this checkout, or
        `allenai/beaker-sweep-runner/.github/actions/X@ref` from a research repository): its
        steps, with its inputs, its own steps context and GITHUB_ACTION_PATH."""
        path = _action_dir(step["uses"])
        assert path is not None
        action = yaml.safe_load((path / "action.yml").read_text())
        assert action["runs"]["using"] == "composite"
        given = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
        declared = action.get("inputs") or {}
        unknown = set(given) - set(declared)
        assert not unknown, f"{step['uses']}: unknown inputs {sorted(unknown)}"
        inputs = {}
        for name, spec in declared.items():
            assert name in given or "default" in spec or not spec.get("required"), name
            inputs[name] = given.get(name, str(spec.get("default", "")))
        inner = {**context, "inputs": inputs}
        results: dict[str, dict[str, Any]] = {}
        env = {**env, "GITHUB_ACTION_PATH": str(path)}
        ok = self._run_steps(job, action["runs"]["steps"], inner, env, workspace, temp, results)
        inner["steps"] = results
        for name, spec in (action.get("outputs") or {}).items():
            outputs[name] = substitute(spec["value"], inner)
        return ok

    def _bash(self, script: str, env: dict[str, str], workspace: Path, job: Job) -> bool:
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        job.log += done.stdout + done.stderr
        return done.returncode == 0

    def _uses(
        self,
        step: dict[str, Any],
        env: dict[str, str],
        workspace: Path,
        job: Job,
        context: dict[str, Any],
    ) -> bool:
        action = step["uses"].split("@")[0]
        with_ = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
        try:
            self.uses[action](Step(action, with_, env, workspace, job))
        except AssertionError as exc:
            job.log += f"{action} failed: {exc}\n"
            return False
        return True


SELF = "allenai/beaker-sweep-runner/"
"""How a research repository names this repository's actions (`init` writes it)."""


def _action_dir(uses: str) -> Path | None:
    """The directory of a composite action of this repository, or None for any other action."""
    if uses.startswith("./"):
        return PROJECT / uses[2:]
    if uses.startswith(SELF):
        return PROJECT / uses[len(SELF) :].split("@")[0]
    return None


def _read_commands(text: str) -> dict[str, str]:
    """name=value lines and name<<DELIMITER heredocs, as GitHub reads GITHUB_OUTPUT."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for item in lines:
                if item == delimiter:
                    break
                body.append(item)
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def workflow(name: str, root: Path = PROJECT) -> Path:
    return root / ".github" / "workflows" / name
