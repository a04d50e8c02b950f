"""A child Python answering framed requests in order: work for the machine's other core.

Why: a long job (a consolidation run) has work that threads cannot overlap with its own Python
(the GIL): reading facts' words, writing batches to SQLite. A :class:`Child` is started with
``python -c`` and a boot script that imports the serving module of this same sagewai (never a
fork of this process, whose threads hold locks, nor a re-import of the user's ``__main__``).

The protocol is framed marshal over the child's stdin and stdout: the first frame is this
process's ``sys.path`` (the child imports the same sagewai), then the caller's own frames; every
request frame is answered by one frame, in order. :func:`frame` and :func:`read_frame` are the
child's side. The caller decides what a failure means (the users of this module do the work in
this process instead); :class:`Child` only reports it, as :class:`EOFError` or
:class:`TimeoutError` from :meth:`Child.answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import struct
import sys
from collections import deque
from typing import Any, BinaryIO

__all__ = ["Child", "boot", "frame", "read_frame"]

_HEADER = struct.Struct("<I")


def boot(module: str) -> str:
    """The ``python -c`` script of a child serving with ``module.serve(stdin, stdout)``."""
    return (
        "import marshal, struct, sys\n"
        "size, = struct.unpack('<I', sys.stdin.buffer.read(4))\n"
        "sys.path[:] = marshal.loads(sys.stdin.buffer.read(size))\n"
        f"from {module} import serve\n"
        "serve(sys.stdin.buffer, sys.stdout.buffer)\n"
    )


def frame(value: Any) -> bytes:
    """``value`` as one frame (marshal, length first)."""
    payload = marshal.dumps(value, 4)
    return _HEADER.pack(len(payload)) + payload


def read_frame(source: BinaryIO) -> Any | None:
    """The next frame's value from a blocking stream (``None`` at its end)."""
    header = source.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return marshal.loads(source.read(size))


class Child:
    """One child process and its answers, in the order its requests were sent."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.given_up = False
        """Set by :meth:`give_up`: the caller does the work itself from then on."""
        self._answers: deque[asyncio.Future[Any]] = deque()
        self._pump: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """True once started and until given up."""
        return self.process is not None and not self.given_up

    async def start(self, script: str) -> None:
        """Start ``python -c script`` and send it this process's ``sys.path``.

        Raises:
            OSError: the child could not start (no ``sys.executable`` included).
        """
        if not sys.executable:
            raise OSError("no Python executable to start")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            script,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C is the parent's to handle
        )
        self.post(list(sys.path), answered=False)
        self._pump = asyncio.create_task(self._read_answers())

    def post(self, value: Any, *, answered: bool = True) -> asyncio.Future[Any]:
        """Send one frame; the future gets its answer (or the child's failure)."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        process = self.process
        try:
            if process is None or process.stdin is None:
                raise OSError("the child is not running")
            if answered:
                self._answers.append(answer)
            process.stdin.write(frame(value))
        except (OSError, ValueError) as exc:  # a closed pipe; ValueError: not marshalable
            if not answer.done():
                answer.set_exception(EOFError(f"could not be sent ({exc!r})"))
        if not answered and not answer.done():
            answer.set_result(None)
        return answer

    async def answer(self, answer: asyncio.Future[Any], patience: float) -> Any:
        """The answer of a :meth:`post`, waiting up to ``patience`` seconds for it.

        Raises:
            EOFError: the child ended or answered out of turn.
            TimeoutError: no answer in time (the request is then abandoned).
        """
        process = self.process
        try:
            if process is not None and process.stdin is not None:
                await process.stdin.drain()
            return await asyncio.wait_for(asyncio.shield(answer), patience)
        except (ConnectionError, BrokenPipeError) as exc:
            raise EOFError(f"the child's input closed ({exc!r})") from exc
        finally:
            if not answer.done():
                answer.cancel()  # never answered now: nothing left to retrieve

    async def _read_answers(self) -> None:
        process = self.process
        assert process is not None
        assert process.stdout is not None
        try:
            while True:
                (size,) = _HEADER.unpack(await process.stdout.readexactly(_HEADER.size))
                found = marshal.loads(await process.stdout.readexactly(size))
                if not self._answers:
                    raise ValueError("an answer nobody asked for")
                answer = self._answers.popleft()
                if not answer.done():
                    answer.set_result(found)
        except asyncio.CancelledError:
            raise
        except (OSError, EOFError, ValueError, TypeError, asyncio.IncompleteReadError) as exc:
            failure = EOFError(f"the child ended ({exc!r})")
            while self._answers:
                answer = self._answers.popleft()
                if not answer.done():
                    answer.set_exception(failure)

    async def give_up(self) -> None:
        """Stop using the child: kill it and wait until it exited (whatever it was doing
        ended before this returns, never after)."""
        self.given_up = True
        process = self.process
        if process is not None:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            await process.wait()

    async def close(self, grace: float = 10.0) -> None:
        """Close its input, let it finish (killed after ``grace`` s); safe to call again."""
        process, self.process = self.process, None
        pump, self._pump = self._pump, None
        if process is not None:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if pump is not None:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
