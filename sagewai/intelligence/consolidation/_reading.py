"""Reading facts' words for a large run's candidate table, on the machine's other core.

Why: a full run reads every fact's structure once (:func:`~.structure.reading_of`, about 0.1 ms a
fact) while it pages through the store; at a million facts that reading was a fifth of the run,
on the same core as everything else. :class:`Reader` sends each page's contents to a child
Python (``python -c``, importing this module; never a fork of this process, whose threads hold
locks, nor a re-import of the user's ``__main__``) and gets the encoded readings back while this
process reads the next page. The reading is a pure function of the text, so the child and this
process give the same bytes; when the child cannot start or stops, the rest is read here.

The protocol (:mod:`sagewai.core._child`): one frame of contents per request, answered in order by
one frame of encoded readings.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import BinaryIO

from sagewai.core._child import Child, boot, frame, read_frame
from sagewai.intelligence.consolidation._structure import encode_reading, reading_of

__all__ = ["PATIENCE", "Reader", "read_here", "serve"]

logger = logging.getLogger("sagewai.consolidation")

PATIENCE = 60.0
"""Seconds a page's readings may take in the child (a page takes about 0.1 s) before it is
given up as hung and the rest is read here."""
_BOOT = boot(__name__)


def read_here(contents: Sequence[str]) -> list[bytes]:
    """The encoded readings of ``contents``, read in this process."""
    return [encode_reading(reading_of(content)) for content in contents]


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """The child's loop: a frame of contents in, a frame of encoded readings out, until EOF."""
    try:
        while (contents := read_frame(source)) is not None:
            sink.write(frame(read_here(contents)))
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
        self._child: Child | None = None
        self.read_in_child = 0
        """Contents the child read (the rest were read here)."""

    @property
    def running(self) -> bool:
        """True while the child process answers."""
        return self._child is not None and self._child.running

    async def __aenter__(self) -> Reader:
        if self._wanted:
            self._child = Child()
            try:
                await self._child.start(_BOOT)
            except (OSError, ValueError) as exc:
                await self._stop(f"could not start ({exc})")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def read(self, contents: Sequence[str]) -> list[bytes]:
        """The encoded readings of ``contents``, in order."""
        if not contents:
            return []
        child = self._child
        if child is not None and child.running:
            try:
                found = await child.answer(child.post(list(contents)), PATIENCE)
                if not isinstance(found, list) or len(found) != len(contents):
                    raise ValueError(f"{len(found)} readings for {len(contents)} contents")
                self.read_in_child += len(found)
                return found
            except (OSError, EOFError, ValueError, TypeError) as exc:  # TimeoutError included
                await self._stop(f"stopped ({exc!r})")
        return read_here(contents)

    async def _stop(self, why: str) -> None:
        child = self._child
        if child is not None and not child.given_up:
            logger.warning("consolidation: the reading process %s; reading here instead", why)
            await child.give_up()

    async def aclose(self) -> None:
        """Stop the child (safe to call more than once)."""
        child = self._child
        if child is not None:
            await child.close(grace=5.0)
