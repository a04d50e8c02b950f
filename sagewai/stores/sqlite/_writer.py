"""Writing an embedded store's batches in a child process, while this one goes on deciding.

Why: a long consolidation run decides a batch, writes it, decides the next. The write is a
fifth of the run, and threads cannot overlap it with the deciding: the sqlite3 module takes the
GIL back for every row, so both wait for each other. :class:`SqliteWriter` encodes each batch
here (rows of plain values, :meth:`SqliteMetadataStore.encode`) and sends it to a child Python
(``python -c``, importing this module; never a fork of this process, whose threads hold locks,
nor a re-import of the user's ``__main__``) that owns a second connection to the same file and
writes the batches in the order they came, one transaction each, while this process decides the
next one. SQLite's WAL lets this process read meanwhile; what it reads is the last batch that
landed, so a caller keeps its own view of a batch until :meth:`SqliteWriter.submit`'s landing
resolves.

When the child cannot start, fails a batch, stops or hangs, the writer stops using it and every
batch not known to have landed is written here, in order: its audit rows tell whether it did (a
batch lands whole). A batch the store refuses is therefore refused here too, with the store's
own typed error.

The protocol (:mod:`sagewai.core._child`): the database (path, busy timeout), answered by one
ready frame; then one frame per batch (the encoded batch, and an optional state row written
after it), answered in order by ``("ok", grown, added)`` or ``("error", text)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, BinaryIO

from pydantic import JsonValue

from sagewai.core._child import Child, boot, frame, read_frame
from sagewai.core._queries import WriteBatch
from sagewai.stores.sqlite._database import MEMORY
from sagewai.stores.sqlite._metadata import EncodedBatch, SqliteMetadataStore

__all__ = ["PATIENCE", "SqliteWriter", "serve"]

logger = logging.getLogger("sagewai.stores.sqlite")

PATIENCE = 120.0
"""Seconds one batch may take in the child (a batch of 1,000 takes about 0.2 s; a write waiting
for another process's lock gives up after the store's busy timeout) before the child is given up
as hung."""
_BOOT = boot(__name__)

StateRow = tuple[str, str, JsonValue]
"""(project id, key, value) of a :meth:`~SqliteMetadataStore.set_state` made after a batch."""


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """The child's loop: the database, then batches in and answers out, until EOF."""
    opening = read_frame(source)
    if opening is None:
        return
    path, busy_timeout = opening
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):  # the parent went away
        asyncio.run(_serve(source, sink, str(path), float(busy_timeout)))


async def _serve(source: BinaryIO, sink: BinaryIO, path: str, busy_timeout: float) -> None:
    store = SqliteMetadataStore(path, busy_timeout=busy_timeout)
    try:
        await store.open()
        sink.write(frame(("ready",)))
        sink.flush()
        # The child does nothing else: reading the next frame may block its loop.
        while (request := read_frame(source)) is not None:
            encoded, state = request
            try:
                grown, added = await store.write_encoded(encoded)
                if state is not None:
                    await store.set_state(*state)
                answer: tuple[Any, ...] = ("ok", grown, added)
            except Exception as exc:  # the parent writes the batch itself, and raises
                answer = ("error", f"{type(exc).__name__}: {exc}")
            sink.write(frame(answer))
            sink.flush()
    finally:
        await store.close()


class SqliteWriter:
    """Batches of one :class:`SqliteMetadataStore` written in order by a child process.

    Use it as ``async with SqliteWriter(store) as writer``; every landing must be awaited
    (leaving the block waits for the batches still in flight). A store in memory, or a child
    that cannot start, makes every batch be written here, at once.

    Args:
        store: The open store whose file the child writes.
    """

    def __init__(self, store: SqliteMetadataStore) -> None:
        self._store = store
        self._child: Child | None = None
        self._last: asyncio.Task[None] | None = None
        self.written_in_child = 0
        """Batches the child wrote (the rest were written here)."""

    @property
    def running(self) -> bool:
        """True while the child process writes."""
        return self._child is not None and self._child.running

    async def __aenter__(self) -> SqliteWriter:
        if self._store.path != MEMORY:
            child = self._child = Child()
            try:
                await child.start(_BOOT)
                ready = child.post((self._store.path, self._store.busy_timeout))
                answer = await child.answer(ready, PATIENCE)
                if answer != ("ready",):
                    raise ValueError(f"the writing process answered {answer!r}")
            except (OSError, ValueError, EOFError) as exc:  # TimeoutError included
                await self._stop(f"could not start ({exc!r})")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def submit(self, batch: WriteBatch, state: StateRow | None = None) -> asyncio.Task[None]:
        """Send ``batch`` (then ``state``) to be written; the task resolves once both landed.

        The batch is encoded here first, so a record that cannot be stored fails at once. The
        task raises what writing the batch in this process raises (the store's typed errors);
        it resolves after every batch submitted before it.

        Raises:
            InvalidInputError: the batch is malformed.
        """
        batch.validate()
        encoded = self._store.encode(batch)
        child = self._child
        answer = child.post((encoded, state)) if child is not None and child.running else None
        landing = asyncio.create_task(self._land(self._last, answer, batch, encoded, state))
        self._last = landing
        return landing

    async def _land(
        self,
        before: asyncio.Task[None] | None,
        answer: asyncio.Future[Any] | None,
        batch: WriteBatch,
        encoded: EncodedBatch,
        state: StateRow | None,
    ) -> None:
        if before is not None:
            # In order: a batch written here must not overtake one the child still holds.
            with contextlib.suppress(Exception):
                await before
        child = self._child
        if answer is not None and child is not None and child.running:
            try:
                found = await child.answer(answer, PATIENCE)
                if found[0] == "ok":
                    self.written_in_child += 1
                    await self._store.count_written(int(found[1]), int(found[2]))
                    return
                why = f"failed a batch ({found[1]})"
            except (OSError, EOFError, ValueError, TypeError, IndexError) as exc:
                why = f"stopped ({exc!r})"
            await self._stop(why)
        # Written here: what the child did not (a batch lands whole, so its first audit row
        # says whether it did), or everything when there is no child.
        if answer is None or not (batch.changes and await self._store.landed(batch.changes[0].id)):
            await self._store.write_encoded(encoded)
        if state is not None:
            await self._store.set_state(*state)

    async def _stop(self, why: str) -> None:
        """Stop using the child: a batch it still held landed or not before this returns."""
        child = self._child
        if child is not None and not child.given_up:
            logger.warning("the SQLite writing process %s; writing here instead", why)
            await child.give_up()

    async def aclose(self) -> None:
        """Wait for the batches in flight, then stop the child (safe to call more than once)."""
        last, self._last = self._last, None
        if last is not None:
            with contextlib.suppress(Exception):
                await last  # its own awaiter sees its error
        if self._child is not None:
            await self._child.close()
