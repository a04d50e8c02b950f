"""Commits that land while their caller goes on: a long job's batches written behind it.

Why: a consolidation run decides a batch, commits it, decides the next. On the embedded SQLite
store the commit is a fifth of a large run, and a thread cannot overlap it with the deciding
(the sqlite3 module takes the GIL back for every row). A :class:`CommitQueue` sends each batch's
rows to the metadata store's background writer (declared on the store contract:
``MetadataStore.background_writer``) and returns a task that resolves once the batch landed and
the vector index holds its payloads, so the caller decides the next batch meanwhile. Batches land
in the order they were submitted, each in one transaction, each followed by the caller's state
row (a checkpoint) when it gives one.

The caller must see its own batches before they land (it keeps them, as a consolidation run keeps
its overlay) and await each task before it relies on the store holding the batch. On a store
without a background writer, or when it cannot start, :attr:`CommitQueue.background` is false and
the caller commits as usual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import JsonValue

from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.core._port import MemoryPort
    from sagewai.stores.base._metadata import BatchWriter

__all__ = ["CommitQueue"]


class CommitQueue:
    """A port's commits written in order by the store's background writer (see the module).

    Made by :meth:`~sagewai.context._access.StoreAccess.commit_queue`, which closes the writer
    (after the batches in flight).
    """

    def __init__(self, port: MemoryPort, writer: BatchWriter | None) -> None:
        self._port = port
        self._writer = writer

    @property
    def background(self) -> bool:
        """True when batches are written by the background writer (else: commit as usual)."""
        return self._writer is not None

    def submit(
        self,
        batch: WriteBatch,
        *,
        previous: Mapping[str, Fact] | None = None,
        state: tuple[str, JsonValue] | None = None,
    ) -> asyncio.Task[None]:
        """Write ``batch`` (then ``state``, a key and value) behind the caller.

        ``previous`` is ``commit``'s (the stored versions the caller read, which spare the index
        writes of unchanged payloads). The task raises what the store raises for the batch (its
        typed errors); a later batch's task resolves after it.

        Raises:
            InvalidInputError: the queue is not in the background, the batch is for another
                project, is malformed, or deletes facts (deletes go through ``commit``).
        """
        writer = self._writer
        if writer is None:
            raise InvalidInputError("this commit queue is not in the background: use commit")
        project_id = self._port.project_id
        if batch.project_id != project_id:
            raise InvalidInputError("a batch for another project cannot go through this engine")
        if batch.deletes:
            raise InvalidInputError("a commit queue writes upserts and changes; delete by commit")
        row = None if state is None else (project_id, state[0], state[1])
        landing = writer.submit(batch, row)
        return asyncio.create_task(self._indexed(landing, batch, dict(previous or {})))

    async def _indexed(
        self, landing: asyncio.Task[None], batch: WriteBatch, previous: Mapping[str, Fact]
    ) -> None:
        await landing
        await self._port.refresh_index(batch.upserts, previous=previous)
