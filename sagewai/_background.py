"""A private event loop in a background thread: how synchronous code runs sagewai's coroutines.

Why a thread and not ``asyncio.run``: ``asyncio.run`` refuses inside a running loop (a Jupyter
cell, a sync callback of an async framework), and a fresh loop per call would strand what an
object left on the previous one (a connection pool, a bridge's background extraction task). One
long-lived loop in a daemon thread answers both: synchronous callers submit a coroutine and wait
for its result, whatever loop (if any) their own thread runs, and every object driven this way
always runs on the same loop. No ``nest_asyncio``: the caller's loop is never re-entered.

Plumbing of the core layer: it imports nothing of sagewai but the error tree.

Example:
    >>> async def add(a: int, b: int) -> int:
    ...     return a + b
    >>> run_blocking(add(2, 3))
    5
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from sagewai.errors import ConfigurationError

__all__ = ["BackgroundLoop", "default_loop", "run_blocking"]

T = TypeVar("T")


class BackgroundLoop:
    """An event loop running in its own daemon thread, started on first use.

    Example:
        >>> async def answer() -> int:
        ...     return 42
        >>> loop = BackgroundLoop(name="demo")
        >>> loop.run(answer())
        42
        >>> loop.stop()
    """

    def __init__(self, *, name: str = "sagewai-sync") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name=self.name, daemon=True)
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the background loop and return its result (or raise its error).

        Raises:
            ConfigurationError: called from a coroutine already running on this loop, which
                would wait for itself forever (await the coroutine there instead).
        """
        loop = self._running_loop()
        if threading.current_thread() is self._thread:
            work.close()
            raise ConfigurationError(
                "a blocking sagewai call was made from its own background loop: "
                "await the async method instead"
            )
        future = asyncio.run_coroutine_threadsafe(work, loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # an interrupt (Ctrl-C in a notebook) stops the work too
            raise

    async def arun(self, work: Coroutine[Any, Any, T]) -> T:
        """Await ``work`` run on the background loop, from a coroutine on another loop.

        For async entry points of a framework whose sync entry points use :meth:`run`: both
        then drive an object on the same loop.
        """
        loop = self._running_loop()
        if asyncio.get_running_loop() is loop:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what is still running, stop the loop and join its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None or loop.is_closed():
            return

        async def cancel_rest() -> None:
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        # Best effort at shutdown: the loop stops either way.
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(cancel_rest(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


_DEFAULT = BackgroundLoop()
atexit.register(_DEFAULT.stop)


def default_loop() -> BackgroundLoop:
    """The process-wide background loop every blocking call of sagewai shares."""
    return _DEFAULT


def run_blocking(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, inside a running loop or not."""
    return _DEFAULT.run(work)
