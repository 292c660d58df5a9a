"""`status`: the live state of every recorded experiment, from the backend, in few calls."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from runner import ledger
from runner.commands.common import Subparsers, add_paths, load_catalog, raise_if_problems
from runner.commands.submit import make_backend
from runner.report import params_text, tabulate


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("status", help="live state of each point's experiment")
    add_paths(parser)
    parser.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    parser.add_argument("--backend", choices=("auto", "beaker", "local"), default="auto")
    parser.set_defaults(run=run, http_timeout=None)


def run(args: argparse.Namespace) -> int:
    cat = load_catalog(args)
    raise_if_problems(cat)
    backend = make_backend(args, announce=False)
    sweeps: list[dict[str, Any]] = []
    try:
        for sweep in cat.sweeps:
            entries = ledger.read(
                ledger.ledger_path(cat.root, sweep.name, backend.kind), sweep.name
            ).entries
            ordered = sorted(entries.values(), key=lambda e: e.experiment)
            live = backend.states(sweep, [e.experiment for e in ordered]) if ordered else {}
            points = []
            for entry in ordered:
                exp = live.get(entry.experiment)
                points.append(
                    {
                        "experiment": entry.experiment,
                        "state": exp.state if exp else "missing",
                        "exit_code": exp.exit_code if exp else None,
                        "params": dict(entry.params),
                        "metrics": dict(exp.metrics) if exp else {},
                        "url": entry.url,
                    }
                )
            sweeps.append({"name": sweep.name, "path": str(sweep.path), "points": points})
    finally:
        backend.close()
    sys.stdout.write(_render(sweeps, args.format))
    return 0


def _render(sweeps: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"sweeps": sweeps}, indent=2, ensure_ascii=False, default=str) + "\n"
    blocks = []
    for sweep in sweeps:
        metric_names = sorted({m for p in sweep["points"] for m in p["metrics"]})
        headers = ["experiment", "state", "exit", "params", *metric_names, "url"]
        rows = [
            [
                p["experiment"],
                p["state"],
                "" if p["exit_code"] is None else p["exit_code"],
                params_text(list(p["params"].items())),
                *[_metric(p["metrics"].get(m)) for m in metric_names],
                p["url"],
            ]
            for p in sweep["points"]
        ]
        title = f"{sweep['name']} ({sweep['path']})"
        if fmt == "markdown":
            body = (
                tabulate(rows, headers=headers, tablefmt="github")
                if rows
                else "_nothing submitted yet_"
            )
            blocks.append(f"### `{sweep['name']}` — `{sweep['path']}`\n\n{body}")
        else:
            body = tabulate(rows, headers=headers) if rows else "nothing submitted yet"
            blocks.append(f"{title}\n{body}")
    return "\n\n".join(blocks) + "\n"


def _metric(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)
