"""The bridge's write-ahead journal: where it lives, opening it once, and replaying what it holds.

Durable on return: every accepted message is appended to the journal before the call returns,
and marked done only once both stages stored it. An engine made by ``ContextEngine.local(folder)``
gives its bridges a journal in that folder by default (``bridge-<project>.journal``, or a free
sibling ``bridge-<project>.<n>.journal`` when another live bridge holds it); a bridge opened on
the folder replays what was accepted but not stored, its own and what bridges that are gone left
in the siblings, before its first operation. An engine without a folder has no default journal:
give ``journal_path=``. Ids are deterministic, so a replay of work that did land changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from sagewai.context.bridge._journal import JournalEntry, WriteAheadJournal
from sagewai.context.bridge._settings import BridgeSettings
from sagewai.context.bridge._turns import SIBLING_JOURNALS, BridgeStats, BridgeTurn
from sagewai.errors import LockedError

__all__ = ["JournalKeeper"]

logger = logging.getLogger("sagewai.context.bridge")
_warned_no_folder = False

Replay = Callable[[list[BridgeTurn]], Awaitable[None]]
"""Stores one group of replayed turns (both stages), as the bridge would have."""


class JournalKeeper:
    """The journal of one bridge (see the module); ``journal`` is ``None`` without one.

    Args:
        settings: ``journal``, ``journal_path`` and ``fsync``.
        folder: The engine's folder (``ContextEngine.local``), where the default journal lives.
        project_id: Names the default journal.
        stats: The bridge's counters (replayed messages are counted).
    """

    def __init__(
        self,
        settings: BridgeSettings,
        *,
        folder: Path | None,
        project_id: str,
        stats: BridgeStats,
    ) -> None:
        self._settings = settings
        self._stats = stats
        self._project_id = project_id
        self._folder = folder
        self._candidates: list[Path] = []
        self.journal: WriteAheadJournal | None
        if settings.journal_path is not None:
            self.journal = WriteAheadJournal(settings.journal_path, fsync=settings.fsync)
        elif settings.journal and folder is not None:
            base = folder / f"bridge-{project_id}"
            self._candidates = [Path(f"{base}.journal")] + [
                Path(f"{base}.{n}.journal") for n in range(1, SIBLING_JOURNALS)
            ]
            self.journal = WriteAheadJournal(self._candidates[0], fsync=settings.fsync)
        else:
            self.journal = None
            if settings.journal:
                _warn_no_folder()
        self._ready = False
        self._lock = asyncio.Lock()

    @property
    def is_ready(self) -> bool:
        """True once the journal (if any) is open and what it held is replayed."""
        return self._ready

    async def ready(self, replay: Replay) -> None:
        """Open the journal and replay what it holds; once, before the bridge's first operation.

        Raises:
            LockedError: every default journal is held by a live bridge (or the given one is).
        """
        if self._ready:
            return
        async with self._lock:
            if self.is_ready:  # another task opened it while this one waited
                return
            if self.journal is not None:
                pending, batches = self._lock_journal()
                try:
                    self.journal.start()
                    await self._replay(self.journal, pending, batches, replay)
                    await self._adopt_siblings(replay)
                except BaseException:
                    await self.journal.aclose()  # release it: a later start replays again
                    raise
            self._ready = True

    def _lock_journal(self) -> tuple[list[JournalEntry], dict[str, list[str]]]:
        """Open the journal; a default one taken by another bridge moves to a free sibling."""
        assert self.journal is not None
        try:
            state = self.journal.open()
            return list(state.pending), {k: list(v) for k, v in state.batches.items()}
        except LockedError:
            if not self._candidates:
                raise
        for path in self._candidates[1:]:
            journal = WriteAheadJournal(path, fsync=self._settings.fsync)
            try:
                state = journal.open()
            except LockedError:
                continue
            self.journal = journal
            return list(state.pending), {k: list(v) for k, v in state.batches.items()}
        raise LockedError(
            f"every default journal of project {self._project_id!r} in {self._folder} is open "
            "in another bridge; pass journal_path="
        )

    async def _adopt_siblings(self, replay: Replay) -> None:
        """Replay what the default journals of bridges that are gone left behind."""
        assert self.journal is not None
        for path in self._candidates:
            if path == self.journal.path or not path.exists() or path.stat().st_size == 0:
                continue
            other = WriteAheadJournal(path, fsync="never")
            try:
                state = other.open()
            except LockedError:
                continue  # a live bridge owns it
            try:
                await self._replay(other, state.pending, state.batches, replay)
            finally:
                other.close()

    async def _replay(
        self,
        journal: WriteAheadJournal,
        pending: Sequence[JournalEntry],
        batches: Mapping[str, Sequence[str]],
        replay: Replay,
    ) -> None:
        """Hand the journal's pending turns to ``replay`` in the groups they were processed in."""
        turns: dict[str, BridgeTurn] = {}
        for entry in pending:
            try:
                turns[entry.id] = BridgeTurn.model_validate(entry.payload)
            except ValidationError:
                logger.error("journal entry %s is unreadable; skipped", entry.id)
        if not turns:
            return
        for group in _groups(turns, batches, self._settings.extract_every_n_turns):
            await replay(group)
            journal.complete(t.entry_id for t in group)
        self._stats.messages_replayed += len(turns)
        logger.info("replayed %d journaled message(s)", len(turns))

    # ------------------------------------------------------------------ writing

    def accept(self, turn: BridgeTurn) -> None:
        """Journal an accepted turn (before anything else happens to it)."""
        if self.journal is not None:
            self.journal.append_json(turn.entry_id, turn.model_dump_json())

    def record_batch(self, batch_id: str, turns: Iterable[BridgeTurn]) -> None:
        """Journal that these turns are processed together (a replay groups them the same way)."""
        if self.journal is not None:
            self.journal.record_batch(batch_id, [t.entry_id for t in turns])

    def complete(self, turns: Iterable[BridgeTurn]) -> None:
        """Checkpoint turns whose two stages are stored."""
        if self.journal is not None and self.journal.is_open:
            self.journal.complete(t.entry_id for t in turns)

    async def aclose(self) -> None:
        """Close the journal (its checkpoints are written); a later bridge opens it again."""
        if self.journal is not None and self.journal.is_open:
            await self.journal.aclose()
        self._ready = False


def _groups(
    turns: Mapping[str, BridgeTurn], batches: Mapping[str, Sequence[str]], step: int
) -> list[list[BridgeTurn]]:
    """Pending turns grouped as they were processed: the journaled batches first (in the order
    of their first turn), then the other turns per session, ``step`` at a time."""
    order = {entry_id: position for position, entry_id in enumerate(turns)}
    grouped: list[list[BridgeTurn]] = []
    in_batch: set[str] = set()
    for members in sorted(batches.values(), key=lambda m: min(order.get(i, 1 << 60) for i in m)):
        batch = [turns[i] for i in members if i in turns]
        if batch:
            grouped.append(batch)
            in_batch.update(members)
    loose: dict[str, list[BridgeTurn]] = {}
    for entry_id, turn in turns.items():
        if entry_id not in in_batch:
            loose.setdefault(turn.session_id, []).append(turn)
    for session_turns in loose.values():
        grouped.extend(session_turns[i : i + step] for i in range(0, len(session_turns), step))
    return grouped


def _warn_no_folder() -> None:
    global _warned_no_folder
    if not _warned_no_folder:
        _warned_no_folder = True
        logger.warning(
            "MemoryBridge: the engine has no folder, so no write-ahead journal: each message is "
            "stored as it is accepted, but turns waiting for extraction live in this process "
            "only (use ContextEngine.local(path) or pass journal_path=); logged once"
        )
