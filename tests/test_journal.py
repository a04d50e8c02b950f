"""The write-ahead journal: replay, checkpoints, torn writes, compaction, one owner at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagewai.context.bridge._journal import WriteAheadJournal
from sagewai.errors import ConfigurationError, LockedError


def reopen(path: Path) -> WriteAheadJournal:
    return WriteAheadJournal(path, fsync="never")


def test_pending_entries_survive_and_done_ones_do_not(tmp_path: Path) -> None:
    path = tmp_path / "j" / "bridge.journal"
    journal = reopen(path)
    assert journal.open().pending == []
    for n in range(4):
        journal.append(f"m{n}", {"text": f"message {n}", "n": n})
    journal.record_batch("b1", ["m0", "m1"])
    journal.complete(["m0", "m1"])
    journal.record_batch("b2", ["m2", "m3"])
    journal.close()

    again = reopen(path)
    state = again.open()
    assert [(e.id, e.payload["n"]) for e in state.pending] == [("m2", 2), ("m3", 3)]
    assert state.batches == {"b2": ["m2", "m3"]}
    assert again.pending_count == 2
    again.complete(["m2", "m3"])
    again.close()
    assert reopen(path).open().pending == []


def test_open_compacts_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bridge.journal"
    journal = reopen(path)
    journal.open()
    for n in range(100):
        journal.append(f"m{n}", {"text": "x" * 100})
    journal.complete([f"m{n}" for n in range(99)])
    journal.close()
    big = path.stat().st_size
    compacted = reopen(path)
    assert [e.id for e in compacted.open().pending] == ["m99"]
    compacted.close()
    assert path.stat().st_size < big / 20


def test_a_torn_last_record_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bridge.journal"
    journal = reopen(path)
    journal.open()
    journal.append("m1", {"text": "kept"})
    journal.append("m2", {"text": "torn"})
    journal.close()
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # the power failed in the middle of the last write
    state = reopen(path).open()
    assert [e.id for e in state.pending] == ["m1"]
    assert state.torn_records == 1


def test_a_corrupt_record_in_the_middle_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "bridge.journal"
    journal = reopen(path)
    journal.open()
    for n in range(3):
        journal.append(f"m{n}", {"text": f"message {n}"})
    journal.close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"message 1", b"massage 1")  # checksum no longer matches
    path.write_bytes(b"".join(lines))
    state = reopen(path).open()
    assert [e.id for e in state.pending] == ["m0", "m2"]
    assert state.torn_records == 1


def test_one_owner_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "bridge.journal"
    first = reopen(path)
    first.open()
    with pytest.raises(LockedError):
        reopen(path).open()
    first.close()
    second = reopen(path)
    second.open()
    second.close()


def test_configuration_is_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        WriteAheadJournal(tmp_path / "j", fsync="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        WriteAheadJournal(tmp_path / "j", fsync_interval=0)
    closed = reopen(tmp_path / "j")
    with pytest.raises(ConfigurationError):
        closed.append("m1", {})


@pytest.mark.parametrize("policy", ["always", "interval", "never"])
async def test_every_fsync_policy_round_trips(tmp_path: Path, policy: str) -> None:
    path = tmp_path / "bridge.journal"
    journal = WriteAheadJournal(path, fsync=policy, fsync_interval=0.01)  # type: ignore[arg-type]
    journal.open()
    journal.start()
    journal.append("m1", {"text": "hello", "nested": {"ok": True, "n": [1, 2]}})
    await journal.aclose()
    (entry,) = reopen(path).open().pending
    assert entry.payload == {"text": "hello", "nested": {"ok": True, "n": [1, 2]}}


def test_an_id_completed_twice_in_one_call_is_done_once(tmp_path: Path) -> None:
    """Two messages reusing one id are checkpointed together: no KeyError, nothing left."""
    path = tmp_path / "bridge.journal"
    journal = reopen(path)
    journal.open()
    journal.append("s1\x1fm", {"n": 1})
    journal.append("s1\x1fm", {"n": 2})
    journal.complete(["s1\x1fm", "s1\x1fm"])
    assert journal.pending_count == 0
    journal.close()
    assert reopen(path).open().pending == []
