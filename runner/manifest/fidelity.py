"""The `params.fidelity` section: successive halving in rungs, and the rungs' part of the lock.

Beside `grid` or `sample` (which choose rung 0's configurations), `fidelity: {param, min, max, eta,
metric, goal}` runs every configuration at `min` (rung 0), then the best `max(1, n // eta)` of
each rung again at `eta` times the budget, the last rung at `max`. Each rung is a round:
`propose` appends the configurations it promotes to the sweep's lock (its `rungs` key, checked
here), and a point of rung k carries the fidelity parameter at rung k's value and `rung: k`, so
the same configuration at two rungs is two points and rung 0's keys never change as later rungs
run. The promotions themselves are chosen by `runner.search.rungs`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from runner.core.aims import Aim, Goal
from runner.core.errors import Problem
from runner.core.invoked import invoked
from runner.core.ladder import CHECKPOINT, MIN_TIMEOUT, PARENT, PARENT_CHECKPOINT, RUNG, Ladder
from runner.core.locked import Rows, RungLock
from runner.core.marks import Document, KeyPath, field_path
from runner.core.model import BUILTINS, Axis, Point, Space
from runner.core.sample import Sample, row_identity
from runner.core.space import iter_points
from runner.core.values import InvalidValue, Value, canonical_json, checked
from runner.manifest import conditions as conditioned
from runner.render import template
from runner.render.durations import to_nanoseconds

OWN = {
    RUNG: "each point's rung",
    PARENT: "{parent}: the experiment a promoted point resumes",
    CHECKPOINT: "{checkpoint}: where a point writes its checkpoint",
    PARENT_CHECKPOINT: "{parent_checkpoint}: the checkpoint a promoted point resumes",
}
"""The names a halving gives every point, or its tasks: no parameter may take them."""
FIDELITY: KeyPath = ("params", "fidelity")


def rung_values(low: Value, high: Value, eta: int) -> tuple[Value, ...]:
    """`low · eta^k` while below `high`, then `high`: [100, 300, 900, 2700] for 100, 2700, 3.
    Whole numbers stay whole; other values keep 12 significant digits."""
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high))
    out: list[Value] = []
    value = float(low)
    while value < float(high) * (1 - 1e-9):
        out.append(round(value) if whole else float(f"{value:.12g}"))
        value *= eta
    return (*out, high)


def parse_fidelity(
    doc: Document,
    add: conditioned.Add,
    swept: Callable[[str], KeyPath | None],
    sample: Sample | None,
) -> Ladder | None:
    """The fidelity section's rungs, from a schema-valid document; problems go to `add(path,
    message, key)`; `swept(name)`: where a grid, zip or sample parameter of that name is written.
    Its `metric` and `goal` are the sweep's objective (`runner.manifest.aims`)."""
    raw = (doc.data.get("params") or {}).get("fidelity")
    if raw is None:
        return None
    param, eta = str(raw["param"]), int(raw["eta"])
    bounds: dict[str, Value] = {}
    for key in ("min", "max"):
        try:
            bounds[key] = checked(raw[key])
        except InvalidValue as exc:
            add((*FIDELITY, key), str(exc), False)
    # a bound refused above: one budget stands in, so that its name stays known to the templates
    low, high = (bounds["min"], bounds["max"]) if len(bounds) == 2 else (1, 1)
    floor = to_nanoseconds(raw["min_timeout"]) if "min_timeout" in raw else MIN_TIMEOUT
    saved = raw.get("checkpoint")
    ladder = Ladder(param, rung_values(low, high, eta), eta, floor, saved)
    for problem in _problems(doc, ladder, swept, sample):
        add(*problem)
    if saved is not None and (wrong := checkpoint_problem(str(saved))):
        add((*FIDELITY, CHECKPOINT), wrong, False)
    if float(low) > float(high):
        said = f"min {low} is above max {high}: rung 0 runs at min, the last rung at max"
        add((*FIDELITY, "min"), said, False)
    return ladder


def _problems(
    doc: Document,
    ladder: Ladder,
    swept: Callable[[str], KeyPath | None],
    sample: Sample | None,
) -> list[tuple[KeyPath, str, bool]]:
    """What the schema cannot say of a fidelity section: where its parameter comes from, what
    it shares with the sample, and that a command reads it."""
    out: list[tuple[KeyPath, str, bool]] = []
    param = ladder.param
    where = swept(param)
    if where is not None:
        out.append(
            (
                (*FIDELITY, "param"),
                f"{param} is swept by {field_path(where)}: the rungs set it (min at rung 0, max at"
                " the last), so take it out of there",
                False,
            )
        )
    for name, meaning in OWN.items():
        where = swept(name)
        if where is not None:
            out.append((where, f"{name} is the halving's own name ({meaning}): rename it", True))
    if param in (*OWN, *BUILTINS):
        said = f"{param} cannot be the budget: it is a name of its own (call it steps, epochs…)"
        out.append(((*FIDELITY, "param"), said, False))
    if sample is not None:
        out += _against_sample(doc, sample)
    read = _read_by_tasks(doc)
    if read is not None and param not in read:
        out.append(
            (
                (*FIDELITY, "param"),
                f"{param} is read by no task's command, arguments or env: each rung's budget would"
                f" not reach the run (pass it, e.g. --{param}={{{param}}})",
                False,
            )
        )
    return out


def checkpoint_problem(path: str) -> str:
    """What is wrong with a checkpoint path template ("" when nothing): an absolute path (on
    storage every job mounts; a relative one dies with the container) without spaces or `..`,
    naming `{experiment}` (each point its own; a promoted point finds its parent's by name)."""
    try:
        names = template.parse(path).names
    except template.TemplateError as exc:
        return str(exc)
    if not path.startswith("/") or any(c.isspace() for c in path) or "/../" in f"{path}/":
        return (
            f"{path!r} is not an absolute path without spaces or '..': a checkpoint lives on"
            " storage every job mounts (a weka bucket's path), keyed by {experiment}"
        )
    if "experiment" not in names:
        return (
            f"{path!r} does not name {{experiment}}: each point writes its own checkpoint there,"
            " and a promoted point finds its parent's at the parent's name"
        )
    return ""


def _against_sample(doc: Document, sample: Sample) -> list[tuple[KeyPath, str, bool]]:
    raw = doc.data["params"]["sample"]
    halving = doc.data["params"]["fidelity"]
    out: list[tuple[KeyPath, str, bool]] = []
    if sample.adaptive:
        said = (
            f"method {sample.method} proposes its points round by round; successive halving needs"
            " rung 0's configurations up front: use params.grid or a drawn sample (random,"
            " sobol, halton)"
        )
        out.append((FIDELITY, said, True))
    if raw.get("constraints"):
        said = (
            "a halving ranks each rung by its metric alone: it does not keep constraints (take"
            " them out of params.sample, or search without the rungs)"
        )
        out.append((("params", "sample", "constraints"), said, True))
    metric, goal = _first(raw.get("metric", "")), _first(raw.get("goal", Goal.MINIMIZE))
    if metric and metric != halving["metric"]:
        said = f"{halving['metric']} is not params.sample.metric ({metric}): one search, one metric"
        out.append(((*FIDELITY, "metric"), said, False))
    stated = "goal" in raw or bool(metric)
    if stated and goal != halving.get("goal", Goal.MINIMIZE):
        said = f"{halving.get('goal', Goal.MINIMIZE)} is not params.sample's goal ({goal}): one search, one goal"
        out.append(((*FIDELITY, "goal"), said, "goal" not in halving))
    return out


def _first(value: Any) -> Any:
    """A list's first item (`metric: [loss, gpu_hours]`), or the value itself."""
    return value[0] if isinstance(value, list) and value else value


def _read_by_tasks(doc: Document) -> set[str] | None:
    """Every name a template of a task's command, arguments or env reads; None when the tasks
    are not as the schema says (its own lines say what is wrong with them)."""
    names: set[str] = set()
    tasks = doc.data.get("tasks")
    if not isinstance(tasks, list) or not all(isinstance(t, Mapping) for t in tasks):
        return None
    for task in tasks:
        lists, env = [task.get("command", []), task.get("arguments", [])], task.get("env") or {}
        if not all(isinstance(v, list) for v in lists) or not isinstance(env, Mapping):
            return None
        texts = [*lists[0], *lists[1], *env.values()]
        for text in texts:
            try:
                names.update(template.parse(str(text)).names)
            except template.TemplateError:
                continue  # the renderer says what is wrong with it
    return names


def names_of(ladder: Ladder | None) -> tuple[str, ...]:
    """The names a halving gives each point: its fidelity parameter and the rung."""
    return ladder.names if ladder is not None else ()


def ladder_axes(ladder: Ladder, doc: Document) -> list[Axis]:
    """The fidelity parameter and the rung as the last two axes, at rung 0's values."""
    mark = doc.marks.value(FIDELITY)
    return [Axis((name,), ((value,),), mark) for name, value in ladder.at(0)]


def configuration_names(space: Space) -> tuple[str, ...]:
    ladder = space.ladder
    names = ladder.names if ladder is not None else ()
    return tuple(n for n in space.axis_names if n not in names)


def rung_zero(space: Space) -> Rows:
    """Rung 0's configurations, in manifest order, as rows of `configuration_names`."""
    names = configuration_names(space)
    return tuple(
        tuple(dict(p.params).get(n) for n in names)
        for p in iter_points(replace(space, promoted=()))
    )


def belonging(ladder: Ladder, aim: Aim, names: Sequence[str], configurations: Rows) -> str:
    """The digest the lock's rungs must carry: of the fidelity section (its rungs and the
    objective `aim` that ranks them) and of rung 0 (a changed min, max, eta, metric or goal, or
    a configuration added or taken away, starts again)."""
    identity = {
        "param": ladder.param,
        "values": list(ladder.values),
        "eta": ladder.eta,
        "metric": aim.metric,
        "goal": aim.goal,
        "params": list(names),
        "rung 0": [row_identity(row) for row in configurations],
    }
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def with_rungs(
    space: Space, ladder: Ladder, aim: Aim, found: RungLock | None, doc: Document
) -> tuple[Space, list[Problem]]:
    """The space with the lock's promoted points (none when the lock has no rungs), or with
    none and the problem that the rungs are out of date."""
    if found is None:
        return space, []
    names = configuration_names(space)
    if found.of != belonging(ladder, aim, names, rung_zero(space)) or found.names != names:
        return space, [stale_rungs(doc)]
    last = len(ladder.values) - 1
    points = tuple(
        Point(
            (*((n, v) for n, v in zip(names, row, strict=True) if v is not None), *ladder.at(k)),
            f"rung {k}",
        )
        for k, row in found.promoted
        if 0 < k <= last
    )
    return replace(space, promoted=points), []


def stale_rungs(doc: Document) -> Problem:
    """The lock's rungs belong to another fidelity section or another rung 0."""
    said = (
        "the lock's rungs are out of date (params.fidelity or rung 0's configurations changed"
        f" since they were promoted): run {invoked()} propose {doc.source}"
    )
    return Problem.at(doc.marks, doc.source, FIDELITY, said, key=True)


RUNGS = "rungs"
"""The lock's key for the rungs."""


def rungs_json(rungs: RungLock) -> dict[str, Any]:
    return {
        "of": rungs.of,
        "params": list(rungs.names),
        "points": [[k, list(row)] for k, row in rungs.promoted],
    }


def parse_rungs(raw: Mapping[str, Any]) -> RungLock:
    """The rungs of a lock as read (ValueError, KeyError or TypeError when malformed)."""
    names = tuple(str(n) for n in raw["params"])
    promoted = []
    for k, row in raw["points"]:
        if isinstance(k, bool) or not isinstance(k, int) or len(row) != len(names):
            raise ValueError("a promoted point is [rung, [values]]")
        promoted.append((k, tuple(None if v is None else checked(v) for v in row)))
    return RungLock(str(raw["of"]), names, tuple(promoted))
