"""A sweep of many points is listed by 16 needles at once (one per first hex digit of the key),
not by one paged listing whose pages come one after another; what it finds is the same."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from runner import ledger
from runner.backends.beaker import BeakerBackend, credentials
from runner.backends.beaker.identity import SHARD_AT, needles
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Options, Outcome, OutcomeStatus, RetryPolicy, Submitter
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest

# 13 x 20 = 260 points: over SHARD_AT, so the duplicate check lists by 16 needles.
WIDE = SWEEP.replace("lr: [0.1, 0.01, 0.001]", f"lr: {[0.1 * (i + 1) for i in range(13)]}").replace(
    "seed: [1, 2]", f"seed: {list(range(20))}"
)
POINTS = 260


def test_many_default_names_are_listed_by_the_first_digit_of_their_key() -> None:
    names = [f"exact-{i:012x}" for i in range(SHARD_AT)]
    split = needles("exact", names, split=True)
    assert split == [f"exact-{digit}" for digit in "0123456789abcdef"]
    assert all(sum(name.startswith(n) for n in split if n) == 1 for name in names)
    assert needles("exact", names[:-1], split=True) == ["exact"]  # fewer: one listing
    assert needles("exact", [*names, "exact-run-7"], split=True) == ["exact"]  # a templated one
    assert needles("exact", names) == ["exact"]  # status's listing: pages, counted exactly


def _submit(root: Path, token: str, err: io.StringIO) -> tuple[list[Outcome], Submitter]:
    config = credentials()
    assert config is not None
    backend = BeakerBackend(dataclasses.replace(config, user_token=token))
    options = Options(
        root=root, commit="c0ffee", concurrency=8, policy=RetryPolicy(sleep=lambda s: None)
    )
    try:
        submitter = Submitter(backend, options, Progress(io.StringIO(), err))
        outcomes = submitter.run(catalog.load(root, []).plans())
    finally:
        backend.close()
    assert len(outcomes) == POINTS
    return outcomes, submitter


@pytest.mark.slow
def test_two_accounts_at_scale_keep_the_older_copy_of_every_point_and_cancel_theirs_once(
    tmp_path: Path, fake_beaker: FakeBeaker
) -> None:
    """Names scoped per author: bob creates every point alice created; his duplicate check,
    listed by 16 needles at once, finds all 260 older copies and cancels each of his once."""
    fake_beaker.name_scope = "author"
    alice, bob = fake_beaker.add_user("alice"), fake_beaker.add_user("bob")
    write_manifest(tmp_path / "alice", WIDE, "exact.yaml")
    write_manifest(tmp_path / "bob", WIDE, "exact.yaml")
    _submit(tmp_path / "alice", alice, io.StringIO())
    fake_beaker.empty_listing(times=16)  # bob starts before he can see alice's: 16 needles
    err = io.StringIO()
    outcomes, submitter = _submit(tmp_path / "bob", bob, err)

    theirs = {e.name: e.id for e in fake_beaker.experiments() if e.author == "alice"}
    mine = [e for e in fake_beaker.experiments() if e.author == "bob"]
    assert len(theirs) == len(mine) == POINTS
    assert [fake_beaker.cancels(e.id) for e in mine] == [1] * POINTS
    assert sorted(d.canceled[0] for d in submitter.duplicates) == sorted(e.id for e in mine)
    entries = ledger.read(ledger.ledger_path(tmp_path / "bob", "exact"), "exact").entries
    assert {e.experiment: e.id for e in entries.values()} == theirs
    assert err.getvalue().count("DUPLICATE exact/") == POINTS
    assert {o.status for o in outcomes} == {OutcomeStatus.ADOPTED}
