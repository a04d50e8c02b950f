"""The write-ahead journal's files: their lines, and forgetting in them.

The bridge's journal (:mod:`sagewai.context.bridge._journal`) writes one record a line,
``<crc32 hex>\\t<json>\\n``. The engine's ``forget`` must reach journals no live bridge of this
process holds (one a crashed process left in the folder, whose next bridge would replay it):
:func:`forget_in_closed_journal` takes the journal's lock, drops the accepted entries a matcher
picks and writes the file back, so a replay cannot bring a forgotten message back. A journal a
live bridge of this process holds is rewritten through that bridge's journal object instead;
:func:`forget_in_journals` reaches both kinds for one project.
"""

from __future__ import annotations

import json
import logging
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from sagewai.context._naming import text_names
from sagewai.core._text import clean_json
from sagewai.errors import BackendUnavailableError, LockedError

if TYPE_CHECKING:
    import filelock

    from sagewai.context._access import StoreAccess

__all__ = [
    "PayloadMatcher",
    "decode_line",
    "encode_line",
    "forget_in_closed_journal",
    "forget_in_journals",
    "journal_matcher",
    "lock_journal",
]

logger = logging.getLogger("sagewai.context")

PayloadMatcher = Callable[[dict[str, JsonValue]], bool]


def encode_line(record: dict[str, JsonValue]) -> bytes:
    """One journal line: the record's JSON behind its CRC-32."""
    body = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    data = body.encode("utf-8")
    return b"%08x\t%s\n" % (zlib.crc32(data), data)


def decode_line(line: bytes) -> dict[str, JsonValue] | None:
    """The record of one line, or ``None`` when the line is torn or corrupt."""
    crc, sep, body = line.rstrip(b"\n").partition(b"\t")
    if not sep or len(crc) != 8:
        return None
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        # A lone surrogate kept as a JSON escape (by an earlier version, or written by hand)
        # is repaired like all text, so re-encoding the entry can never fail at a restart.
        record = clean_json(json.loads(body), "a journal record")
    except (ValueError, RecursionError):  # InvalidInputError is a ValueError too
        return None
    return record if isinstance(record, dict) else None


def lock_journal(path: Path) -> filelock.FileLock:
    """Take the lock of the journal at ``path`` without waiting; the caller releases it.

    Raises:
        LockedError: a bridge (of this or another process) holds the journal open.
    """
    import filelock

    lock = filelock.FileLock(f"{path}.lock", thread_local=False)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout as exc:
        raise LockedError(f"journal {path} is open in another process") from exc
    return lock


def _named(record: dict[str, JsonValue] | None, matches: PayloadMatcher) -> str | None:
    """The entry id of an accept record whose payload ``matches`` picks, else ``None``."""
    if record is None or record.get("op") != "accept":
        return None
    entry_id, payload = record.get("id"), record.get("payload")
    if isinstance(entry_id, str) and isinstance(payload, dict) and matches(payload):
        return entry_id
    return None


def forget_in_closed_journal(path: Path, matches: PayloadMatcher, *, dry_run: bool) -> int:
    """Drop the accepted entries ``matches`` picks from a journal file; return how many.

    The journal's lock is taken for the rewrite (temporary file, fsync, rename), so no bridge
    opens it meanwhile; the other lines stay as they were (a torn final line is dropped). With
    ``dry_run`` the file is only read.

    Raises:
        LockedError: a bridge (of this or another process) holds the journal open.
        BackendUnavailableError: the file cannot be read or written.
    """
    lock = lock_journal(path)
    try:
        try:
            raw = path.read_bytes() if path.exists() else b""
        except OSError as exc:
            raise BackendUnavailableError(f"cannot read journal {path}: {exc}") from exc
        kept: list[bytes] = []
        named: set[str] = set()
        for line in raw.splitlines(keepends=True):
            record = decode_line(line)
            entry_id = _named(record, matches)
            if entry_id is not None:
                named.add(entry_id)
            elif record is not None:
                kept.append(line if line.endswith(b"\n") else line + b"\n")
        if dry_run or not named:
            return len(named)
        tmp = path.with_name(path.name + ".compact")
        try:
            with open(tmp, "wb") as handle:
                handle.write(b"".join(kept))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise BackendUnavailableError(f"cannot write journal {path}: {exc}") from exc
        return len(named)
    finally:
        lock.release()


def journal_matcher(
    pattern: re.Pattern[str] | None, session_id: str | None, user_id: str | None
) -> PayloadMatcher:
    """Which journal entries (bridge turns) a forget with these criteria removes."""

    def matches(payload: dict[str, JsonValue]) -> bool:
        if session_id is not None and payload.get("session_id") != session_id:
            return False
        if user_id is not None and payload.get("user_id") != user_id:
            return False
        return pattern is None or text_names(payload, pattern)

    return matches


async def forget_in_journals(
    access: StoreAccess, matches: PayloadMatcher, *, dry_run: bool
) -> tuple[int, int]:
    """Remove matching entries from the project's journals: (entries, journals locked).

    The journals of this process's bridges are rewritten through their journal objects (they
    hold the pending entries in memory too); the other journal files of the engine's folder
    are rewritten under their lock. A journal another process holds open is left, counted and
    logged: close that bridge and forget again.
    """
    entries = locked = 0
    held: set[Path] = set()
    """Journals a bridge of this process holds open: rewritten through it, once."""
    for journal in access.journals:
        path = journal.path.resolve()
        if journal.is_open and path not in held:
            held.add(path)
            entries += journal.forget(matches, dry_run=dry_run)
    files = [path.resolve() for path in access.journal_paths]
    folder = access.stores.folder
    if folder is not None and folder.is_dir():
        files.extend(
            path.resolve()
            for path in sorted(folder.glob("bridge-*.journal"))
            if _journal_of(path.name, access.project_id)
        )
    for path in dict.fromkeys(files):
        if path in held or not path.exists():
            continue
        try:
            entries += forget_in_closed_journal(path, matches, dry_run=dry_run)
        except LockedError:
            locked += 1
            logger.warning("forget: journal %s is open in another process; left as it is", path)
    return entries, locked


def _journal_of(name: str, project_id: str) -> bool:
    """Whether a file name is one of the project's default journals (see the bridge)."""
    base = f"bridge-{project_id}"
    if name == f"{base}.journal":
        return True
    middle = name.removeprefix(f"{base}.").removesuffix(".journal")
    return name.startswith(f"{base}.") and name.endswith(".journal") and middle.isdigit()
