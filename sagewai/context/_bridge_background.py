"""The non-blocking path: ``submit`` journals a message and returns; a bounded queue feeds
workers that record it and hand full buffers to the extract stage; ``flush`` and ``aclose`` wait
for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sagewai.context._bridge_journaling import JournaledBridge
from sagewai.context.bridge._turns import RECORD_DRAIN, RETRY_DELAYS, PendingTurn
from sagewai.core._conversation import MessageLike
from sagewai.core._records import (
    new_id,
)
from sagewai.errors import (
    BackendError,
    ConfigurationError,
    SagewaiRuntimeError,
    SagewaiTimeoutError,
)

if TYPE_CHECKING:
    pass

logger = logging.getLogger("sagewai.context._bridge")


class BackgroundBridge(JournaledBridge):
    """The background workers of :class:`~sagewai.context._bridge.MemoryBridge`."""

    async def flush(self, session_id: str | None = None) -> int:
        """Extract and store every buffered turn (of one session, or all); return facts stored.

        In background mode this also waits until every message accepted by :meth:`submit`
        before the call is stored.

        Raises:
            BackendError: a background batch failed after retries (its messages stay in the
                journal and are replayed by the next start).
        """
        stored = 0
        await self._open_journal()
        if self._started:
            await self._queue.join()
        sessions = (
            [session_id]
            if session_id is not None
            else [s for s, st in self._sessions.items() if st.buffer]
        )
        for sid in sessions:
            state = self._sessions.get(sid)
            if state is None or not state.buffer:
                continue
            if self._started:
                await self._dispatch(sid)
            else:
                async with state.lock:
                    batch, state.buffer = state.buffer, []
                    stored += (await self._extract_batch(batch))[1]
                    self._finish(batch)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self._raise_failures()
        return stored

    def _raise_failures(self) -> None:
        if self._failures:
            failures, self._failures = self._failures, []
            raise BackendError(
                f"{len(failures)} background batch(es) could not be stored; their messages stay "
                f"in the journal for the next start. First error: {failures[0]!r}"
            ) from failures[0]

    async def start(self) -> None:
        """Open the journal, replay what it holds, and start the background workers.

        Called for you by the first :meth:`submit` or :meth:`remember`; call it yourself to
        replay a journal left by a crash at a time of your choosing. Replayed messages are
        stored before this returns.

        Raises:
            LockedError: another process has the journal open.
        """
        if self._started:
            return
        await self._open_journal()
        async with self._start_lock:
            if self.is_started:
                return
            loop = asyncio.get_running_loop()
            self._background = [
                loop.create_task(self._dispatch_forever(), name="sagewai-bridge-dispatch"),
                loop.create_task(self._flush_idle_forever(), name="sagewai-bridge-idle"),
            ]
            self._started = True

    @property
    def is_started(self) -> bool:
        """True once the background workers run."""
        return self._started

    async def submit(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> str:
        """Accept a message for background storage and extraction; return its message id at once.

        Accepted means journaled (with a journal): it will be stored even if the process dies
        before the workers reach it. Use :meth:`flush` to wait until it is stored, or
        :meth:`remember` to have it recorded before the call returns.

        Raises:
            InvalidInputError: a malformed message (nothing accepted).
            SagewaiTimeoutError: the queue stayed full for ``submit_timeout`` seconds (nothing
                accepted).
            BackendUnavailableError: the journal could not be written (nothing accepted).

        Example:
            >>> async def chat(bridge: MemoryBridge) -> None:
            ...     await bridge.submit("We deploy on Fridays", session_id="s1")
            ...     await bridge.flush()
        """
        if not self._started:
            await self.start()
        if self._closing:
            raise ConfigurationError("the bridge is closing; no message is accepted")
        turn = self._turn(message, role=role, session_id=session_id, user_id=user_id, tags=tags)
        if self._room.locked():
            try:
                await asyncio.wait_for(self._room.acquire(), timeout=self.submit_timeout or 1e-9)
            except TimeoutError as exc:
                raise SagewaiTimeoutError(
                    f"the bridge queue stayed full ({self.queue_size} messages) for "
                    f"{self.submit_timeout} s; the message was not accepted"
                ) from exc
        else:
            await self._room.acquire()
        try:
            self._accept(turn)
        except BaseException:
            self._room.release()
            raise
        self._queue.put_nowait(turn)
        return turn.message_id

    async def _dispatch_forever(self) -> None:
        while True:
            turns = [await self._queue.get()]
            while len(turns) < RECORD_DRAIN and not self._queue.empty():
                turns.append(self._queue.get_nowait())
            try:
                for _ in turns:
                    self._room.release()
                pendings = await self._retrying(functools.partial(self._record, turns), len(turns))
                if pendings is not None:
                    for sid in self._buffer(pendings[0]):
                        await self._dispatch(sid)
            finally:
                for _ in turns:
                    self._queue.task_done()

    async def _retrying(self, work: Any, messages: int) -> Any:
        """Run ``work()`` with retries on runtime failures; ``None`` when it failed for good."""
        for attempt, delay in enumerate((*RETRY_DELAYS, None)):
            try:
                return await work()
            except Exception as exc:
                # Only runtime failures (a backend down, a timeout) may pass by retrying.
                if delay is None or not isinstance(exc, SagewaiRuntimeError):
                    self.stats.batches_failed += 1
                    self._failures.append(exc)
                    logger.error("a batch of %d message(s) failed: %s", messages, exc)
                    return None
                logger.warning("batch attempt %d failed (%s); retrying", attempt + 1, exc)
                await asyncio.sleep(delay)
        return None

    async def _flush_idle_forever(self) -> None:
        interval = min(1.0, self.idle_flush_seconds / 2)
        while True:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for sid, state in list(self._sessions.items()):
                if state.buffer and now - state.last_seen >= self.idle_flush_seconds:
                    await self._dispatch(sid)

    async def _dispatch(self, session_id: str) -> None:
        """Hand the session's buffer to a worker as one batch (journaled first)."""
        state = self._sessions[session_id]
        batch, state.buffer = state.buffer, []
        if not batch:
            return
        if self.journal is not None:
            self.journal.record_batch(new_id(), [p.turn.entry_id for p in batch])
        await self._slots.acquire()
        task = asyncio.get_running_loop().create_task(self._run_batch(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_batch(self, batch: list[PendingTurn]) -> None:
        state = self._session(batch[0].turn.session_id)
        try:
            async with state.lock:
                work = functools.partial(self._extract_batch, batch)
                done = await self._retrying(work, len(batch))
            if done is not None:
                self._finish(batch)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Store everything accepted, stop the workers and close the journal.

        Not needed for durability (what was accepted is journaled): it saves the next start
        the replay.

        Raises:
            BackendError: a background batch failed (its messages stay in the journal).
        """
        if not self._started:
            try:
                if self._ready and any(s.buffer for s in self._sessions.values()):
                    await self.flush()
            finally:
                if self.journal is not None and self.journal.is_open:
                    await self.journal.aclose()
                self._ready = False
            return
        self._closing = True
        try:
            await self.flush()
        finally:
            for task in self._background:
                task.cancel()
            for task in self._background:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._background = []
            self._started = False
            self._closing = False
            self._ready = False
            if self.journal is not None:
                await self.journal.aclose()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
