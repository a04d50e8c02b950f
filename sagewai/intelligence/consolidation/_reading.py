"""Reading facts' words for a large run's candidate table, on the machine's other core.

Why: a full run reads every fact's structure once (:func:`~.structure.reading_of`, about 0.1 ms a
fact) while it pages through the store; at a million facts that reading was a fifth of the run,
on the same core as everything else. :class:`Reader` sends each page's contents to a child
Python (``python -c``, importing this module; never a fork of this process, whose threads hold
locks, nor a re-import of the user's ``__main__``) and gets the encoded readings back while this
process reads the next page. The reading is a pure function of the text, so the child and this
process give the same bytes; when the child cannot start or stops, the rest is read here.

The protocol is framed marshal over the child's stdin and stdout: the first frame is this
process's ``sys.path`` (the child imports the same sagewai), then one frame of contents per
request, answered in order by one frame of encoded readings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import marshal
import struct
import sys
from collections import deque
from collections.abc import Sequence
from typing import BinaryIO

from sagewai.intelligence.consolidation._structure import encode_reading, reading_of

__all__ = ["PATIENCE", "Reader", "read_here", "serve"]

logger = logging.getLogger("sagewai.consolidation")

_HEADER = struct.Struct("<I")
PATIENCE = 60.0
"""Seconds a page's readings may take in the child (a page takes about 0.1 s) before it is
given up as hung and the rest is read here."""
_BOOT = (
    "import marshal, struct, sys\n"
    "size, = struct.unpack('<I', sys.stdin.buffer.read(4))\n"
    "sys.path[:] = marshal.loads(sys.stdin.buffer.read(size))\n"
    "from sagewai.intelligence.consolidation._reading import serve\n"
    "serve(sys.stdin.buffer, sys.stdout.buffer)\n"
)


def read_here(contents: Sequence[str]) -> list[bytes]:
    """The encoded readings of ``contents``, read in this process."""
    return [encode_reading(reading_of(content)) for content in contents]


def _frame(value: list[str] | list[bytes]) -> bytes:
    payload = marshal.dumps(value, 4)
    return _HEADER.pack(len(payload)) + payload


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """The child's loop: a frame of contents in, a frame of encoded readings out, until EOF."""
    try:
        while header := source.read(_HEADER.size):
            (size,) = _HEADER.unpack(header)
            contents = marshal.loads(source.read(size))  # from the parent
            sink.write(_frame(read_here(contents)))
            sink.flush()
    except (KeyboardInterrupt, BrokenPipeError):  # the parent went away
        pass


class Reader:
    """Encoded readings of contents, from a child process when it runs, else read here.

    Args:
        use_process: Start the child (when false every reading is made in this process).
    """

    def __init__(self, *, use_process: bool) -> None:
        self._wanted = use_process
        self._process: asyncio.subprocess.Process | None = None
        self._asked: deque[asyncio.Future[list[bytes]]] = deque()
        self._pump: asyncio.Task[None] | None = None
        self._broken = False
        self.read_in_child = 0
        """Contents the child read (the rest were read here)."""

    @property
    def running(self) -> bool:
        """True while the child process answers."""
        return self._process is not None and not self._broken

    async def __aenter__(self) -> Reader:
        if self._wanted and sys.executable:
            try:
                self._process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-c",
                    _BOOT,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C is the parent's to handle
                )
                assert self._process.stdin is not None
                self._process.stdin.write(_frame(list(sys.path)))
                self._pump = asyncio.create_task(self._answers())
            except (OSError, ValueError) as exc:
                self._stop(f"could not start ({exc})")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def read(self, contents: Sequence[str]) -> list[bytes]:
        """The encoded readings of ``contents``, in order."""
        if not contents:
            return []
        if self.running:
            process = self._process
            assert process is not None
            assert process.stdin is not None
            answer: asyncio.Future[list[bytes]] = asyncio.get_running_loop().create_future()
            self._asked.append(answer)
            try:
                process.stdin.write(_frame(list(contents)))
                await process.stdin.drain()
                found = await asyncio.wait_for(asyncio.shield(answer), PATIENCE)
                if len(found) != len(contents):
                    raise ValueError(f"{len(found)} readings for {len(contents)} contents")
                self.read_in_child += len(found)
                return found
            except (OSError, EOFError, ValueError, TypeError) as exc:  # TimeoutError included
                if not answer.done():
                    answer.cancel()  # never answered now: nothing left to retrieve
                self._stop(f"stopped ({exc!r})")
        return read_here(contents)

    async def _answers(self) -> None:
        process = self._process
        assert process is not None
        assert process.stdout is not None
        try:
            while True:
                (size,) = _HEADER.unpack(await process.stdout.readexactly(_HEADER.size))
                found = marshal.loads(await process.stdout.readexactly(size))
                if not isinstance(found, list) or not self._asked:
                    raise ValueError("an answer nobody asked for")
                answer = self._asked.popleft()
                if not answer.done():
                    answer.set_result(found)
        except asyncio.CancelledError:
            raise
        except (OSError, EOFError, ValueError, TypeError, asyncio.IncompleteReadError) as exc:
            failure = EOFError(f"the reading process ended ({exc!r})")
            while self._asked:
                answer = self._asked.popleft()
                if not answer.done():
                    answer.set_exception(failure)

    def _stop(self, why: str) -> None:
        if not self._broken:
            logger.warning("consolidation: the reading process %s; reading here instead", why)
        self._broken = True
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def aclose(self) -> None:
        """Stop the child (safe to call more than once)."""
        process, self._process = self._process, None
        pump, self._pump = self._pump, None
        if process is not None:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if pump is not None:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
