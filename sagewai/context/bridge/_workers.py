"""The bridge's background workers: ``submit`` hands a journaled message over and returns.

A bounded queue feeds a dispatcher that records up to ``RECORD_DRAIN`` queued messages in one
write (the record stage) and hands each session's full buffer to a worker (the deferred stage),
``workers`` batches at a time; a second loop hands over the buffers of sessions idle for
``idle_flush_seconds``. A batch that fails with a runtime error (a backend down, a timeout) is
retried after 0.1, 0.5 and 2 s; one that fails for good is logged and kept (its messages stay in
the journal for the next start) and raised by the next ``flush``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sagewai.context.bridge._sessions import Sessions
from sagewai.context.bridge._settings import BridgeSettings
from sagewai.context.bridge._turns import RECORD_DRAIN, RETRY_DELAYS, BridgeStats, BridgeTurn
from sagewai.errors import BackendError, SagewaiRuntimeError, SagewaiTimeoutError

__all__ = ["BackgroundWorkers"]

logger = logging.getLogger("sagewai.context.bridge")

_T = TypeVar("_T")

Recorder = Callable[[list[BridgeTurn]], Awaitable[None]]
"""Records queued turns (stage 1, with retries) and dispatches the sessions whose buffer filled
up."""
Dispatcher = Callable[[str], Awaitable[None]]
"""Hands a session's buffer to a worker (stage 2)."""


class BackgroundWorkers:
    """The queue and the tasks of one bridge's background mode (see the module)."""

    def __init__(self, settings: BridgeSettings, sessions: Sessions, stats: BridgeStats) -> None:
        self._settings = settings
        self._sessions = sessions
        self._stats = stats
        self._queue: asyncio.Queue[BridgeTurn] = asyncio.Queue()
        self._room = asyncio.Semaphore(settings.queue_size)
        self._slots = asyncio.Semaphore(settings.workers)
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._failures: list[BaseException] = []

    @property
    def running(self) -> bool:
        """True while the dispatcher and the idle loop run."""
        return bool(self._loops)

    def start(self, record: Recorder, dispatch: Dispatcher) -> None:
        """Start the dispatcher and the idle loop (in the running event loop)."""
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._dispatch_forever(record), name="sagewai-bridge-dispatch"),
            loop.create_task(self._flush_idle_forever(dispatch), name="sagewai-bridge-idle"),
        ]

    async def stop(self) -> None:
        """Stop the loops (call after :meth:`drain`)."""
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._loops = []

    async def room(self) -> None:
        """Wait up to ``submit_timeout`` seconds for room in the queue.

        Raises:
            SagewaiTimeoutError: the queue stayed full (the message is not accepted).
        """
        if not self._room.locked():
            await self._room.acquire()
            return
        timeout = self._settings.submit_timeout or 1e-9
        try:
            await asyncio.wait_for(self._room.acquire(), timeout=timeout)
        except TimeoutError as exc:
            raise SagewaiTimeoutError(
                f"the bridge queue stayed full ({self._settings.queue_size} messages) for "
                f"{self._settings.submit_timeout} s; the message was not accepted"
            ) from exc

    def give_back_room(self) -> None:
        """Release the room taken by :meth:`room` for a message that was not accepted."""
        self._room.release()

    def put(self, turn: BridgeTurn) -> None:
        """Queue an accepted turn (its room was taken by :meth:`room`)."""
        self._queue.put_nowait(turn)

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run one batch's ``work`` in a worker slot, in a task of its own."""
        await self._slots.acquire()
        task = asyncio.get_running_loop().create_task(self._in_slot(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _in_slot(self, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        finally:
            self._slots.release()

    async def retrying(self, work: Callable[[], Awaitable[_T]], messages: int) -> _T | None:
        """``work()`` with retries on runtime failures; ``None`` when it failed for good."""
        for attempt, delay in enumerate((*RETRY_DELAYS, None)):
            try:
                return await work()
            except Exception as exc:
                # Only runtime failures (a backend down, a timeout) may pass by retrying.
                if delay is None or not isinstance(exc, SagewaiRuntimeError):
                    self._stats.batches_failed += 1
                    self._failures.append(exc)
                    logger.error("a batch of %d message(s) failed: %s", messages, exc)
                    return None
                logger.warning("batch attempt %d failed (%s); retrying", attempt + 1, exc)
                await asyncio.sleep(delay)
        return None

    async def drain(self) -> None:
        """Wait until every queued turn is recorded and every batch handed over is done."""
        await self._queue.join()

    async def settle(self) -> None:
        """Wait for the batches in flight, then raise the failures kept since the last call.

        Raises:
            BackendError: a background batch failed after retries (its messages stay in the
                journal and are replayed by the next start).
        """
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._failures:
            failures, self._failures = self._failures, []
            raise BackendError(
                f"{len(failures)} background batch(es) could not be stored; their messages stay "
                f"in the journal for the next start. First error: {failures[0]!r}"
            ) from failures[0]

    async def _dispatch_forever(self, record: Recorder) -> None:
        while True:
            turns = [await self._queue.get()]
            while len(turns) < RECORD_DRAIN and not self._queue.empty():
                turns.append(self._queue.get_nowait())
            try:
                for _ in turns:
                    self._room.release()
                await record(turns)
            finally:
                for _ in turns:
                    self._queue.task_done()

    async def _flush_idle_forever(self, dispatch: Dispatcher) -> None:
        seconds = self._settings.idle_flush_seconds
        while True:
            await asyncio.sleep(min(1.0, seconds / 2))
            for session_id in self._sessions.idle(seconds):
                await dispatch(session_id)
