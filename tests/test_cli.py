from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from beaker import BeakerExperimentSpec

from runner import ledger
from runner.cli import build_parser, main
from runner.commands.common import args_from
from runner.commands.submit_args import SubmitArgs, from_namespace
from runner.plan.catalog import load
from runner.report import plan as report
from runner.report.plan import MARKDOWN_LIMIT
from tests.conftest import PROJECT
from tests.helpers import minimal


def _undraft(root: Path) -> None:
    """Launch the examples: no longer drafts, and each with the budget Beaker requires."""
    for path in (root / "sweeps").glob("*.yaml"):
        text = path.read_text().replace("draft: true", "draft: false")
        if "budget:" not in text:
            text = text.replace("beaker:\n", "beaker:\n  budget: ai2/oe-training\n", 1)
        path.write_text(text)


def test_expand_plan_lists_every_example_point(
    project_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(project_copy), "expand", "--plan"]) == 0
    out = capsys.readouterr().out
    # examples, quickstarts, 3 migrated, branin round 0, the bowl (report's example), the
    # halving's rung 0
    assert out.count("\n+ ") == 12 + 7 + 7 + 5 + 8 + 26 + 4 + 24 + 27
    assert "Plan: 12 to submit, 0 already submitted, 0 drifted, 0 orphaned (draft" in out


def test_detailed_exitcode_is_2_with_points_to_submit_and_0_for_drafts(project_copy: Path) -> None:
    assert main(["-C", str(project_copy), "expand", "--plan", "--detailed-exitcode"]) == 0
    _undraft(project_copy)
    assert main(["-C", str(project_copy), "expand", "--plan", "--detailed-exitcode"]) == 2


def test_plan_statuses_against_a_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = minimal(tmp_path, extra="")
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    first, second = points
    entries = [
        ledger.Entry(
            first["key"],
            first["experiment"],
            "https://x/1",
            "1",
            first["spec_hash"],
            "t",
            "c",
            {"lr": 0.1},
        ),
        ledger.Entry(
            second["key"],
            second["experiment"],
            "https://x/2",
            "2",
            "0" * 64,
            "t",
            "c",
            {"lr": 0.01},
        ),
        ledger.Entry(
            "f" * 64, "demo-ffffffffffff", "https://x/3", "3", "0" * 64, "t", "c", {"lr": 9}
        ),
    ]
    ledger.record(ledger.ledger_path(tmp_path, "demo"), "demo", entries)
    path.write_text(path.read_text().replace("[0.1, 0.01]", "[0.1, 0.01, 0.001]"))
    assert (
        main(["-C", str(tmp_path), "expand", "--plan", "--format", "json", "--detailed-exitcode"])
        == 2
    )
    plan = json.loads(capsys.readouterr().out)["sweeps"][0]
    assert [p["status"] for p in plan["points"]] == ["=", "~", "+", "-"]
    assert plan["counts"] == {"to_submit": 1, "already_submitted": 1, "drifted": 1, "orphaned": 1}
    assert plan["points"][0]["url"] == "https://x/1"
    assert main(["-C", str(tmp_path), "expand", "--plan"]) == 0
    assert (
        "Plan: 1 to submit, 1 already submitted, 1 drifted, 1 orphaned" in capsys.readouterr().out
    )


def test_markdown_plan_of_a_huge_sweep_stays_under_the_comment_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = ", ".join(str(i) for i in range(100))
    minimal(tmp_path, extra=f"    seed: [{values}]\n    bs: [{values}]\n  max_points: 20000\n")
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert len(text.encode()) < MARKDOWN_LIMIT + 1000
    assert "Plan: 20000 to submit" in text and "more points" in text


def test_save_specs_writes_files_beaker_py_reads_back(project_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "specs"
    assert main(["-C", str(project_copy), "expand", "--save-specs", str(out)]) == 0
    files = sorted(out.rglob("*.yaml"))
    assert len(files) == 69 + 24 + 27  # the bowl: report's example; the halving's rung 0
    golden = {
        p["name"]: p["spec"]
        for p in json.loads((PROJECT / "tests/golden/torchrun-scaling.json").read_text())
    }
    for path in files:
        spec = BeakerExperimentSpec.from_file(path)
        if path.stem in golden:
            assert json.dumps(spec.to_json(), sort_keys=True) == json.dumps(
                golden[path.stem], sort_keys=True
            )


def test_invalid_manifest_fails_with_one_line_per_problem_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = minimal(tmp_path)
    path.write_text(path.read_text().replace("clusters:", "clustres:"))
    assert main(["-C", str(tmp_path), "expand", "--plan"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "beaker: missing required field 'clusters'" in err
    assert (
        "sweeps/demo.yaml:6:3: beaker.clustres: unknown field 'clustres' (did you mean 'clusters'?"
        in err
    )


def test_validate_reports_counts(project_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(project_copy), "validate"]) == 0
    assert "11 manifest(s) valid, 120 point(s)" in capsys.readouterr().err


def test_two_manifests_with_one_sweep_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    minimal(tmp_path)
    (tmp_path / "sweeps" / "copy.yaml").write_text((tmp_path / "sweeps" / "demo.yaml").read_text())
    assert main(["-C", str(tmp_path), "validate"]) == 1
    assert (
        "sweeps/demo.yaml:2:7: name: sweep name 'demo' is already used by sweeps/copy.yaml"
        in capsys.readouterr().err
    )


def test_expand_plan_does_not_import_beaker_grpc_or_git(project_copy: Path) -> None:
    code = (
        "import sys; from runner.cli import main; rc = main(['-C', sys.argv[1], 'expand', '--plan']);"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'beaker', 'grpc', 'git', 'requests'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(project_copy)],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT,
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_module_entry_point_and_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "runner", "--help"], capture_output=True, text=True, cwd=PROJECT
    )
    assert result.returncode == 0 and "expand" in result.stdout and "submit" in result.stdout


def test_markdown_headline_counts_only_what_a_merge_would_submit(
    project_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    minimal(project_copy, name="live")
    assert main(["-C", str(project_copy), "expand", "--plan", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    drafts = len(list((project_copy / "sweeps").glob("*.yaml"))) - 1
    assert (
        f"**2** to submit, **0** already submitted, **0** drifted, **0** orphaned across 1 sweep(s). {drafts} draft"
        in text
    )


def test_an_unexpected_error_exits_3_with_one_line_and_debug_shows_it(
    project_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.plan import catalog

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the catalog broke")

    monkeypatch.setattr(catalog, "load", broken)
    assert main(["-C", str(project_copy), "validate"]) == 3
    err = capsys.readouterr().err
    assert err == (
        "unexpected error: RuntimeError: the catalog broke (rerun with --debug for a traceback)\n"
    )
    with pytest.raises(RuntimeError, match="the catalog broke"):
        main(["--debug", "-C", str(project_copy), "validate"])


def test_an_interrupt_exits_130(
    project_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.plan import catalog

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(catalog, "load", interrupted)
    assert main(["-C", str(project_copy), "validate"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_usage_errors_exit_1_not_the_changes_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["expand", "--no-such-option"])
    assert info.value.code == 1
    assert "error: unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_submit_and_validate_print_a_problem_in_the_same_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = minimal(tmp_path)
    path.write_text(path.read_text().replace("org/image", "'org/image {lr}'"))
    outputs = []
    for command in (["validate"], ["submit", "--backend", "local", "sweeps/demo.yaml"]):
        assert main(["-C", str(tmp_path), *command]) == 1
        outputs.append(capsys.readouterr().err.splitlines())
    assert outputs[0] == outputs[1]
    assert outputs[0][0].startswith("sweeps/demo.yaml:8:21: tasks[0].image.beaker: image renders")


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_expand_without_plan_makes_no_plan_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    minimal(tmp_path)
    assert main(["-C", str(tmp_path), "expand", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "Plan:" not in out and "to submit" not in out and '"status"' not in out
    assert "demo-" in out


def test_a_plan_report_shows_the_plan_or_only_the_points(tmp_path: Path) -> None:
    """One `View` for the three formats (a `planned` bool threaded through seven functions)."""
    minimal(tmp_path)
    plans = load(tmp_path).plans()
    for render in (report.table, report.markdown, report.as_json):
        plan, points = render(plans, view=report.View.PLAN), render(plans, view=report.View.POINTS)
        assert all("demo-" in shown for shown in (plan, points))
        assert "to submit" in plan.replace("_", " ") and "to submit" not in points.replace("_", " ")


def test_detailed_exitcode_needs_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    minimal(tmp_path)
    assert main(["-C", str(tmp_path), "expand", "--detailed-exitcode"]) == 1
    assert "use it with --plan" in capsys.readouterr().err
    assert main(["-C", str(tmp_path), "expand", "--plan", "--detailed-exitcode"]) == 2


@pytest.mark.parametrize(("error", "code"), [("Rejected", 4), ("Transient", 5), ("NameTaken", 4)])
def test_a_backend_failure_is_a_runner_error_with_its_code_and_debug_shows_its_traceback(
    project_copy: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    error: str,
    code: int,
) -> None:
    from runner import backends
    from runner.core.errors import RunnerError
    from runner.plan import catalog

    failure = getattr(backends, error)
    assert issubclass(failure, RunnerError)  # one error root: one handler in the CLI

    def broken(*args: object, **kwargs: object) -> None:
        raise failure("the service said no")

    monkeypatch.setattr(catalog, "load", broken)
    assert main(["-C", str(project_copy), "validate"]) == code
    assert capsys.readouterr().err == "error: the service said no\n"
    assert main(["--debug", "-C", str(project_copy), "validate"]) == code
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and err.endswith(
        "error: the service said no\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--restart", "--points", "lr-1", "abc123", "sweeps/exact.yaml"],  # docs/commands.md's form
        ["sweeps/exact.yaml", "--restart", "--points", "lr-1", "abc123"],
        ["--restart", "--points", "lr-1", "sweeps", "abc123"],  # a directory
        ["--restart", "--points", "lr-1", "other.yml", "abc123"],
    ],
)
def test_submit_restart_points_takes_the_path_anywhere(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "sweeps").mkdir()
    args = from_namespace(build_parser().parse_args(["-C", str(tmp_path), "submit", *argv]))
    assert args.restart_points == ("lr-1", "abc123")
    assert args.paths == tuple(w for w in argv if w.startswith(("sweeps", "other")))


@dataclass(frozen=True)
class _Asked:
    paths: tuple[str, ...]
    fmt: str
    points: tuple[str, ...] = ()
    yes: bool = False


def test_args_from_takes_each_field_from_its_attribute_renamed_or_given() -> None:
    parsed = argparse.Namespace(
        directory=".", paths=["a.yaml"], format="json", points=["x"], yes=True
    )
    asked = args_from(parsed, _Asked, {"fmt": "format"}, points=("y",))
    assert asked == _Asked(("a.yaml",), "json", ("y",), True)
    with pytest.raises(TypeError, match=r"_Asked\.fmt: the command line has no 'fmt'"):
        args_from(parsed, _Asked)  # a field the parser lacks is not left at its default


def test_every_submit_option_reaches_submit_args(tmp_path: Path) -> None:
    """Each field differs from its default when its option is given: none is dropped between
    argparse and the command (a hand copy of fourteen fields could drop one unseen)."""
    argv = ["--dry-run", "--concurrency", "3", "--timeout", "5", "--backend", "local"]
    argv += ["--http-timeout", "7", "--commit", "--push", "--github-event", "--restart-failed"]
    argv += ["--max-unreachable", "9", "--summary-json", "s.json", "--reviewed", "r.txt"]
    argv += ["--restart", "--points", "lr-1", "sweeps/x.yaml"]
    args = from_namespace(build_parser().parse_args(["-C", str(tmp_path), "submit", *argv]))
    defaults = SubmitArgs()
    assert [
        f.name
        for f in dataclasses.fields(SubmitArgs)
        if getattr(args, f.name) == getattr(defaults, f.name)
    ] == []


def test_cancel_points_takes_the_path_anywhere_and_needs_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cancel --points NAME... PATH` (docs/commands.md) reads PATH as a manifest, not a name;
    without any PATH it is one line and exit 1, nothing canceled."""
    minimal(tmp_path)
    assert main(["-C", str(tmp_path), "cancel", "--points", "nope", "sweeps/demo.yaml"]) == 1
    said = capsys.readouterr().err
    assert "nope" in said and "PATH" not in said  # the name was looked for, in the manifest
    assert main(["-C", str(tmp_path), "cancel", "--points", "nope"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "needs the manifests (PATH...)" in line


@pytest.mark.parametrize(
    ("argv0", "said"),
    [
        ("/home/me/.venv/bin/sweep-runner", "sweep-runner"),  # the console script
        ("/src/beaker-sweep-runner/runner/__main__.py", "python -m runner"),  # python -m runner
        ("", "python -m runner"),
    ],
)
def test_usage_and_hints_name_the_command_that_was_run(
    argv0: str, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from runner.commands.submit_args import name_the_manifests
    from runner.core.invoked import invoked

    monkeypatch.setattr(sys, "argv", [argv0])
    assert invoked() == said
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith(f"{said} ")
    assert f"`{said} submit sweeps/quickstart.yaml`" in name_the_manifests()
