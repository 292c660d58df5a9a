from __future__ import annotations

import dataclasses
import json
import multiprocessing
import time
from pathlib import Path

import pytest

from runner import ledger
from runner.backends.local import LAYOUT
from runner.core.errors import LedgerError
from runner.ledger.pending import Pending
from runner.ledger.store import LedgerStore


def _entry(i: int, when: str = "2026-11-21T10:00:00Z") -> ledger.Entry:
    key = f"{i:064x}"
    return ledger.Entry(
        key,
        f"demo-{key[:12]}",
        f"https://beaker.org/ex/{i}",
        f"01ID{i}",
        "h" * 64,
        when,
        "c" * 40,
        {"lr": i / 10},
    )


def test_ledger_round_trips_with_header_and_sorted_entries(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    ledger.record(path, "demo", [_entry(3), _entry(1), _entry(2)])
    lines = path.read_text().splitlines()
    assert (
        json.loads(lines[0])["sweep"] == "demo" and "do not edit" in json.loads(lines[0])["about"]
    )
    assert [json.loads(line)["key"] for line in lines[1:]] == [_entry(i).key for i in (1, 2, 3)]
    assert ledger.read(path, "demo").entries == {
        e.key: e for e in (_entry(1), _entry(2), _entry(3))
    }


def test_writing_the_same_entries_again_gives_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    ledger.record(path, "demo", [_entry(1), _entry(2)])
    first = path.read_bytes()
    ledger.record(path, "demo", [_entry(2), _entry(1)])
    assert path.read_bytes() == first
    assert [p.name for p in tmp_path.iterdir()] == ["demo.jsonl"]  # no temp files left behind


def test_merge_keeps_one_entry_per_key_and_the_later_experiment(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    ledger.record(path, "demo", [_entry(1, "2026-01-01T00:00:00Z")])
    kept = dataclasses.replace(_entry(1, "2026-02-01T00:00:00Z"), id="01OLDER", url="u")
    ledger.record(path, "demo", [kept, _entry(2)])  # a duplicate resolved to another experiment
    entries = ledger.read(path, "demo").entries
    assert len(entries) == 2 and entries[_entry(1).key] == kept


def test_the_same_experiment_recorded_again_never_rewrites_history(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    first = _entry(1, "2026-01-01T00:00:00Z")
    ledger.record(path, "demo", [first])
    before = path.read_bytes()
    adopted = dataclasses.replace(_entry(1, "2026-02-01T00:00:00Z"), commit="d" * 40)
    ledger.record(path, "demo", [adopted])  # another runner, or a re-run, adopting it later
    assert path.read_bytes() == before
    earlier = dataclasses.replace(first, submitted_at="2025-12-31T00:00:00Z", commit="e" * 40)
    ledger.record(path, "demo", [earlier])  # merging a record that is older still keeps the first
    assert ledger.read(path, "demo").entries[first.key] == earlier


def test_missing_ledger_is_empty_and_corrupt_ledger_names_the_line(tmp_path: Path) -> None:
    assert ledger.read(tmp_path / "none.jsonl", "demo").entries == {}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(ledger.header("demo") + "\n{not json\n")
    with pytest.raises(LedgerError, match=r"bad.jsonl:2: not valid JSON"):
        ledger.read(bad, "demo")
    bad.write_text(ledger.header("other") + "\n")
    with pytest.raises(LedgerError, match="expected format 1 for 'demo'"):
        ledger.read(bad, "demo")


def _writer(path: str, start: int) -> None:
    for i in range(start, start + 25):
        ledger.record(Path(path), "demo", [_entry(i)])


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger" / "demo.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), n * 25)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert sorted(ledger.read(path, "demo").entries) == sorted(_entry(i).key for i in range(100))


def test_pending_entries_are_written_once_per_file_and_kept_when_a_write_fails(
    tmp_path: Path,
) -> None:
    pending = Pending(every=3600.0, now=time.monotonic)
    assert pending.due_in() is None
    good, bad = tmp_path / "ok" / "demo.jsonl", tmp_path / "blocked" / "demo.jsonl"
    (tmp_path / "blocked").write_text("a file where the ledger directory should be")
    pending.add(good, "demo", _entry(1))
    pending.add(bad, "demo", _entry(2))
    pending.add(good, "demo", _entry(3))
    due = pending.due_in()
    assert due is not None and 0 < due <= 3600.0
    with pytest.raises(FileExistsError):  # mkdir of the ledger directory
        pending.flush()
    assert sorted(ledger.read(good, "demo").entries) == [_entry(1).key, _entry(3).key]
    assert pending.due_in() is not None  # the blocked file's entry waits for the next write
    (tmp_path / "blocked").unlink()
    pending.flush()
    assert sorted(ledger.read(bad, "demo").entries) == [_entry(2).key]
    assert pending.due_in() is None


def test_pending_writes_merge_with_what_another_writer_added_in_between(tmp_path: Path) -> None:
    path, plain = tmp_path / "demo.jsonl", tmp_path / "plain" / "demo.jsonl"
    pending = Pending(every=0.0, now=time.monotonic)
    for batch in ([_entry(1), _entry(2)], [_entry(3)]):
        for entry in batch:
            pending.add(path, "demo", entry)
        pending.flush()  # the second write reuses what the first left
        ledger.record(plain, "demo", batch)
    assert path.read_bytes() == plain.read_bytes()
    ledger.record(path, "demo", [_entry(4)])  # another runner
    pending.add(path, "demo", _entry(5))
    pending.flush()
    assert sorted(ledger.read(path, "demo").entries) == [_entry(i).key for i in range(1, 6)]


def test_restart_and_cancel_records_are_optional_and_old_lines_stay_as_they_were(
    tmp_path: Path,
) -> None:
    import dataclasses

    old = _entry(1).to_line()
    assert "restarts" not in old and "canceled_at" not in old  # a ledger written before them
    path = tmp_path / "demo.jsonl"
    path.write_text(ledger.header("demo") + "\n" + old + "\n")
    assert ledger.read(path, "demo").entries[_entry(1).key] == _entry(1)

    changed = dataclasses.replace(
        _entry(1), restarts=2, restarted_at="2026-11-22T10:00:00Z", canceled_at="2026-11-23T00:00Z"
    )
    ledger.record(path, "demo", [changed, _entry(2)])
    read = ledger.read(path, "demo").entries
    assert read[changed.key] == changed and read[_entry(2).key] == _entry(2)
    assert path.read_text().splitlines()[2] == _entry(2).to_line()


def test_restarts_and_cancellations_survive_a_stale_or_adopting_writer(tmp_path: Path) -> None:
    """A restart recorded by one run is not undone by another run writing the same experiment as
    it first saw it (adopting it, or holding an older copy), and a cancel is never dropped."""
    import dataclasses

    path = tmp_path / "demo.jsonl"
    first = _entry(1)
    restarted = dataclasses.replace(first, restarts=2, restarted_at="2026-11-22T09:00:00Z")
    ledger.record(path, "demo", [first])
    ledger.record(path, "demo", [restarted])  # --restart-failed records its restarts
    adopted_later = dataclasses.replace(first, submitted_at="2026-11-22T10:00:00Z", commit="d" * 40)
    ledger.record(path, "demo", [adopted_later])  # a second runner adopts it
    ledger.record(path, "demo", [first])  # a stale writer's copy, before the restarts
    canceled = dataclasses.replace(first, canceled_at="2026-11-22T11:00:00Z")
    ledger.record(path, "demo", [canceled])
    ledger.record(path, "demo", [restarted])  # older news about restarts only
    kept = ledger.read(path, "demo").entries[first.key]
    assert (kept.submitted_at, kept.commit) == (first.submitted_at, first.commit)
    assert (kept.restarts, kept.restarted_at) == (2, "2026-11-22T09:00:00Z")
    assert kept.canceled_at == "2026-11-22T11:00:00Z"


def test_an_intent_is_cleared_only_by_what_it_led_to_or_on_purpose(tmp_path: Path) -> None:
    """Write-ahead records: a writer that never saw an intent (a submit adopting the same
    experiment) cannot drop it; the restart it led to, a cancellation, or set_intents can."""
    store = LedgerStore(tmp_path, LAYOUT)
    base = _entry(1)
    store.record("demo", [dataclasses.replace(base, restarting="job-a", canceling="t0")])
    store.record("demo", [base])  # stale: neither intent
    kept = store.read("demo").entries[base.key]
    assert (kept.restarting, kept.canceling) == ("job-a", "t0")
    assert kept.to_line().count('"restarting": "job-a"') == 1  # on disk, reviewable

    store.record("demo", [dataclasses.replace(base, restarts=1, restarted_at="t1")])
    assert store.read("demo").entries[base.key].restarting == ""  # the restart it led to
    store.record("demo", [dataclasses.replace(base, canceled_at="t2")])
    assert store.read("demo").entries[base.key].canceling == ""  # the cancel it led to

    store.record("demo", [dataclasses.replace(base, restarts=1, restarting="job-b")])
    store.record("demo", [dataclasses.replace(base, restarting="stale")])  # 0 restarts: older
    assert store.read("demo").entries[base.key].restarting == "job-b"
    store.set_intents("demo", [dataclasses.replace(base, restarting="")])
    assert store.read("demo").entries[base.key].restarting == ""  # dropped on purpose


def test_preemptions_and_their_intent_merge_as_restarts_do_apart_from_them(
    tmp_path: Path,
) -> None:
    """`preemptions` only grows (a stale writer cannot undo a resume); `resuming`, the resume's
    write-ahead, is cleared only by the resume it led to or on purpose; neither touches the
    restarts, and an old line without them reads as none."""
    store = LedgerStore(tmp_path, LAYOUT)
    base = _entry(1)
    assert "preemptions" not in base.to_line() and "resuming" not in base.to_line()
    store.record("demo", [dataclasses.replace(base, restarts=1, resuming="job-a")])
    store.record("demo", [base])  # stale: no resume, no intent
    kept = store.read("demo").entries[base.key]
    assert (kept.preemptions, kept.resuming, kept.restarts) == (0, "job-a", 1)

    store.record("demo", [dataclasses.replace(base, preemptions=1)])  # the resume it led to
    kept = store.read("demo").entries[base.key]
    assert (kept.preemptions, kept.resuming, kept.restarts) == (1, "", 1)
    assert '"preemptions": 1' in kept.to_line()

    store.record("demo", [dataclasses.replace(base, preemptions=1, resuming="job-b")])
    store.record("demo", [dataclasses.replace(base, resuming="stale")])  # 0 preemptions: older
    assert store.read("demo").entries[base.key].resuming == "job-b"
    store.record("demo", [dataclasses.replace(base, preemptions=2)])
    store.record("demo", [dataclasses.replace(base, preemptions=1)])  # older news
    kept = store.read("demo").entries[base.key]
    assert (kept.preemptions, kept.resuming) == (2, "")
    store.set_intents("demo", [dataclasses.replace(kept, resuming="job-c")], ("resuming",))
    store.set_intents("demo", [dataclasses.replace(kept, restarting="")])  # the default fields
    assert store.read("demo").entries[base.key].resuming == "job-c"  # not a restart's to drop
