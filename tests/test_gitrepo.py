"""Commit-back of ledgers on real repositories: what is committed, what is pushed, and races."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner import ledger
from runner.core.errors import GitError
from runner.core.retry import RetryPolicy, retrying
from runner.ledger import headers
from runner.repo import gitrepo
from runner.repo.gitrepo import push
from tests.gitworld import World, commit_all, git, make_world, write

LEDGER = "sweeps/ledger/exact.jsonl"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def entry(n: int, at: str = "2026-01-01T00:00:00Z") -> ledger.Entry:
    key = f"{n:064x}"
    return ledger.Entry(key, f"exact-{key[:12]}", f"https://beaker/ex/{n}", str(n), "h", at, "c")


def record(repo: Path, *entries: ledger.Entry) -> None:
    ledger.record(repo / LEDGER, "exact", entries)


def keys_on_origin(world: World) -> dict[str, str]:
    parsed = ledger.parse(world.show(LEDGER), LEDGER, "exact").entries
    return {e.id: e.submitted_at for e in parsed.values()}


def test_commit_message_names_sweeps_and_counts_and_skips_ci() -> None:
    assert (
        gitrepo.commit_message({"other": 3, "exact": 12})
        == "Record 15 Beaker experiments for exact (12), other (3) [skip ci]"
    )
    assert gitrepo.commit_message({"one": 1}) == "Record 1 Beaker experiment for one (1) [skip ci]"
    assert gitrepo.commit_message({"one": 1, "two": 0}) == (
        "Record 1 Beaker experiment for one (1) [skip ci]"
    )
    assert gitrepo.commit_message({"two": 0}) == "Update the Beaker ledger of two [skip ci]"


def test_commit_counts_only_new_or_changed_entries(world: World) -> None:
    clone = world.clone("c")
    record(clone, entry(1), entry(2))
    first = gitrepo.commit_ledgers(clone)
    assert first is not None and first.files == (LEDGER,) and "exact (2)" in first.message
    assert gitrepo.commit_ledgers(clone) is None  # nothing changed since
    record(clone, entry(3))
    second = gitrepo.commit_ledgers(clone)
    assert second is not None and "Record 1 Beaker experiment for exact (1)" in second.message


def test_untracked_or_edited_manifests_are_refused(world: World) -> None:
    clone = world.clone("c")
    manifest = next((clone / "sweeps").glob("*.yaml"))
    gitrepo.ensure_committed(clone, [manifest])
    manifest.write_text(manifest.read_text() + "\n# edited\n")
    with pytest.raises(GitError, match=re.escape(manifest.name)):
        gitrepo.ensure_committed(clone, [manifest])
    new = clone / "sweeps" / "new.yaml"
    new.write_text("version: 1\n")
    with pytest.raises(GitError, match=r"new\.yaml"):
        gitrepo.ensure_committed(clone, [new])


def test_outside_a_repository_and_on_a_detached_head_are_errors(
    world: World, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="not inside a git repository"):
        gitrepo.commit_ledgers(tmp_path / "plain")
    clone = world.clone("c")
    assert gitrepo.resolve_target(clone) == gitrepo.Target("origin", "main")
    git(clone, "checkout", "--quiet", "--detach")
    with pytest.raises(GitError, match="detached"):
        gitrepo.resolve_target(clone)
    assert gitrepo.resolve_target(clone, "main") == gitrepo.Target("origin", "main")


def test_a_race_on_the_same_ledger_merges_entries_by_key(world: World) -> None:
    ours, theirs = world.ci_checkout("ours"), world.clone("theirs")
    record(theirs, entry(1), entry(2, at="2026-01-01T00:00:00Z"))
    commit_all(theirs, "Their run's ledger [skip ci]")
    git(theirs, "push", "--quiet", "origin", "main")
    record(ours, entry(2, at="2026-01-02T00:00:00Z"), entry(3))
    gitrepo.commit_ledgers(ours)
    waits: list[float] = []

    pushed = push.publish(ours, gitrepo.Target("origin", "main"), RetryPolicy(sleep=waits.append))

    assert pushed.sha == world.head() and pushed.attempts == 2 and len(waits) == 1
    assert keys_on_origin(world) == {
        "1": "2026-01-01T00:00:00Z",
        "2": "2026-01-01T00:00:00Z",  # the same experiment: its first record stays
        "3": "2026-01-01T00:00:00Z",
    }
    assert "Record 1 Beaker experiment for exact (1)" in world.message()  # only 3 is new


def test_a_rebuilt_ledger_keeps_our_group_and_notifications(world: World) -> None:
    """A push race rebuilds our ledger on theirs: the header we wrote (the group's URL, the
    webhook messages sent or in flight) must survive it, or the next run notifies twice."""
    ours, theirs = world.ci_checkout("ours"), world.clone("theirs")
    record(theirs, entry(1))
    headers.set_notified(theirs / LEDGER, "exact", {"e-theirs": "sent", "e-both": "sending"})
    commit_all(theirs, "Their run's ledger [skip ci]")
    git(theirs, "push", "--quiet", "origin", "main")
    record(ours, entry(2))
    headers.set_group(ours / LEDGER, "exact", "https://beaker/gr/1")
    headers.set_notified(ours / LEDGER, "exact", {"e-ours": "sending", "e-both": "sent"})
    gitrepo.commit_ledgers(ours)

    push.publish(ours, gitrepo.Target("origin", "main"), RetryPolicy(sleep=lambda s: None))

    landed = ledger.parse(world.show(LEDGER), LEDGER, "exact")
    assert set(landed.entries) == {entry(1).key, entry(2).key}
    assert landed.group == "https://beaker/gr/1"
    assert landed.notified == {"e-theirs": "sent", "e-ours": "sending", "e-both": "sent"}


def test_retries_are_bounded_and_a_later_run_still_lands_everything(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, racer = world.ci_checkout("ours"), world.clone("racer")
    real_fetch = push._fetch

    def fetch_then_someone_pushes(repo: object, target: gitrepo.Target) -> None:
        """Every time we catch up, somebody else pushes before we do."""
        real_fetch(repo, target)  # type: ignore[arg-type]
        notes = racer / "NOTES.md"
        write(racer, "NOTES.md", (notes.read_text() if notes.exists() else "") + "one more\n")
        commit_all(racer, "Another push")
        git(racer, "push", "--quiet", "origin", "main")

    monkeypatch.setattr(push, "_fetch", fetch_then_someone_pushes)
    record(ours, entry(1))
    gitrepo.commit_ledgers(ours)
    waits: list[float] = []
    policy = RetryPolicy(attempts=3, sleep=waits.append)
    with pytest.raises(GitError, match="after 3 attempts"):
        push.publish(ours, gitrepo.Target("origin", "main"), policy)
    assert len(waits) == 2 and waits[0] <= waits[1] * 2
    assert (
        git(world.origin, "ls-tree", "main", LEDGER) == ""
    )  # nothing of ours landed, nothing forced

    monkeypatch.setattr(push, "_fetch", real_fetch)
    assert push.publish(ours, gitrepo.Target("origin", "main"), policy).sha == world.head()
    assert keys_on_origin(world) == {"1": "2026-01-01T00:00:00Z"}


def test_only_ledger_commits_are_pushed(world: World) -> None:
    clone = world.clone("c")
    write(clone, "sweeps/unreviewed.yaml", "version: 1\n")
    commit_all(clone, "A manifest nobody reviewed")
    record(clone, entry(1))
    gitrepo.commit_ledgers(clone)
    before = world.head()
    with pytest.raises(GitError, match="pull request"):
        push.publish(clone, gitrepo.Target("origin", "main"))
    assert world.head() == before


def test_a_refused_push_is_reported_with_advice_and_not_retried(world: World) -> None:
    hook = world.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    clone = world.clone("c")
    record(clone, entry(1))
    gitrepo.commit_ledgers(clone)
    waits: list[float] = []
    with pytest.raises(GitError, match="Branch protection"):
        push.publish(clone, gitrepo.Target("origin", "main"), RetryPolicy(sleep=waits.append))
    assert waits == []


def test_backoff_grows_and_is_capped() -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=6, initial_wait=2, max_wait=10, sleep=waits.append)

    def fail() -> None:
        raise OSError("again")

    with pytest.raises(OSError, match="again"):
        retrying(policy, lambda: None, OSError)(fail)
    # tenacity's jittered exponential backoff: initial * 2**n plus up to 1 s of jitter, capped.
    assert len(waits) == 5 and 2 <= waits[0] <= 3 and 4 <= waits[1] <= 5
    assert all(w <= 10 for w in waits) and waits[-1] == 10


def test_a_shallow_checkout_fetches_other_heads_and_reads_their_files_of_any_size(
    world: World,
) -> None:
    """What the reviewed job does with merged pull requests' heads: one fetch for all of them
    (none when they are there already), then their files under sweeps/, ledgers left out."""
    git(world.origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub allows
    dev = world.clone("dev")
    git(dev, "checkout", "--quiet", "-b", "pr")
    big = "# notes\n" * 200_000  # 1.6 MB: GitHub's contents API would return it empty
    write(dev, "sweeps/big.yaml", big)
    write(dev, LEDGER, "{}\n")
    commit_all(dev, "a pull request")
    git(dev, "push", "--quiet", "origin", "HEAD:refs/pull/1/head")
    head = git(dev, "rev-parse", "HEAD")
    checkout = world.ci_checkout("ci")
    with pytest.raises(GitError):
        gitrepo.files_at(checkout, head, "sweeps")  # not fetched yet
    gitrepo.fetch_commits(checkout, [head], token="ghs_job_token")
    files = gitrepo.files_at(checkout, head, "sweeps", skip="sweeps/ledger")
    assert files["sweeps/big.yaml"] == big and LEDGER not in files
    assert files.keys() >= {p for p in gitrepo.files_at(checkout, "HEAD", "sweeps")}
    gitrepo.fetch_commits(
        checkout, [head, git(checkout, "rev-parse", "HEAD")]
    )  # both here: no fetch


LOCK = "sweeps/exact.lock.json"


def test_an_automatic_rounds_lock_is_committed_with_the_ledger_and_survives_a_race(
    world: World,
) -> None:
    """The round's lock goes in the round's commit, and is pushed with the ledger: rebuilt on
    a race (theirs changed only the ledger); anything else is still refused."""
    ours, theirs = world.ci_checkout("ours"), world.clone("theirs")
    record(theirs, entry(1))
    commit_all(theirs, "Their run's ledger [skip ci]")
    git(theirs, "push", "--quiet", "origin", "main")
    record(ours, entry(2))
    write(ours, LOCK, '{"round": 1}\n')
    made = gitrepo.commit_ledgers(ours, [ours / LOCK], ["exact: rung 1"])
    assert made is not None and set(made.files) == {LEDGER, LOCK}
    assert made.message == (
        "Advance exact: rung 1 inside the reviewed envelope; record 1 Beaker experiment for"
        " exact (1) [skip ci]"
    )
    with pytest.raises(GitError, match="change more than ledgers"):  # not told of the lock
        push.publish(ours, gitrepo.Target("origin", "main"), RetryPolicy(sleep=lambda s: None))

    pushed = push.publish(
        ours, gitrepo.Target("origin", "main"), RetryPolicy(sleep=lambda s: None), [ours / LOCK]
    )
    assert pushed.sha == world.head() and pushed.attempts == 2  # rebuilt on theirs
    assert world.show(LOCK) == '{"round": 1}' and set(keys_on_origin(world)) == {"1", "2"}
    assert world.message().startswith("Advance exact: rung 1 inside the reviewed envelope")


def test_a_round_whose_lock_changed_upstream_is_not_pushed(world: World) -> None:
    """A merge changed the lock while this run advanced it: our round is not the one to land
    (the next run decides again from the new head, and adopts what it makes the same)."""
    ours, theirs = world.ci_checkout("ours"), world.clone("theirs")
    write(theirs, LOCK, '{"theirs": true}\n')
    commit_all(theirs, "Merge a pull request that edits the sweep")
    git(theirs, "push", "--quiet", "origin", "main")
    record(ours, entry(2))
    write(ours, LOCK, '{"round": 1}\n')
    gitrepo.commit_ledgers(ours, [ours / LOCK], ["exact: rung 1"])
    before = world.head()
    with pytest.raises(GitError, match="changed on origin/main while this run advanced it"):
        push.publish(
            ours, gitrepo.Target("origin", "main"), RetryPolicy(sleep=lambda s: None), [ours / LOCK]
        )
    assert world.head() == before and world.show(LOCK) == '{"theirs": true}'
