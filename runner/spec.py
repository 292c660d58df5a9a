"""Render each point of a sweep to a Beaker experiment spec document.

The document is exactly the JSON that beaker-py's `BeakerExperimentSpec.to_json()` produces
(camelCase, durations in nanoseconds); `runner.beaker_spec` turns it into the typed
`BeakerExperimentSpec` and proves the round trip is lossless. Rendering here is pure and cheap
(no beaker import, no clock, no randomness), so `expand --plan` renders thousands of points fast.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from runner import template
from runner.durations import to_nanoseconds
from runner.errors import ManifestError, Problem
from runner.keys import experiment_name, point_key, spec_hash
from runner.model import BUILTINS, Sweep
from runner.params import param_env_name
from runner.space import Point, iter_points
from runner.values import Value, as_text, normalize
from runner.yaml12 import field_path

MULTINODE_DEFAULTS: Mapping[str, Any] = {
    "leader_selection": True,
    "host_networking": True,
    "propagate_failure": True,
    "propagate_preemption": True,
    "synchronized_start_timeout": "5m",
}
_BEAKER_NAME = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
_PARAMS_JSON = json.JSONEncoder(sort_keys=True).encode
"""`json.dumps(..., sort_keys=True)` without building an encoder for every point."""
_nanoseconds = functools.lru_cache(maxsize=64)(to_nanoseconds)
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Rendered:
    """One point, ready to submit: identity, parameters and its spec document."""

    key: str
    name: str
    params: tuple[tuple[str, Value], ...]
    """Axis parameters (the key's input), in axis order."""
    derived: tuple[tuple[str, Value], ...]
    spec: Mapping[str, Any]
    spec_hash: str
    origin: str = "grid"


@dataclass(frozen=True)
class _Slot:
    """One templated string in the task template, with where it came from."""

    template: template.Template
    path: Path
    literal: str | None = dataclasses.field(init=False, compare=False)
    """The text, when the template has no field: most slots, rendered once instead of per point."""

    def __post_init__(self) -> None:
        literal = self.template.literal() if self.template.is_literal else None
        object.__setattr__(self, "literal", literal)

    def text(self, env: Mapping[str, Value]) -> str:
        return self.literal if self.literal is not None else self.template.render(env)


class Renderer:
    """Compiled once per sweep; `render(point)` is then a pure function."""

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.problems: list[Problem] = []
        self._known = set(sweep.space.axis_names) | {d.name for d in sweep.space.derived}
        self._known |= set(BUILTINS)
        self._env_names = {
            name: param_env_name(name)
            for name in (*sweep.space.axis_names, *(d.name for d in sweep.space.derived))
        }
        self._literal_numbers: dict[Path, int | float] = {}
        """Checked values of literal numeric slots (`replicas: 1`, `gpus: 8`), by slot path."""
        self._derived = [
            (d.name, self._slot(d.template, ("params", "derived", d.name)))
            for d in sweep.space.derived
        ]
        self._tasks = [self._compile_task(t, ("tasks", i)) for i, t in enumerate(sweep.tasks)]
        names = [t.get("name") for t in sweep.tasks]
        if len(sweep.tasks) > 1 and any(name is None for name in names):
            self._problem(("tasks",), "with more than one task, every task needs a name")
        first: dict[str, int] = {}
        for i, n in enumerate(names):
            if n is None or "{" in n:
                continue
            if n in first:
                self._problem(
                    ("tasks", i, "name"),
                    f"task name {n!r} is used twice (first at tasks[{first[n]}].name)",
                )
            first.setdefault(n, i)
        if self.problems:
            raise ManifestError(self.problems)

    # -- compilation ---------------------------------------------------------------------------

    def _problem(self, path: Path, message: str) -> None:
        mark = self.sweep.marks.value(path)
        self.problems.append(
            Problem(str(self.sweep.path), mark.line, mark.col, field_path(path), message)
        )

    def _slot(self, raw: object, path: Path) -> _Slot:
        text = raw if isinstance(raw, str) else as_text(normalize(raw))
        try:
            parsed = template.parse(text)
        except template.TemplateError as exc:
            self._problem(path, str(exc))
            return _Slot(template.Template((text,)), path)
        for name in parsed.names:
            if name not in self._known:
                self._problem(
                    path,
                    f"template names unknown parameter {name!r} (known: {', '.join(sorted(self._known))})",
                )
        return _Slot(parsed, path)

    def _compile_task(self, task: Mapping[str, Any], path: Path) -> dict[str, Any]:
        slot = self._slot
        env_names = list(task.get("env", {})) + list(task.get("secrets", {}))
        for i, name in enumerate(env_names):
            key = "env" if i < len(task.get("env", {})) else "secrets"
            if name.startswith(("SWEEP_", "BEAKER_")):
                self._problem(
                    (*path, key, name),
                    f"{name} is reserved (SWEEP_* and BEAKER_* are set by the runner and Beaker)",
                )
            elif name in env_names[:i]:
                self._problem((*path, key, name), f"{name} is set both in env and in secrets")
        resources = task.get("resources", {})
        return {
            "name": slot(task.get("name") or "main", (*path, "name")),
            "image": {k: slot(v, (*path, "image", k)) for k, v in task["image"].items()},
            "command": [slot(v, (*path, "command", i)) for i, v in enumerate(task["command"])],
            "arguments": [
                slot(v, (*path, "arguments", i)) for i, v in enumerate(task.get("arguments", []))
            ],
            "env": [(k, slot(v, (*path, "env", k))) for k, v in task.get("env", {}).items()],
            "secrets": list(task.get("secrets", {}).items()),
            "mounts": [
                {k: slot(v, (*path, "mounts", i, k)) for k, v in mount.items()}
                for i, mount in enumerate(task.get("mounts", []))
            ],
            "result": slot(task.get("result", "/results"), (*path, "result")),
            "resources": {k: slot(v, (*path, "resources", k)) for k, v in resources.items()},
            "replicas": slot(task.get("replicas", 1), (*path, "replicas")),
            "multinode": {**MULTINODE_DEFAULTS, **task.get("multinode", {})},
        }

    # -- rendering -----------------------------------------------------------------------------

    def render(self, point: Point) -> Rendered:
        sweep = self.sweep
        params = point.as_dict()
        key = point_key(sweep.name, sweep.placement.workspace, sweep.revision, params)
        name = experiment_name(sweep.name, key)
        env: dict[str, Value] = {
            **params,
            "sweep": sweep.name,
            "experiment": name,
            "revision": sweep.revision,
        }
        context = _PointContext(self, point, env, key, name)
        for dname, slot in self._derived:
            env[dname] = context.value(slot)
        derived = tuple((dname, env[dname]) for dname, _ in self._derived)
        context.derived = derived
        tasks = [context.task(t) for t in self._tasks]
        spec: dict[str, Any] = {
            "version": "v2",
            "description": context.description(),
            "tasks": tasks,
        }
        if sweep.placement.budget:
            spec["budget"] = sweep.placement.budget
        if sweep.placement.retries is not None:
            spec["retry"] = {"allowedTaskRetries": sweep.placement.retries}
        return Rendered(
            key, name, point.params, tuple(derived), spec, spec_hash(spec), point.origin
        )

    def render_all(self) -> Iterator[Rendered]:
        for point in iter_points(self.sweep.space):
            yield self.render(point)


class _PointContext:
    """Rendering state of one point: turns compiled slots into spec fields, checking each."""

    def __init__(
        self, renderer: Renderer, point: Point, env: Mapping[str, Value], key: str, name: str
    ) -> None:
        self.r, self.point, self.env, self.key, self.name = renderer, point, env, key, name
        self.derived: tuple[tuple[str, Value], ...] = ()

    def fail(self, slot: _Slot, message: str) -> ManifestError:
        sweep = self.r.sweep
        mark = sweep.marks.value(slot.path)
        where = ", ".join(f"{k}={as_text(v)}" for k, v in self.point.params) or "the only point"
        text = f"{message} (point {where})"
        return ManifestError(
            [Problem(str(sweep.path), mark.line, mark.col, field_path(slot.path), text)]
        )

    def text(self, slot: _Slot) -> str:
        if slot.literal is not None:
            return slot.literal
        try:
            return slot.template.render(self.env)
        except template.TemplateError as exc:
            raise self.fail(slot, str(exc)) from None

    def value(self, slot: _Slot) -> Value:
        try:
            return slot.template.render_value(self.env)
        except template.TemplateError as exc:
            raise self.fail(slot, str(exc)) from None

    def number(self, slot: _Slot, what: str, minimum: int, integer: bool = True) -> int | float:
        known = self.r._literal_numbers.get(slot.path)
        if known is not None:
            return known
        value = self.value(slot)
        try:
            number = normalize(value if not isinstance(value, str) else json.loads(value))
        except (ValueError, TypeError):
            number = value
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or (integer and not isinstance(number, int))
        ):
            kind = "an integer" if integer else "a number"
            raise self.fail(slot, f"{what} renders to {value!r}, which is not {kind}")
        if number < minimum:
            raise self.fail(slot, f"{what} renders to {number}, must be at least {minimum}")
        if slot.literal is not None:
            self.r._literal_numbers[slot.path] = number
        return number

    def task(self, compiled: Mapping[str, Any]) -> dict[str, Any]:
        placement = self.r.sweep.placement
        name = self.text(compiled["name"])
        if not _BEAKER_NAME.match(name) or len(name) > 128:
            raise self.fail(
                compiled["name"], f"task name renders to {name!r}, not a valid Beaker name"
            )
        ((kind, image_slot),) = compiled["image"].items()
        image = self.text(image_slot)
        if not image.strip():
            raise self.fail(image_slot, "image renders to an empty string")
        doc: dict[str, Any] = {
            "name": name,
            "image": {kind: image},
            "command": [self.text(s) for s in compiled["command"]],
        }
        if compiled["arguments"]:
            doc["arguments"] = [self.text(s) for s in compiled["arguments"]]
        doc["envVars"] = self.env_vars(compiled)
        mounts = [self.mount(m) for m in compiled["mounts"]]
        if mounts:
            doc["datasets"] = mounts
        doc["result"] = {"path": self.text(compiled["result"])}
        resources = self.resources(compiled["resources"])
        if resources:
            doc["resources"] = resources
        context: dict[str, Any] = {}
        if placement.priority:
            context["priority"] = placement.priority
        if placement.preemptible is not None:
            context["preemptible"] = placement.preemptible
        doc["context"] = context
        doc["constraints"] = {"cluster": list(placement.clusters)}
        replicas = int(self.number(compiled["replicas"], "replicas", 1))
        multinode = compiled["multinode"]
        if replicas > 1:
            doc["replicas"] = replicas
            doc["hostNetworking"] = multinode["host_networking"]
            doc["leaderSelection"] = multinode["leader_selection"]
            doc["propagateFailure"] = multinode["propagate_failure"]
            doc["propagatePreemption"] = multinode["propagate_preemption"]
            doc["synchronizedStartTimeout"] = _nanoseconds(multinode["synchronized_start_timeout"])
        else:
            doc["hostNetworking"] = False
            doc["leaderSelection"] = False
        if placement.timeout:
            doc["timeout"] = _nanoseconds(placement.timeout)
        return doc

    def env_vars(self, compiled: Mapping[str, Any]) -> list[dict[str, str]]:
        out = [{"name": k, "value": self.text(s)} for k, s in compiled["env"]]
        out += [{"name": k, "secret": secret} for k, secret in compiled["secrets"]]
        sweep = self.r.sweep
        everything = [*self.point.params, *self.derived]
        out += [
            {"name": "SWEEP_NAME", "value": sweep.name},
            {"name": "SWEEP_EXPERIMENT", "value": self.name},
            {"name": "SWEEP_POINT_KEY", "value": self.key},
            {"name": "SWEEP_REVISION", "value": str(sweep.revision)},
            {"name": "SWEEP_PARAMS", "value": _PARAMS_JSON(dict(everything))},
        ]
        names = self.r._env_names
        out += [{"name": names[k], "value": as_text(v)} for k, v in everything]
        return out

    def mount(self, compiled: Mapping[str, _Slot]) -> dict[str, Any]:
        source_key = {
            "weka": "weka",
            "dataset": "beaker",
            "secret": "secret",
            "host_path": "hostPath",
        }
        doc: dict[str, Any] = {}
        for field, slot in compiled.items():
            if field in source_key:
                doc["source"] = {source_key[field]: self.text(slot)}
        doc["mountPath"] = self.text(compiled["path"])
        if "sub_path" in compiled:
            doc["subPath"] = self.text(compiled["sub_path"])
        if not doc["mountPath"].startswith("/"):
            raise self.fail(
                compiled["path"], f"mount path renders to {doc['mountPath']!r}, not absolute"
            )
        return doc

    def resources(self, compiled: Mapping[str, _Slot]) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if "cpus" in compiled:
            doc["cpuCount"] = self.number(compiled["cpus"], "cpus", 0, integer=False)
        if "gpus" in compiled:
            doc["gpuCount"] = int(self.number(compiled["gpus"], "gpus", 0))
        if "memory" in compiled:
            doc["memory"] = self.text(compiled["memory"])
        if "shared_memory" in compiled:
            doc["sharedMemory"] = self.text(compiled["shared_memory"])
        return doc

    def description(self) -> str:
        sweep = self.r.sweep
        params = ", ".join(f"{k}={as_text(v)}" for k, v in self.point.params) or "no parameters"
        if len(params) > 300:
            params = params[:297] + "..."
        lead = f"{sweep.description.strip()} | " if sweep.description.strip() else ""
        text = f"{lead}sweep {sweep.name} point {params} ({sweep.path})"
        return f"{text[:700]} [sweep-key {self.key}]"
