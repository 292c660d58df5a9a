"""GitHub Actions' environment: events, dispatch inputs, job summary, outputs, plan comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli import main
from runner.core.errors import Problem, RunnerError
from runner.plan import COMMENT_MARKER
from runner.repo import github
from runner.report.comment import problems_markdown
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.gitworld import SWEEP, github_env, write
from tests.helpers import minimal


def test_dispatch_inputs_arrive_as_strings_and_mean_what_the_form_says() -> None:
    assert github.parse_dispatch({}) == github.Dispatch()
    assert github.parse_dispatch({"manifests": "all", "dry_run": "false"}) == github.Dispatch()
    assert github.parse_dispatch(
        {
            "manifests": " sweeps/a.yaml, sweeps/b.yaml\nsweeps/c.yml",
            "dry_run": True,
            "concurrency": "4",
        }
    ) == github.Dispatch(("sweeps/a.yaml", "sweeps/b.yaml", "sweeps/c.yml"), True, 4)
    with pytest.raises(RunnerError, match="concurrency"):
        github.parse_dispatch({"concurrency": "lots"})
    with pytest.raises(RunnerError, match="at least 1"):
        github.parse_dispatch({"concurrency": "0"})


def test_events_give_the_branch_and_only_dispatch_has_inputs(tmp_path: Path) -> None:
    payload = {"repository": {"default_branch": "main"}, "inputs": {"dry_run": "true"}}
    event = github.parse_event("workflow_dispatch", "refs/heads/main", payload)
    assert event.branch == "main" and event.default_branch == "main"
    assert event.dispatch == github.Dispatch(dry_run=True)
    pr = github.parse_event("pull_request", "refs/pull/7/merge", payload)
    assert pr.branch is None and pr.dispatch is None
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    environ = {
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_REF": "refs/heads/x",
    }
    assert github.read_event(environ).branch == "x"
    with pytest.raises(RunnerError, match="GitHub Actions only"):
        github.read_event({})
    path.write_text("{not json")
    with pytest.raises(RunnerError, match="cannot read"):
        github.read_event(environ)


def test_submitting_is_for_the_default_branch_unless_it_is_a_dry_run() -> None:
    on = github.parse_event("push", "refs/heads/main", {"repository": {"default_branch": "main"}})
    off = github.parse_event("push", "refs/heads/wip", {"repository": {"default_branch": "main"}})
    github.check_submit_branch(on, dry_run=False)
    github.check_submit_branch(off, dry_run=True)
    with pytest.raises(RunnerError, match=r"default branch \(main\) only"):
        github.check_submit_branch(off, dry_run=False)


def test_summary_and_outputs_are_appended_and_absent_outside_actions(tmp_path: Path) -> None:
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    environ = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    assert github.append_summary("one", environ) and github.append_summary("two\n", environ)
    assert summary.read_text() == "one\ntwo\n"
    assert github.set_outputs({"commit": "abc", "text": "a\nb"}, environ)
    lines = output.read_text().splitlines()
    assert lines[0] == "commit=abc" and lines[1].startswith("text<<EOF_")
    assert lines[2:4] == ["a", "b"] and lines[4] == lines[1].split("<<")[1]
    assert not github.append_summary("x", {}) and not github.set_outputs({"a": "b"}, {})


def test_plan_comment_of_invalid_manifests_lists_the_problems_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minimal(tmp_path, "good")
    write(tmp_path, "sweeps/bad.yaml", "version: 1\nname: bad\n")
    summary, output = github_env(monkeypatch, tmp_path / "gh", "pull_request", {})
    comment = tmp_path / "comment.md"
    assert main(["-C", str(tmp_path), "plan-comment", "--output", str(comment)]) == 1
    text = comment.read_text()
    assert text.startswith(COMMENT_MARKER) and "sweeps/bad.yaml" in text
    assert summary.read_text() == text and "valid=false" in output.read_text()


def test_plan_comment_without_output_prints_the_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    minimal(tmp_path, "good")
    assert main(["-C", str(tmp_path), "plan-comment"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(COMMENT_MARKER) and "Plan: 2 to submit" in out


def test_dispatch_dry_run_plans_into_the_summary_and_submits_nothing(
    tmp_path: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "sweeps/exact.yaml", SWEEP)
    inputs = {"inputs": {"manifests": "all", "dry_run": "true", "concurrency": "2"}}
    summary, _ = github_env(
        monkeypatch, tmp_path / "gh", "workflow_dispatch", inputs, "refs/heads/wip"
    )
    argv = ["-C", str(tmp_path), "submit", "--commit", "--push", "--github-event"]
    assert main(argv) == 0
    assert fake_beaker.count_by_name() == {} and "Sweep plan (dry run)" in summary.read_text()


def test_dispatch_off_the_default_branch_is_refused(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(tmp_path, "sweeps/exact.yaml", SWEEP)
    github_env(monkeypatch, tmp_path / "gh", "workflow_dispatch", {"inputs": {}}, "refs/heads/wip")
    assert main(["-C", str(tmp_path), "submit", "--github-event"]) == 1
    assert "default branch (main) only" in capsys.readouterr().err
    assert fake_beaker.count_by_name() == {}


def test_dispatch_of_some_manifests_submits_only_those_and_lists_urls(
    tmp_path: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "sweeps/exact.yaml", SWEEP)
    minimal(tmp_path, "other", extra="").write_text(
        (tmp_path / "sweeps" / "other.yaml").read_text().replace("ai2/sweeps-test", "ai2/nowhere")
    )
    inputs = {"inputs": {"manifests": "sweeps/exact.yaml", "dry_run": "false", "concurrency": "3"}}
    summary, _ = github_env(monkeypatch, tmp_path / "gh", "workflow_dispatch", inputs)
    monkeypatch.chdir(tmp_path)
    assert main(["-C", str(tmp_path), "submit", "--github-event"]) == 0
    names = sorted(fake_beaker.count_by_name())
    assert len(names) == 6 and all(n.startswith("exact-") for n in names)
    assert all(f"/ex/{x.id} |" in summary.read_text() for x in fake_beaker.experiments())


def test_problems_are_fenced_so_manifest_text_cannot_break_out() -> None:
    problem = Problem("sweeps/x.yaml", 3, 1, "name", "bad value '```' here")
    text = problems_markdown([problem])
    assert text.startswith(COMMENT_MARKER) and "\n````text\n" in text and text.endswith("\n````\n")


def test_push_needs_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    minimal(tmp_path)
    assert main(["-C", str(tmp_path), "submit", "--push"]) == 1
    assert "use it with --commit" in capsys.readouterr().err


def test_dispatch_restart_failed_input_and_the_workflow_offers_it_and_a_schedule() -> None:
    assert github.parse_dispatch({"restart_failed": "true"}).restart_failed is True
    assert github.parse_dispatch({"restart_failed": False}).restart_failed is False
    assert github.parse_dispatch({}).restart_failed is False
    from runner.yaml12 import load_file

    workflow = load_file(PROJECT / ".github" / "workflows" / "submit.yml", "submit.yml").data
    triggers = workflow["on"]
    assert triggers["workflow_dispatch"]["inputs"]["restart_failed"]["type"] == "boolean"
    assert [s["cron"] for s in triggers["schedule"]] == ["*/15 * * * *"]


def test_problems_become_workflow_commands_with_escaped_values() -> None:
    line = github.annotation("error", "bad: 50%\nnext", "sweeps/a,b:c.yaml", 3, 7)
    assert line == "::error file=sweeps/a%2Cb%3Ac.yaml,line=3,col=7::bad: 50%25%0Anext"
    assert github.annotation("warning", "held back") == "::warning::held back"


def test_push_events_name_their_commits_for_plan_pinning() -> None:
    payload = {"after": "b" * 40, "commits": [{"id": "a" * 40}, {"id": "b" * 40}]}
    assert github.parse_event("push", "refs/heads/main", payload).commits == ("a" * 40, "b" * 40)
    deleted = {"after": "0" * 40, "commits": []}
    assert github.parse_event("push", "refs/heads/main", deleted).commits == ()
    assert github.parse_dispatch({"unreviewed": "true"}).unreviewed


def test_problems_markdown_is_capped_to_fit_a_comment() -> None:
    problems = [Problem(f"sweeps/s{i:04}.yaml", 2, 1, "name", "x" * 80) for i in range(900)]
    text = problems_markdown(problems)
    assert len(text) <= 60_000 < len("\n".join(map(str, problems)))
    assert "**900 problem(s)**" in text and "more problem(s)" in text
    assert text.count("\n```text\n") == 1 and text.count("\n```\n") == 1  # the fence is closed
