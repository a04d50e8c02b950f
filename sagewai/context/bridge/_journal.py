"""A write-ahead journal: what the bridge accepted survives a crash of the process.

The non-blocking bridge answers ``submit()`` before a message is extracted and stored. To keep
the promise "nothing accepted is lost", the message is first appended to this journal, and only
marked done once its facts are committed. A process that restarts on the same journal replays
what was accepted but not done; the bridge's writes are idempotent (deterministic fact ids), so a
replay of work that did land in the store changes nothing.

File format: one record per line, ``<crc32 hex>\\t<json>\\n``. Three record kinds:

* ``{"op": "accept", "id": ..., "payload": {...}}``: an accepted entry;
* ``{"op": "batch", "id": ..., "entries": [...]}``: entries that are processed together (recorded
  before the work starts, so a replay groups them the same way);
* ``{"op": "done", "ids": [...]}``: the checkpoint: these entries are fully stored.

A line whose checksum does not match is a torn write (the power failed mid-append): at the end of
the file it is cut off, elsewhere it is skipped and logged.

Durability (``fsync=``):

* ``"interval"`` (default): every record is written with one ``write()`` before ``append``
  returns, so it survives the process being killed (SIGKILL, OOM, a crash): the data is in the
  operating system's cache. A background task ``fsync``\\ s at most every ``fsync_interval``
  seconds, so a power loss or kernel crash loses at most that window.
* ``"always"``: ``fsync`` after every append; survives a power loss, costs the disk's fsync
  latency on every accept (milliseconds on most disks).
* ``"never"``: leave flushing to the operating system (survives a process crash, not a power
  loss of the last ~30 s).

One process at a time: the journal holds a lock file (``<path>.lock``) while open, released by
the operating system if the process dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue

from sagewai.context._journal_files import decode_line as _decode
from sagewai.context._journal_files import encode_line as _encode
from sagewai.context._journal_files import lock_journal
from sagewai.errors import BackendUnavailableError, ConfigurationError

__all__ = ["FsyncPolicy", "JournalEntry", "JournalState", "WriteAheadJournal"]

logger = logging.getLogger("sagewai.context.bridge._journal")

FsyncPolicy = Literal["always", "interval", "never"]
_COMPACT_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """An accepted entry: its id and the JSON payload the owner wrote."""

    id: str
    payload: dict[str, JsonValue]


@dataclass(slots=True)
class JournalState:
    """What a journal holds on open: entries not done yet, and how they were batched."""

    pending: list[JournalEntry] = field(default_factory=list)
    """Accepted entries without a checkpoint, in the order they were accepted."""
    batches: dict[str, list[str]] = field(default_factory=dict)
    """Recorded batches (batch id to entry ids) that still hold a pending entry."""
    torn_records: int = 0
    """Records skipped because their checksum did not match."""


class WriteAheadJournal:
    """An append-only, checksummed, checkpointed journal file (see the module docs).

    Args:
        path: The journal file; its folder is created.
        fsync: ``"interval"`` (default), ``"always"`` or ``"never"``: see the module docs.
        fsync_interval: Seconds between background fsyncs with ``fsync="interval"``.

    Example:
        >>> import tempfile, pathlib
        >>> folder = tempfile.mkdtemp()
        >>> journal = WriteAheadJournal(pathlib.Path(folder) / "bridge.journal", fsync="never")
        >>> journal.open().pending
        []
        >>> journal.append("m1", {"text": "hello"})
        >>> journal.close()
        >>> again = WriteAheadJournal(pathlib.Path(folder) / "bridge.journal", fsync="never")
        >>> [entry.id for entry in again.open().pending]
        ['m1']
        >>> again.complete(["m1"]); again.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: FsyncPolicy = "interval",
        fsync_interval: float = 0.05,
    ) -> None:
        if fsync not in ("always", "interval", "never"):
            raise ConfigurationError("fsync must be 'always', 'interval' or 'never'")
        if fsync_interval <= 0:
            raise ConfigurationError("fsync_interval must be positive")
        self.path = Path(path)
        self.fsync = fsync
        self.fsync_interval = fsync_interval
        self._fd: int | None = None
        self._lock: Any = None
        self._pending: dict[str, bytes] = {}
        self._batches: dict[str, tuple[list[str], bytes]] = {}
        self._dirty = False
        self._size = 0
        self._syncer: asyncio.Task[None] | None = None

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._fd is not None

    @property
    def pending_count(self) -> int:
        """How many accepted entries are not done yet."""
        return len(self._pending)

    # ------------------------------------------------------------------ open and replay

    def open(self) -> JournalState:
        """Lock the journal, read it back and return what is still pending.

        The file is compacted on open (done entries dropped), so it never grows without bound.

        Raises:
            LockedError: another process (or another journal object) has it open.
            BackendUnavailableError: the file cannot be read or written.
        """
        if self._fd is not None:
            raise ConfigurationError(f"journal {self.path} is already open")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BackendUnavailableError(f"cannot create the folder of {self.path}") from exc
        lock = lock_journal(self.path)
        try:
            state = self._read()
            self._rewrite()
        except BaseException:
            lock.release()
            raise
        self._lock = lock
        return state

    def _read(self) -> JournalState:
        state = JournalState()
        accepted: dict[str, JournalEntry] = {}
        batches: dict[str, list[str]] = {}
        done: set[str] = set()
        try:
            raw = self.path.read_bytes() if self.path.exists() else b""
        except OSError as exc:
            raise BackendUnavailableError(f"cannot read journal {self.path}: {exc}") from exc
        lines = raw.splitlines(keepends=True)
        for number, line in enumerate(lines):
            record = _decode(line)
            if record is None:
                state.torn_records += 1
                last = number == len(lines) - 1
                (logger.warning if last else logger.error)(
                    "journal %s: skipped a %s record at line %d",
                    self.path,
                    "torn final" if last else "corrupt",
                    number + 1,
                )
                continue
            op = record.get("op")
            if op == "accept":
                entry_id, payload = record.get("id"), record.get("payload")
                if isinstance(entry_id, str) and isinstance(payload, dict):
                    accepted.setdefault(entry_id, JournalEntry(entry_id, payload))
            elif op == "batch":
                batch_id, members = record.get("id"), record.get("entries")
                if isinstance(batch_id, str) and isinstance(members, list):
                    batches[batch_id] = [m for m in members if isinstance(m, str)]
            elif op == "done":
                ids = record.get("ids")
                if isinstance(ids, list):
                    done.update(i for i in ids if isinstance(i, str))
        state.pending = [entry for entry_id, entry in accepted.items() if entry_id not in done]
        pending_ids = {entry.id for entry in state.pending}
        state.batches = {
            batch_id: members
            for batch_id, members in batches.items()
            if pending_ids.intersection(members)
        }
        self._pending = {
            entry.id: _encode({"op": "accept", "id": entry.id, "payload": entry.payload})
            for entry in state.pending
        }
        self._batches = {
            batch_id: (members, _encode({"op": "batch", "id": batch_id, "entries": [*members]}))
            for batch_id, members in state.batches.items()
        }
        return state

    def _rewrite(self) -> None:
        """Replace the file by the pending records only (write, fsync, rename, fsync folder)."""
        self._close_fd()
        tmp = self.path.with_name(self.path.name + ".compact")
        data = b"".join(self._pending.values()) + b"".join(
            line for _, line in self._batches.values()
        )
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
            _fsync_folder(self.path.parent)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise BackendUnavailableError(f"cannot write journal {self.path}: {exc}") from exc
        self._size = len(data)
        self._dirty = False

    # ------------------------------------------------------------------ writing

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            raise ConfigurationError(f"journal {self.path} is not open")
        try:
            os.write(self._fd, line)
            if self.fsync == "always":
                os.fsync(self._fd)
            else:
                self._dirty = True
        except OSError as exc:
            raise BackendUnavailableError(f"cannot append to journal {self.path}: {exc}") from exc
        self._size += len(line)

    def append(self, entry_id: str, payload: dict[str, JsonValue]) -> None:
        """Record an accepted entry. When this returns the entry survives a process crash.

        Raises:
            BackendUnavailableError: the disk refused the write (nothing was accepted).
        """
        self.append_json(entry_id, json.dumps(payload, ensure_ascii=False, allow_nan=False))

    def append_json(self, entry_id: str, payload_json: str) -> None:
        """:meth:`append` with the payload already serialised as a JSON object (the fast path).

        Raises:
            BackendUnavailableError: the disk refused the write (nothing was accepted).
        """
        body = (
            '{"op":"accept","id":' + json.dumps(entry_id) + ',"payload":' + payload_json + "}"
        ).encode("utf-8")
        line = b"%08x\t%s\n" % (zlib.crc32(body), body)
        self._write(line)
        self._pending[entry_id] = line

    def record_batch(self, batch_id: str, entry_ids: Sequence[str]) -> None:
        """Record that these entries are processed together (so a replay groups them alike)."""
        members = list(entry_ids)
        listed: list[JsonValue] = list(members)
        line = _encode({"op": "batch", "id": batch_id, "entries": listed})
        self._write(line)
        self._batches[batch_id] = (members, line)

    def complete(self, entry_ids: Iterable[str]) -> None:
        """Checkpoint: these entries are fully stored and need no replay."""
        # An id may come twice (two messages that reuse one id): it is done once.
        ids = list(dict.fromkeys(entry_id for entry_id in entry_ids if entry_id in self._pending))
        if not ids:
            return
        listed: list[JsonValue] = list(ids)
        self._write(_encode({"op": "done", "ids": listed}))
        for entry_id in ids:
            del self._pending[entry_id]
        finished = [
            batch_id
            for batch_id, (members, _) in self._batches.items()
            if not any(member in self._pending for member in members)
        ]
        for batch_id in finished:
            del self._batches[batch_id]
        if self._size > _COMPACT_BYTES and len(self._pending) < 10_000:
            self._rewrite()

    # ------------------------------------------------------------------ forgetting

    def forget(
        self, matches: Callable[[dict[str, JsonValue]], bool], *, dry_run: bool = False
    ) -> int:
        """Remove the entries whose payload ``matches`` picks, done or pending; return how many.

        ``forget(subject=...)`` calls this, so a replay cannot bring a forgotten message back:
        matching pending entries are dropped (never stored), and the file is rewritten with the
        other pending entries only (done entries, whose text the file still held, go as in a
        compaction). A closed journal is opened (locked) for the rewrite and closed again.
        With ``dry_run`` the file is only read.

        Raises:
            LockedError: a closed journal is open in another process.
            BackendUnavailableError: the file cannot be read or written.
        """
        try:
            raw = self.path.read_bytes() if self.path.exists() else b""
        except OSError as exc:
            raise BackendUnavailableError(f"cannot read journal {self.path}: {exc}") from exc
        named: set[str] = set()
        for line in raw.splitlines():
            record = _decode(line)
            if record is None or record.get("op") != "accept":
                continue
            entry_id, payload = record.get("id"), record.get("payload")
            if isinstance(entry_id, str) and isinstance(payload, dict) and matches(payload):
                named.add(entry_id)
        if dry_run or not named:
            return len(named)
        opened_here = self._fd is None
        if opened_here:
            self.open()
        try:
            for entry_id in named:
                self._pending.pop(entry_id, None)
            self._batches = {
                batch_id: ([m for m in members if m not in named], line)
                for batch_id, (members, line) in self._batches.items()
                if any(m not in named and m in self._pending for m in members)
            }
            # Batch lines are re-encoded without the forgotten members.
            self._batches = {
                batch_id: (
                    members,
                    _encode({"op": "batch", "id": batch_id, "entries": list[JsonValue](members)}),
                )
                for batch_id, (members, _) in self._batches.items()
            }
            self._rewrite()
        finally:
            if opened_here:
                self.close()
        return len(named)

    def sync(self) -> None:
        """Flush the journal to the disk now (``fsync``)."""
        if self._fd is not None and self._dirty:
            self._dirty = False
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise BackendUnavailableError(f"cannot fsync journal {self.path}") from exc

    # ------------------------------------------------------------------ background fsync

    def start(self) -> None:
        """Start the periodic fsync task (``fsync="interval"``); needs a running event loop."""
        if self.fsync == "interval" and self._syncer is None:
            self._syncer = asyncio.get_running_loop().create_task(
                self._sync_periodically(), name="sagewai-journal-fsync"
            )

    async def _sync_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.fsync_interval)
            if self._dirty and self._fd is not None:
                try:
                    await asyncio.to_thread(self.sync)
                except BackendUnavailableError:
                    logger.exception("journal %s: background fsync failed", self.path)

    async def aclose(self) -> None:
        """Stop the fsync task, flush and release the journal."""
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            syncer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await syncer
        self.close()

    def close(self) -> None:
        """Flush and release the journal (the syncer task, if any, must be stopped first)."""
        if self._fd is not None:
            with contextlib.suppress(BackendUnavailableError):
                self.sync()
        self._close_fd()
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Make a rename durable (POSIX); a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
