"""Opening the write-ahead journal and replaying what it holds (accepted, not yet stored)
before a bridge's first operation; default journals taken by another bridge move to a sibling.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from sagewai.context._bridge_recording import RecordingBridge
from sagewai.context.bridge._journal import JournalEntry, JournalState, WriteAheadJournal
from sagewai.context.bridge._turns import BridgeTurn
from sagewai.errors import (
    LockedError,
)

if TYPE_CHECKING:
    pass

logger = logging.getLogger("sagewai.context._bridge")


class JournaledBridge(RecordingBridge):
    """The journal side of :class:`~sagewai.context._bridge.MemoryBridge`: open, lock, replay."""

    @property
    def is_ready(self) -> bool:
        """True once the journal (if any) is open and what it held is replayed."""
        return self._ready

    async def _open_journal(self) -> None:
        """Open the journal and replay what it holds; once, before the first operation."""
        if self._ready:
            return
        async with self._start_lock:
            if self.is_ready:
                return
            if self.journal is not None:
                state = self._lock_journal()
                try:
                    self.journal.start()
                    await self._replay(state.pending, state.batches)
                    await self._adopt_siblings()
                except BaseException:
                    await self.journal.aclose()  # release it: a later start replays again
                    raise
            self._ready = True

    def _lock_journal(self) -> JournalState:
        """Open the journal; a default one taken by another bridge moves to a free sibling."""
        assert self.journal is not None
        try:
            return self.journal.open()
        except LockedError:
            if not self._journal_candidates:
                raise
        for path in self._journal_candidates[1:]:
            journal = WriteAheadJournal(path, fsync=self._fsync)
            try:
                state = journal.open()
            except LockedError:
                continue
            self.journal = journal
            return state
        raise LockedError(
            f"every default journal of project {self.engine.project_id!r} in "
            f"{self.engine.stores.folder} is open in another bridge; pass journal_path="
        )

    async def _adopt_siblings(self) -> None:
        """Replay what the default journals of bridges that are gone left behind."""
        assert self.journal is not None
        for path in self._journal_candidates:
            if path == self.journal.path or not path.exists() or path.stat().st_size == 0:
                continue
            other = WriteAheadJournal(path, fsync="never")
            try:
                state = other.open()
            except LockedError:
                continue  # a live bridge owns it
            try:
                await self._replay(state.pending, state.batches, journal=other)
            finally:
                other.close()

    async def _replay(
        self,
        pending: Sequence[JournalEntry],
        batches: Mapping[str, Sequence[str]],
        *,
        journal: WriteAheadJournal | None = None,
    ) -> None:
        journal = journal or self.journal
        assert journal is not None
        turns: dict[str, BridgeTurn] = {}
        for entry in pending:
            try:
                turns[entry.id] = BridgeTurn.model_validate(entry.payload)
            except ValidationError:
                logger.error("journal entry %s is unreadable; skipped", entry.id)
        if not turns:
            return
        order = {entry_id: position for position, entry_id in enumerate(turns)}
        grouped: list[list[BridgeTurn]] = []
        in_batch: set[str] = set()
        for members in sorted(
            batches.values(), key=lambda m: min(order.get(i, 1 << 60) for i in m)
        ):
            batch = [turns[i] for i in members if i in turns]
            if batch:
                grouped.append(batch)
                in_batch.update(members)
        loose: dict[str, list[BridgeTurn]] = {}
        for entry_id, turn in turns.items():
            if entry_id not in in_batch:
                loose.setdefault(turn.session_id, []).append(turn)
        for session_turns in loose.values():
            step = self.extract_every_n_turns
            grouped.extend(session_turns[i : i + step] for i in range(0, len(session_turns), step))
        for batch in grouped:
            state = self._session(batch[0].session_id)
            state.next_turn = max(state.next_turn, max(t.turn_index for t in batch) + 1)
            async with state.lock:
                recorded, _ = await self._record(batch)
                await self._extract_batch(recorded)
            self.stats.messages_processed += len(batch)
            journal.complete(t.entry_id for t in batch)
        self.stats.messages_replayed += len(turns)
        logger.info("replayed %d journaled message(s)", len(turns))
