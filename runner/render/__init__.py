"""Render each point of a sweep to a Beaker experiment spec document.

The document is exactly the JSON that beaker-py's `BeakerExperimentSpec.to_json()` produces
(camelCase, durations in nanoseconds); `runner.backends.beaker` turns it into the typed
`BeakerExperimentSpec` and proves the round trip is lossless. Rendering here is pure and cheap
(no beaker import, no clock, no randomness): the tasks compile once into slots
(`runner.render.slots`), the document into a skeleton per shape of point (`runner.render.shape`), and each
point only fills the skeleton's holes and hashes the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from runner.core.errors import ManifestError, Problem
from runner.core.keys import experiment_name, point_key
from runner.core.ladder import CHECKPOINT, PARENT, PARENT_CHECKPOINT
from runner.core.marks import KeyPath
from runner.core.model import BUILTINS, Point, Rendered, Sweep, param_env_name
from runner.core.values import Value, as_text, checked
from runner.render import argv, template
from runner.render.reserved import env_name_problems
from runner.render.shape import SpecShape
from runner.render.skeleton import Skeleton
from runner.render.slots import PointContext, Slot

MULTINODE_DEFAULTS: Mapping[str, Any] = {
    "leader_selection": True,
    "host_networking": True,
    "propagate_failure": True,
    "propagate_preemption": True,
    "synchronized_start_timeout": "5m",
}
"""A multi-replica task's settings when the manifest sets none: gantry's (`--torchrun --replicas`
and `Recipe.with_replicas`), for `launcher: torchrun` and a task without a launcher."""
ACCELERATE_MULTINODE_DEFAULTS: Mapping[str, Any] = {
    key: value for key, value in MULTINODE_DEFAULTS.items() if key != "synchronized_start_timeout"
}
"""`launcher: accelerate`'s: mason's (open-instruct), which sends no synchronized start; a job
whose replicas start minutes apart runs, as it did under mason, unless the manifest asks."""


def multinode_defaults(launcher: str | None) -> Mapping[str, Any]:
    """The multinode settings a task with this launcher gets unless it sets them."""
    return ACCELERATE_MULTINODE_DEFAULTS if launcher == "accelerate" else MULTINODE_DEFAULTS


_LEGACY_SWEEP_ENV = (
    "SWEEP_NAME",
    "SWEEP_EXPERIMENT",
    "SWEEP_POINT_KEY",
    "SWEEP_REVISION",
    "SWEEP_PARAMS",
)


_EXPERIMENT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def _name_problem(prefix: str) -> str | None:
    if _EXPERIMENT_NAME.match(prefix):
        return None
    return (
        f"experiment name renders to {prefix!r}: use letters, digits, '.', '_' and '-'"
        " (Beaker's rule for names)"
    )


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
        self._conditional = {c.name: c for c in sweep.space.conditions}
        self._optional = frozenset(self._conditional)
        self._ladder = sweep.space.ladder
        if self._ladder is not None:  # {parent}: in tasks only, absent at rung 0
            self._known.add(PARENT)
            self._optional |= {PARENT}
        self._checkpoint = self._compile_checkpoint()
        self._literal_numbers: dict[KeyPath, int | float] = {}
        """Checked values of literal numeric slots (`replicas: 1`, `gpus: 8`), by slot path."""
        self._skeletons: dict[tuple[tuple[bool, ...], frozenset[str]], Skeleton[PointContext]] = {}
        """The spec with holes, per shape of point: which tasks are multi-node, which
        conditional parameters are absent."""
        self._replicas: tuple[tuple[int, ...], tuple[bool, ...]] | None = None
        """Each task's replica count and whether it is multi-node, once known to be the same
        at every point."""
        self._derived = self._compile_derived()
        self._name: Slot | None = None
        if sweep.name_template is not None:
            # Not derived parameters nor {experiment}: those may use the name themselves.
            known = set(sweep.space.axis_names) | {"sweep", "revision"}
            self._name = self._slot(sweep.name_template, ("experiment_name",), known)
        self._tasks = [self._compile_task(t, ("tasks", i)) for i, t in enumerate(sweep.tasks)]
        self.legacy_env = tuple(
            (
                *t.get("env", {}),
                *t.get("secrets", {}),
                *_LEGACY_SWEEP_ENV,
                *self._env_names.values(),
            )
            for t in sweep.tasks
        )
        """Each task's env var names in the order spec hash version 1 wrote them (`runner.plan.drift`)."""
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

    def _problem(self, path: KeyPath, message: str) -> None:
        self.problems.append(Problem.at(self.sweep.marks, str(self.sweep.path), path, message))

    def _slot(
        self, raw: object, path: KeyPath, known: set[str] | None = None, argv: bool = False
    ) -> Slot:
        text = raw if isinstance(raw, str) else as_text(checked(raw))
        known = self._known if known is None else known
        try:
            parsed = template.parse(text)
        except template.TemplateError as exc:
            self._problem(path, str(exc))
            return Slot(template.Template((text,)), path)
        for name in parsed.names:
            if name not in known:
                self._problem(
                    path,
                    f"template names unknown parameter {name!r} (known: {', '.join(sorted(known))})",
                )
        for name in sorted(set() if argv else parsed.needs(self._optional & known)):
            where = self._conditional.get(name) or "rung 0's points have no parent"
            self._problem(
                path,
                f"{{{name}}} is absent from some points ({where}): write"
                f" {{{name}?TEXT}} to say what goes there, or pass it in command or arguments,"
                " where an item naming an absent parameter is left out",
            )
        return Slot(parsed, path)

    def _compile_checkpoint(self) -> Slot | None:
        """`params.fidelity.checkpoint`, which makes `{checkpoint}` and `{parent_checkpoint}`
        (absent at rung 0) known to the tasks; None without it."""
        ladder = self._ladder
        if ladder is None or ladder.checkpoint is None:
            return None
        self._known |= {CHECKPOINT, PARENT_CHECKPOINT}
        self._optional |= {PARENT_CHECKPOINT}
        # The configuration's own names only: a parent's path is the same template at its name.
        known = set(self.sweep.space.axis_names) | set(BUILTINS)
        return self._slot(ladder.checkpoint, ("params", "fidelity", CHECKPOINT), known)

    def _compile_derived(self) -> list[tuple[str, Slot]]:
        """The one place derived templates are checked: each may name only what comes before it."""
        known = set(self.sweep.space.axis_names) | set(BUILTINS)
        out = []
        for item in self.sweep.space.derived:
            out.append(
                (item.name, self._slot(item.template, ("params", "derived", item.name), known))
            )
            known = known | {item.name}
        return out

    def _compile_task(self, task: Mapping[str, Any], path: KeyPath) -> dict[str, Any]:
        slot = self._slot
        for where, said in env_name_problems(task, path):
            self._problem(where, said)
        resources = task.get("resources", {})
        if task.get("launcher") == "torchrun" and not resources.get("gpus"):
            self._problem(
                (*path, "launcher"),
                "launcher: torchrun starts one process per GPU: set resources.gpus (gantry"
                " refuses --torchrun without --gpus too)",
            )
        return {
            "name": slot(task.get("name") or "main", (*path, "name")),
            "image": {k: slot(v, (*path, "image", k)) for k, v in task["image"].items()},
            "command": self._argv(task, path, "command"),
            "arguments": self._argv(task, path, "arguments"),
            "env": [(k, slot(v, (*path, "env", k))) for k, v in task.get("env", {}).items()]
            + self._code_env(task.get("code"), path),
            "secrets": _secrets(task),
            "mounts": [
                {k: slot(v, (*path, "mounts", i, k)) for k, v in mount.items()}
                for i, mount in enumerate(task.get("mounts", []))
            ],
            "result": slot(task.get("result", "/results"), (*path, "result")),
            "resources": {k: slot(v, (*path, "resources", k)) for k, v in resources.items()},
            "replicas": slot(task.get("replicas", 1), (*path, "replicas")),
            "multinode": {**multinode_defaults(task.get("launcher")), **task.get("multinode", {})},
            "single_host_networking": task.get("multinode", {}).get("host_networking", False),
        }

    def _code_env(self, code: Mapping[str, Any] | None, path: KeyPath) -> list[tuple[str, Slot]]:
        """`code:`'s own variables (fixed, so hashed): where the checkout goes, and the
        repository when the manifest names it (else it is set at submit time)."""
        if code is None:
            return []
        out = [("SWEEP_CODE_DIR", Slot(template.Template((argv.CODE_DIR,)), (*path, "code")))]
        if "repo" in code:
            url = argv.code_repo(code["repo"])
            out.append(
                ("SWEEP_CODE_REPO", Slot(template.Template((url,)), (*path, "code", "repo")))
            )
        return out

    def _argv(self, task: Mapping[str, Any], path: KeyPath, field: str) -> list[Slot]:
        """Compiled command or arguments, after the `$VAR` rule; a launcher prefixes its line."""
        command, arguments = list(task["command"]), list(task.get("arguments", []))
        launcher = task.get("launcher")
        script = None if launcher else argv.script_index(command + arguments)
        offset = 0 if field == "command" else len(command)
        slots = []
        if launcher:
            for i, raw in enumerate(command if field == "command" else arguments):
                flag = argv.launcher_flag(launcher, str(raw))
                if flag:
                    self._problem((*path, field, i), flag)
        code = task.get("code")
        if code is not None and field == "command":
            prefix = argv.code_prefix(tuple(code.get("setup", ())))
            slots = [Slot(template.Template((t,)), (*path, "code")) for t in prefix]
        if launcher and field == "command":
            prefix = argv.launch_prefix(launcher, tuple(task.get("setup", ())))
            slots += [Slot(template.Template((t,)), (*path, "launcher")) for t in prefix]
        for i, raw in enumerate(command if field == "command" else arguments):
            item_path = (*path, field, i)
            check = argv.script_problem if offset + i == script else argv.variable_problem
            problem = check(str(raw))
            if problem:
                self._problem(item_path, problem)
                slots.append(Slot(template.Template((str(raw),)), item_path))
            else:
                slots.append(self._slot(raw, item_path, argv=True))
                self._dangling(slots, item_path)
        return slots

    def _dangling(self, slots: list[Slot], path: KeyPath) -> None:
        """A flag item before an item that may be left out would stay without its value."""
        if len(slots) < 2 or not slots[-1].template.needs(self._optional):
            return
        flag = slots[-2].literal
        if flag is not None and argv.is_bare_flag(flag):
            name = sorted(slots[-1].template.needs(self._optional))[0]
            self._problem(
                path,
                f"{{{name}}} is absent from some points, where this item is left out but"
                f" {flag!r} before it would stay: write {flag}={{{name}}} as one item",
            )

    # -- rendering -----------------------------------------------------------------------------

    def _named(self, point: Point) -> tuple[PointContext, dict[str, Value]]:
        """The point's context with its key and name, and the values its templates read."""
        sweep = self.sweep
        params = point.as_dict()
        key = point_key(sweep.name, sweep.placement.workspace, sweep.revision, params)
        env: dict[str, Value] = {**params, "sweep": sweep.name, "revision": sweep.revision}
        context = PointContext(sweep, point, env, (key, ""), self._literal_numbers)
        prefix = None if self._name is None else context.text(self._name, _name_problem)
        context.name = env["experiment"] = experiment_name(sweep.name, key, prefix)
        return context, env

    def render(self, point: Point) -> Rendered:
        sweep = self.sweep
        context, env = self._named(point)
        key, name = context.key, context.name
        above = self._ladder.parent(point.params) if self._ladder is not None else None
        saved = self._checkpoint
        if saved is not None:  # where it writes its checkpoint: the template at its name
            context.checkpoint = env[CHECKPOINT] = context.text(saved)
        if above is not None:  # a promoted point: its parent's key and {parent}, its name
            parent, _ = self._named(Point(above))
            context.parent, env[PARENT] = parent.key, parent.name
            if saved is not None:  # and where the parent wrote the checkpoint it resumes
                context.parent_checkpoint = env[PARENT_CHECKPOINT] = parent.text(saved)
        if self._derived:
            derived = []
            for dname, slot in self._derived:
                env[dname] = value = context.value(slot)
                derived.append((dname, value))
            context.derived = tuple(derived)
        replicas, multi = self._replicas or self._count_replicas(context)
        context.replicas = replicas
        absent = self._optional.difference(env) if self._optional else self._optional
        shape = (multi, absent)
        skeleton = self._skeletons.get(shape)
        if skeleton is None:
            env_names = {k: v for k, v in self._env_names.items() if k not in absent}
            document = SpecShape(sweep, self._tasks, env_names, context, absent)
            skeleton = Skeleton(document.spec(), unhashed=document.description_hole)
            self._skeletons[shape] = skeleton
        text, hashed = skeleton.fill_hashed(context)
        return Rendered(
            key,
            name,
            point.params,
            context.derived,
            text,
            hashlib.sha256(hashed.encode()).hexdigest(),
        )

    def _count_replicas(self, context: PointContext) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """Each task's replica count at this point, and which tasks are multi-node; kept when
        no task templates its count (the same for every point)."""
        replicas = tuple(
            int(context.number(task["replicas"], "replicas", 1)) for task in self._tasks
        )
        counted = (replicas, tuple(n > 1 for n in replicas))
        if all(task["replicas"].literal is not None for task in self._tasks):
            self._replicas = counted
        return counted


def _secrets(task: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A task's (variable, Beaker secret) pairs: its own, then the two opt-ins."""
    pairs = list(task.get("secrets", {}).items())
    if "beaker_token_secret" in task:
        pairs.append(("BEAKER_TOKEN", task["beaker_token_secret"]))
    if "secret" in task.get("code", {}):
        pairs.append(("SWEEP_CODE_TOKEN", task["code"]["secret"]))
    return pairs
