"""The spec document of a sweep's points, as a skeleton with a hole for each per-point value."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runner.core.ladder import PARENT
from runner.core.model import Sweep
from runner.core.values import Value, as_text
from runner.render.durations import to_nanoseconds
from runner.render.skeleton import Hole, json_string
from runner.render.slots import Check, PointContext, Slot

PARENT_KEY = "SWEEP_PARENT_KEY"
"""A promoted point's parent's key (successive halving): where the run it resumes came from."""
CHECKPOINT_VAR = "SWEEP_CHECKPOINT"
"""Where a halving's point writes its checkpoint (`params.fidelity.checkpoint` at its name)."""
PARENT_CHECKPOINT_VAR = "SWEEP_PARENT_CHECKPOINT"
"""Where a promoted point's parent wrote the checkpoint it resumes (the template at its name)."""
CHECKPOINT_VARS = (CHECKPOINT_VAR, PARENT_CHECKPOINT_VAR)
"""The variables whose paths the local backend keeps on this machine instead (mounts are not)."""
_BEAKER_NAME = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
_nanoseconds = functools.lru_cache(maxsize=64)(to_nanoseconds)
Field = str | int | float | Hole[PointContext]


def _task_name_problem(name: str) -> str | None:
    if _BEAKER_NAME.match(name) and len(name) <= 128:
        return None
    return f"task name renders to {name!r}, not a valid Beaker name"


_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
"""An image, dataset or bucket as Beaker reads it: no spaces, no shell characters."""
_PATH = re.compile(r"^/[^\s]*$")


def _image_problem(image: str) -> str | None:
    if _REFERENCE.match(image) and len(image) <= 256:
        return None
    return f"image renders to {image!r}, not a valid image name (letters, digits and . _ - / : @)"


def _source_problem(source: str) -> str | None:
    if _REFERENCE.match(source) and len(source) <= 256:
        return None
    return f"mount source renders to {source!r}, not a valid name (letters, digits and . _ - / :)"


def _path_problem(what: str) -> Check:
    def check(path: str) -> str | None:
        if _PATH.match(path):
            return None
        return f"{what} renders to {path!r}, not an absolute path without spaces"

    return check


_mount_path_problem = _path_problem("mount path")
_result_path_problem = _path_problem("result path")


class SpecShape:
    """The spec document of one shape of point, with a hole for each value that varies by point.

    Literal slots are checked here, once, against the first point of this shape (which an error
    names); templated ones become holes, checked as each point fills them.
    """

    def __init__(
        self,
        sweep: Sweep,
        tasks: Sequence[Mapping[str, Any]],
        env_names: Mapping[str, str],
        first: PointContext,
        absent: frozenset[str] = frozenset(),
    ) -> None:
        self.sweep, self.tasks, self.env_names, self.first = sweep, tasks, env_names, first
        self.absent = absent
        """The conditional parameters absent from this shape's points: argv items naming one
        are left out (`env_names` has none of them)."""

    def string(self, slot: Slot, check: Check | None = None) -> Field:
        if slot.literal is not None:
            return self.first.text(slot, check)
        plain = slot.template.plain
        if plain is not None and check is None:  # nothing to check, nothing that can fail
            before, name, after = plain
            return Hole(_by_value(name, lambda value: json_string(before + as_text(value) + after)))
        return Hole(lambda point: json_string(point.text(slot, check)))

    def number(self, slot: Slot, what: str, minimum: int, integer: bool = True) -> Field:
        if slot.literal is not None:
            return self.first.number(slot, what, minimum, integer)
        # repr is how the JSON encoder writes a number (normalize has ruled out bools).
        return Hole(lambda point: repr(point.number(slot, what, minimum, integer)))

    def spec(self) -> dict[str, Any]:
        sweep = self.sweep
        self.description_hole = self.description()
        spec: dict[str, Any] = {
            "version": "v2",
            "description": self.description_hole,
            "tasks": [self.task(t, i) for i, t in enumerate(self.tasks)],
        }
        if sweep.placement.budget:
            spec["budget"] = sweep.placement.budget
        if sweep.placement.retries is not None:
            spec["retry"] = {"allowedTaskRetries": sweep.placement.retries}
        return spec

    def task(self, compiled: Mapping[str, Any], index: int) -> dict[str, Any]:
        placement = self.sweep.placement
        ((kind, image_slot),) = compiled["image"].items()
        doc: dict[str, Any] = {
            "name": self.string(compiled["name"], _task_name_problem),
            "image": {kind: self.string(image_slot, _image_problem)},
            "command": self.argv(compiled["command"]),
        }
        arguments = self.argv(compiled["arguments"])
        if arguments:
            doc["arguments"] = arguments
        doc["envVars"] = self.env_vars(compiled)
        mounts = [self.mount(m) for m in compiled["mounts"]]
        if mounts:
            doc["datasets"] = mounts
        doc["result"] = {"path": self.string(compiled["result"], _result_path_problem)}
        resources = self.resources(compiled["resources"])
        if resources:
            doc["resources"] = resources
        context: dict[str, Any] = {}
        if placement.priority:
            context["priority"] = placement.priority
        if placement.preemptible is not None:
            context["preemptible"] = placement.preemptible
        if placement.min_runtime is not None:
            context["minRuntime"] = _nanoseconds(placement.min_runtime)
        if placement.auto_resume is not None:
            context["autoResume"] = placement.auto_resume
        doc["context"] = context
        doc["constraints"] = {"cluster": list(placement.clusters)}
        if placement.hostnames:
            doc["constraints"]["hostname"] = list(placement.hostnames)
        multinode = compiled["multinode"]
        if self.first.replicas[index] > 1:
            doc["replicas"] = self.number(compiled["replicas"], "replicas", 1)
            doc["hostNetworking"] = multinode["host_networking"]
            doc["leaderSelection"] = multinode["leader_selection"]
            doc["propagateFailure"] = multinode["propagate_failure"]
            doc["propagatePreemption"] = multinode["propagate_preemption"]
            if "synchronized_start_timeout" in multinode:  # (accelerate's default has none)
                timeout = multinode["synchronized_start_timeout"]
                doc["synchronizedStartTimeout"] = _nanoseconds(timeout)
        else:  # one replica: host networking only when the manifest asks for it
            doc["hostNetworking"] = compiled["single_host_networking"]
            doc["leaderSelection"] = False
        if placement.timeout:
            doc["timeout"] = self.timeout(_nanoseconds(placement.timeout))
        return doc

    def timeout(self, full: int) -> Field:
        """`beaker.timeout`; a successive halving's rung point gets its rung's share of it
        (`Ladder.timeout`), so that Beaker enforces what the plan prices."""
        ladder = self.sweep.space.ladder
        if ladder is None:
            return full
        by_rung = [str(ladder.timeout(full, k)) for k in range(len(ladder.values))]
        return Hole(lambda point: by_rung[ladder.rung(point.env)])

    def argv(self, slots: Sequence[Slot]) -> list[Field]:
        return [self.string(s) for s in slots if not s.template.needs(self.absent)]

    def env_vars(self, compiled: Mapping[str, Any]) -> list[dict[str, Field]]:
        out = [{"name": k, "value": self.string(s)} for k, s in compiled["env"]]
        out += [{"name": k, "secret": secret} for k, secret in compiled["secrets"]]
        sweep = self.sweep
        out += [
            # As gantry does (and local runs): where the task's result dataset is written.
            {"name": "RESULTS_DIR", "value": self.string(compiled["result"])},
            {"name": "SWEEP_NAME", "value": sweep.name},
            {"name": "SWEEP_EXPERIMENT", "value": Hole(lambda point: json_string(point.name))},
            {"name": "SWEEP_POINT_KEY", "value": Hole(lambda point: json_string(point.key))},
            {"name": "SWEEP_REVISION", "value": str(sweep.revision)},
            {"name": "SWEEP_PARAMS", "value": self.params_json()},
        ]
        out += [
            {"name": env_name, "value": Hole(_env_value(name))}
            for name, env_name in self.env_names.items()
        ]
        ladder = sweep.space.ladder
        if ladder is not None and PARENT not in self.absent:  # a promoted point
            out.append({"name": PARENT_KEY, "value": Hole(lambda p: json_string(p.parent))})
        if ladder is not None and ladder.checkpoint is not None:
            out.append({"name": CHECKPOINT_VAR, "value": Hole(lambda p: json_string(p.checkpoint))})
            if PARENT not in self.absent:
                resumed: Hole[PointContext] = Hole(lambda p: json_string(p.parent_checkpoint))
                out.append({"name": PARENT_CHECKPOINT_VAR, "value": resumed})
        # Sorted: the environment is a set, so reordering `env` or the grid changes nothing.
        return sorted(out, key=lambda var: str(var["name"]))

    def params_json(self) -> Hole[PointContext]:
        """Every parameter, derived ones too, as `json.dumps(..., sort_keys=True)` writes them."""
        keys = [(_ascii_json(name) + ": ", name) for name in sorted(self.env_names)]

        def fill(point: PointContext) -> str:
            env = point.env
            items = ", ".join([key + _ascii_json(env[name]) for key, name in keys])
            return json_string("{" + items + "}")

        return Hole(fill)

    def description(self) -> Hole[PointContext]:
        """What the sweep is, which point this is, and the key (`find` and `adopt` read it back)."""
        sweep = self.sweep
        lead = f"{sweep.description.strip()} | " if sweep.description.strip() else ""
        head, tail = f"{lead}sweep {sweep.name} point ", f" ({sweep.path})"

        def fill(point: PointContext) -> str:
            params = ", ".join([f"{k}={as_text(v)}" for k, v in point.point.params])
            if len(params) > 300:
                params = params[:297] + "..."
            text = (head + (params or "no parameters") + tail)[:700]
            return json_string(f"{text} [sweep-key {point.key}]")

        return Hole(fill)

    def mount(self, compiled: Mapping[str, Slot]) -> dict[str, Any]:
        source_key = {
            "weka": "weka",
            "dataset": "beaker",
            "secret": "secret",
            "host_path": "hostPath",
        }
        doc: dict[str, Any] = {}
        for field, slot in compiled.items():
            if field in source_key:
                check = _mount_path_problem if field == "host_path" else _source_problem
                doc["source"] = {source_key[field]: self.string(slot, check)}
        doc["mountPath"] = self.string(compiled["path"], _mount_path_problem)
        if "sub_path" in compiled:
            doc["subPath"] = self.string(compiled["sub_path"])
        return doc

    def resources(self, compiled: Mapping[str, Slot]) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if "cpus" in compiled:
            doc["cpuCount"] = self.number(compiled["cpus"], "cpus", 0, integer=False)
        if "gpus" in compiled:
            doc["gpuCount"] = self.number(compiled["gpus"], "gpus", 0)
        if "memory" in compiled:
            doc["memory"] = self.string(compiled["memory"])
        if "shared_memory" in compiled:
            doc["sharedMemory"] = self.string(compiled["shared_memory"])
        return doc


_ascii_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _ascii_json(value: Value) -> str:
    """A value as `json.dumps` writes it by default (ASCII only)."""
    if isinstance(value, str):
        return _ascii_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)  # int and float: the encoder's own int.__repr__ and float.__repr__


def _env_value(name: str) -> Callable[[PointContext], str]:
    return _by_value(name, lambda value: json_string(as_text(value)))


MEMO_SIZE = 4096
"""Values remembered per hole: enough for a grid's axis values. Values made per point (a
derived parameter's, a sample's) fill it once and then miss, at the cost of a look-up."""


def _by_value(name: str, text: Callable[[Value], str]) -> Callable[[PointContext], str]:
    """A hole that writes one parameter, remembering its text per value *object*: a grid's
    points share the objects of their axes' values, so most points find it. By identity, not
    equality, so 1, 1.0, True, 0.0 and -0.0 never share a text; the entry keeps its object
    alive, so its id is never reused while remembered."""
    memo: dict[int, tuple[Value, str]] = {}

    def fill(point: PointContext) -> str:
        value = point.env[name]
        known = memo.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        written = text(value)
        if len(memo) < MEMO_SIZE:
            memo[id(value)] = (value, written)
        return written

    return fill
