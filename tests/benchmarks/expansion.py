"""1. Expansion + key + render per point, against the lower bound; 1e6 keys streamed. 2. The guard.

The lower bound is the least any implementation can do for a point's identity: itertools.product
over the same axis values, a dict per point, sha256 of its canonical JSON. Ours also builds the
`Point`, the experiment name, the whole Beaker spec document and its hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import runner.core.space
from runner.core.errors import ManifestError
from runner.core.keys import experiment_name, point_key
from runner.core.model import FORMAT_VERSION, Sweep
from runner.core.space import iter_points, upper_bound
from runner.manifest import load_manifest
from runner.render import Renderer
from tests.benchmarks.common import (
    PROJECT,
    Config,
    Row,
    best_of,
    count,
    load_sweep,
    manifest_text,
    python,
    ratio,
    seconds,
    verdict,
    write_sweep,
)

GRIDS = {1_000: (10, 10, 10), 10_000: (10, 10, 100), 100_000: (10, 100, 100)}
STREAM = (100, 100, 100)
WIDE = (10, 10, 10, 10, 10, 10)
QUICK_STREAM = (10, 100, 100)
RENDER_TARGET = 2.0
GUARD_TARGET = 0.010


def _keyed(sweep: Sweep) -> Iterator[tuple[tuple[object, ...], str]]:
    """Each point's axis values and key, the obvious minimal way: itertools.product -> dict ->
    sha256 of canonical JSON."""
    assert all(len(axis.names) == 1 for axis in sweep.space.axes), "grid axes only"
    names = sweep.space.axis_names
    columns = [[row[0] for row in axis.values] for axis in sweep.space.axes]
    for combo in itertools.product(*columns):
        identity = {
            "format": FORMAT_VERSION,
            "sweep": sweep.name,
            "workspace": sweep.placement.workspace,
            "revision": sweep.revision,
            "params": dict(zip(names, combo, strict=True)),
        }
        text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        yield combo, hashlib.sha256(text.encode()).hexdigest()


def lower_bound(sweep: Sweep) -> None:
    """The keys of _keyed, and nothing more: the obvious minimal loop."""
    for _ in _keyed(sweep):
        pass


def spec_template(renderer: Renderer) -> tuple[list[str], int]:
    """A spec-sized template: the first point's spec text cut into as many constant pieces as
    the spec has fields that differ between points (+1), and that number of holes."""
    points = list(iter_points(renderer.sweep.space))
    first, last = (renderer.render(p) for p in (points[0], points[-1]))
    holes = _differing(json.loads(first.spec_json), json.loads(last.spec_json))
    text = first.spec_json
    cut = [len(text) * i // (holes + 1) for i in range(holes + 2)]
    return [text[a:b] for a, b in itertools.pairwise(cut)], holes


def _differing(a: object, b: object) -> int:
    """Leaves (strings, numbers) of two JSON documents of one shape that differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(_differing(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return sum(_differing(x, y) for x, y in zip(a, b, strict=True))
    return int(a != b)


def spec_floor(sweep: Sweep, pieces: list[str], holes: int) -> None:
    """The lower bound, then a spec-sized template filled with the point's key and values as
    `str()` writes them, and the sha256 of the text: the least a render can do."""
    out: list[str] = [""] * (2 * holes + 1)
    out[0::2] = pieces
    for combo, key in _keyed(sweep):
        fills = [key, *map(str, combo)]
        out[1::2] = (fills * (holes // len(fills) + 1))[:holes]
        hashlib.sha256("".join(out).encode()).hexdigest()


def keys_only(sweep: Sweep) -> None:
    """Streaming mode: every point's key and experiment name, nothing kept."""
    name, workspace, revision = sweep.name, sweep.placement.workspace, sweep.revision
    for point in iter_points(sweep.space):
        experiment_name(name, point_key(name, workspace, revision, point.as_dict()))


def render_all(renderer: Renderer) -> None:
    """Expansion + key + render: what `expand` does per point, without keeping the results."""
    for point in iter_points(renderer.sweep.space):
        renderer.render(point)


def run(config: Config) -> list[Row]:
    rows: list[Row] = []
    sizes = {n: s for n, s in GRIDS.items() if not (config.quick and n > 10_000)}
    ours: dict[int, float] = {}
    for points, shape in sizes.items():
        grid_rows, ours[points] = _grid_rows(config, points, shape)
        rows += grid_rows
    rows += _beaker_py_row(config, ours[1_000])
    stream = _stream(config, QUICK_STREAM if config.quick else STREAM)
    rows.append(stream)
    rows += _guard(config, stream)
    return rows


def _grid_rows(config: Config, points: int, shape: tuple[int, ...]) -> tuple[list[Row], float]:
    """Rows for one grid size, and our time per point (expand + key + render)."""
    root = config.workdir / f"grid-{points}"
    sweep = load_sweep(
        root, write_sweep(root, "grid", manifest_text("grid", shape, max_points=points))
    )
    renderer = Renderer(sweep)
    pieces, holes = spec_template(renderer)
    repeat = 5 if points <= 10_000 else 2
    times: dict[str, list[float]] = {"floor": [], "spec": [], "ours": [], "keys": []}
    for _ in range(repeat):  # interleaved, so a busy moment hurts both sides alike
        times["floor"].append(best_of(lambda: lower_bound(sweep), 1))
        times["spec"].append(best_of(lambda: spec_floor(sweep, pieces, holes), 1))
        times["ours"].append(best_of(lambda: render_all(renderer), 1))
        times["keys"].append(best_of(lambda: keys_only(sweep), 1))
    per = {k: min(v) / points for k, v in times.items()}
    ours = times["ours"]
    compared = f"lower bound {seconds(per['floor'])}/point"
    rows = [
        Row(
            "1",
            f"expand + key + render, {count(points)} points",
            f"{seconds(per['ours'])}/point ({seconds(min(ours))})",
            compared,
            ratio(per["ours"], per["floor"]),
            f"≤ {RENDER_TARGET:g}×",
            verdict(per["ours"] <= RENDER_TARGET * per["floor"]),
        ),
        Row(
            "1",
            f"expand + key + render, {count(points)} points, against the bound with a spec",
            f"{seconds(per['ours'])}/point",
            f"key + a {sum(map(len, pieces)):,}-character template with {holes} holes filled"
            f" + its sha256: {seconds(per['spec'])}/point",
            ratio(per["ours"], per["spec"]),
            f"≤ {RENDER_TARGET:g}×",
            verdict(per["ours"] <= RENDER_TARGET * per["spec"]),
        ),
        Row(
            "1",
            f"expand + key only, {count(points)} points",
            f"{seconds(per['keys'])}/point",
            compared,
            ratio(per["keys"], per["floor"]),
        ),
    ]
    return rows, per["ours"]


def _beaker_py_row(config: Config, ours: float) -> list[Row]:
    """The other obvious alternative: building beaker-py's typed spec for each point."""
    from beaker import BeakerExperimentSpec  # here, so the streaming child never imports it

    root = config.workdir / "grid-1000"
    sweep = load_sweep(root, root / "sweeps" / "grid.yaml")
    renderer = Renderer(sweep)
    specs = [dict(renderer.render(p).spec) for p in iter_points(sweep.space)]

    def typed() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 'preemptible'
            for spec in specs:
                BeakerExperimentSpec.from_json(spec)

    theirs = best_of(typed, 3) / len(specs)
    return [
        Row(
            "1",
            "beaker-py `BeakerExperimentSpec.from_json` per spec, 1 000 points",
            f"{seconds(theirs)}/point",
            f"our expand + key + render: {seconds(ours)}/point",
            ratio(theirs, ours),
        )
    ]


def _stream(config: Config, shape: tuple[int, ...]) -> Row:
    points = 1
    for size in shape:
        points *= size
    root = config.workdir / "stream"
    path = write_sweep(root, "stream", manifest_text("stream", shape, max_points=points))
    code = "import sys; from tests.benchmarks.expansion import stream_child as c; c(*sys.argv[1:])"
    done = subprocess.run(
        python("-c", code, str(root), str(path)),
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout)
    growth_mib = max(0, figures["rss_peak_kib"] - figures["rss_before_kib"]) / 1024
    config.note(
        f"Streaming {count(points)} keys: peak RSS {figures['rss_peak_kib'] / 1024:.1f} MiB, of which"
        f" {figures['rss_before_kib'] / 1024:.1f} MiB before the loop (interpreter, imports, the"
        " loaded sweep): memory does not grow with the number of points."
    )
    return Row(
        "1",
        f"stream keys only, {count(points)} points (separate process)",
        f"{seconds(figures['seconds'])}, peak RSS +{growth_mib:.1f} MiB",
        f"lower bound {seconds(figures['lower'])}",
        ratio(figures["seconds"], figures["lower"]),
    )


def stream_child(root: str, path: str) -> None:
    """Run in a fresh process so ru_maxrss is this loop's peak and nothing else's."""
    sweep = load_sweep(Path(root), Path(path))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    keys_only(sweep)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lower = best_of(lambda: lower_bound(sweep), 1)
    figures = {"seconds": elapsed, "lower": lower, "rss_before_kib": before, "rss_peak_kib": peak}
    sys.stdout.write(json.dumps(figures) + "\n")


@contextlib.contextmanager
def _counting_points() -> Iterator[list[int]]:
    """Count every Point that expansion creates while the block runs."""
    made = [0]
    original = runner.core.space.Point  # type: ignore[attr-defined]  # the name expansion calls

    class Counted(original):  # type: ignore[valid-type,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            made[0] += 1
            super().__init__(*args, **kwargs)

    runner.core.space.Point = Counted  # type: ignore[attr-defined]
    try:
        yield made
    finally:
        runner.core.space.Point = original  # type: ignore[attr-defined]


def _guard(config: Config, stream: Row) -> list[Row]:
    """`load_manifest` refusing a 1e6-point grid, written with many values per axis and with few."""
    rows = []
    for shape in (STREAM, WIDE):
        name = "x".join(str(size) for size in shape)
        root = config.workdir / f"guard-{name}"
        path = write_sweep(root, "huge", manifest_text("huge", shape))
        shown = path.relative_to(root).as_posix()

        def load(path: Path = path, shown: str = shown) -> None:
            try:
                load_manifest(path, shown)
            except ManifestError as exc:
                assert "max_points" in str(exc), exc
            else:
                raise AssertionError("a 1e6-point grid loaded under the default max_points")

        with _counting_points() as made:
            elapsed = best_of(load, 5 if config.quick else 20)
        rows.append(
            Row(
                "2",
                f"max-points guard: `load_manifest` refuses a {name} grid (1e6 points)",
                f"{seconds(elapsed)}, {made[0]} points expanded",
                f"{stream.name.split(' (')[0]}: {stream.result.split(',')[0]}",
                "",
                f"< {GUARD_TARGET * 1e3:g} ms",
                verdict(elapsed < GUARD_TARGET and made[0] == 0),
            )
        )
    root = config.workdir / "guard-bound"
    big = load_sweep(root, write_sweep(root, "big", manifest_text("big", STREAM, max_points=10**6)))
    bound = best_of(lambda: [upper_bound(big.space) for _ in range(1000)], 3) / 1000
    config.note(
        "Guard: `load_manifest` reads, schema-checks and parses the file, then stops at"
        f" `max_points` before expanding anything; the bound itself (`upper_bound`) takes"
        f" {seconds(bound)}, so the time grows with the values written in the file, not with"
        " the points they multiply to."
    )
    return rows
