"""Access tracking off the search path: reads are recorded in memory and written in batches.

A search marks the facts it returns as read (``last_accessed_at``, which keeps them from decaying).
Writing that mark inside the search costs a write transaction per search, the largest part of a
search on PostgreSQL; so the engine records the reads here and a background task writes them, at
most one statement per ``delay`` seconds however many searches ran meanwhile.

What a caller can rely on: :meth:`ContextEngine.get` shows the engine's own pending marks (without
writing them), a consolidation run and :meth:`ContextEngine.close` write what is pending first, so
decay counts every read and a closed engine has written them all. Another process sees them
within ``delay`` seconds. A process that dies loses the marks of its last ``delay`` seconds (never
a fact: a mark only delays decay). A write that fails is logged and counted in
:attr:`AccessLog.failed`, and the search that caused it is not affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from sagewai.core._records import Fact
from sagewai.errors import InvalidInputError
from sagewai.stores.base._metadata import MetadataStore

__all__ = ["AccessLog"]

logger = logging.getLogger("sagewai.context")

_DEFAULT_DELAY: Final = 0.5


class AccessLog:
    """The reads of one engine's searches, written to the metadata store in batches.

    Args:
        store: Where ``last_accessed_at`` is written (:meth:`MetadataStore.touch`).
        project_id: The engine's project.
        delay: Seconds between writes; reads recorded meanwhile share one statement.

    Example:
        >>> import asyncio
        >>> from sagewai import Fact
        >>> from sagewai.core import utcnow
        >>> from sagewai.stores import InMemoryMetadataStore
        >>> from sagewai.core import WriteBatch
        >>> async def demo() -> bool:
        ...     store = InMemoryMetadataStore()
        ...     fact = Fact(project_id="p", content="Alice prefers tea")
        ...     await store.apply(WriteBatch(project_id="p", upserts=[fact]))
        ...     log = AccessLog(store, "p")
        ...     log.record([fact.id], utcnow())  # returns at once
        ...     await log.flush()  # written now (a background task would within 0.5 s)
        ...     return (await store.get("p", [fact.id]))[0].last_accessed_at is not None
        >>> asyncio.run(demo())
        True
    """

    def __init__(
        self, store: MetadataStore, project_id: str, *, delay: float = _DEFAULT_DELAY
    ) -> None:
        if not delay >= 0:
            raise InvalidInputError(f"delay must be zero or positive seconds, got {delay!r}")
        self._store = store
        self._project_id = project_id
        self._delay = delay
        self._pending: dict[str, datetime] = {}
        self._writing: dict[str, datetime] = {}
        """The batch being written: still shown by :meth:`overlay` until it is stored."""
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self.written = 0
        """Marks written so far."""
        self.failed = 0
        """Marks lost to failed writes."""

    @property
    def pending(self) -> int:
        """Facts read but not yet written."""
        return len(self._pending)

    def record(self, ids: Sequence[str], at: datetime) -> None:
        """Mark ``ids`` as read at ``at``; the write happens in the background."""
        for fact_id in ids:
            previous = self._pending.get(fact_id)
            if previous is None or previous < at:
                self._pending[fact_id] = at
        if self._pending and not self._running():
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._drain(self._wake))

    def _running(self) -> bool:
        task = self._task
        if task is None or task.done():
            return False
        # A task of an event loop that has ended never runs again: start a new one.
        return task.get_loop() is asyncio.get_running_loop()

    def overlay(self, fact: Fact) -> Fact:
        """``fact`` with its pending read mark, if this log holds a later one than the store."""
        at = self._pending.get(fact.id) or self._writing.get(fact.id)
        if at is None or (fact.last_accessed_at is not None and fact.last_accessed_at >= at):
            return fact
        return fact.model_copy(update={"last_accessed_at": at})

    async def flush(self) -> None:
        """Write every pending mark now (and wait for a write already under way)."""
        if self._running() and self._task is not None and self._wake is not None:
            self._wake.set()
            await asyncio.shield(self._task)
        if self._pending:
            await self._write()

    async def _drain(self, wake: asyncio.Event) -> None:
        while self._pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), self._delay)
            await self._write()

    async def _write(self) -> None:
        batch, self._pending = self._pending, {}
        if not batch:
            return
        self._writing = batch
        # One statement for the batch, stamped with its latest read: the marks of one batch are
        # at most ``delay`` seconds apart, and decay counts in days.
        try:
            await self._store.touch(self._project_id, list(batch), max(batch.values()))
        except Exception as exc:  # a lost mark only delays decay: never fail the caller
            self.failed += len(batch)
            logger.warning("could not record %d reads: %s", len(batch), exc)
        else:
            self.written += len(batch)
        finally:
            self._writing = {}
