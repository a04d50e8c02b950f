"""Progress bars for calls that can run for more than a few seconds (``add_many``,
``bridge_conversation``): tqdm on standard error, shown only where someone is watching.

Why: loading ten thousand facts or a long conversation takes minutes on a laptop, and a call that
prints nothing for minutes looks hung. A bar is noise everywhere else (a log file, CI, a pipe,
a server), so by default it shows only when standard error is a terminal and the job is large
(``SHOW_FROM`` items or more); ``progress=True`` or ``False`` decides for one call, and the
environment variable ``SAGEWAI_PROGRESS`` (``1`` or ``0``) for a whole process.

Example:
    >>> with progress_bar(3, "embedding", show=False) as bar:
    ...     for _ in range(3):
    ...         bar.advance()
    ...     bar.done
    3
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sagewai.errors import InvalidInputError

__all__ = ["SHOW_FROM", "ProgressBar", "progress_bar", "wants_progress"]

SHOW_FROM = 200
"""Items from which a job shows a bar by default (smaller jobs end before a bar helps)."""

_ENV = "SAGEWAI_PROGRESS"


def wants_progress(total: int, show: bool | None) -> bool:
    """Whether a job of ``total`` items shows a bar: ``show`` when given, else the environment's
    ``SAGEWAI_PROGRESS``, else a terminal on standard error and ``total >= SHOW_FROM``.

    Raises:
        InvalidInputError: ``show`` is neither a bool nor None.

    Example:
        >>> wants_progress(10_000, False), wants_progress(1, True)
        (False, True)
    """
    if show is not None and not isinstance(show, bool):
        raise InvalidInputError(f"progress must be True, False or None, got {show!r}")
    if show is not None:
        return show
    setting = os.environ.get(_ENV, "").strip().lower()
    if setting in {"0", "false", "no", "off"}:
        return False
    if setting in {"1", "true", "yes", "on"}:
        return True
    stream = sys.stderr
    return total >= SHOW_FROM and stream is not None and stream.isatty()


class ProgressBar:
    """Counts work done; draws a tqdm bar on standard error when shown."""

    def __init__(self, total: int, what: str, *, shown: bool) -> None:
        self.total = total
        self.done = 0
        self._bar: Any = None
        if shown:
            from tqdm import tqdm  # type: ignore[import-untyped]  # only a shown bar imports it

            self._bar = tqdm(total=total, desc=what, file=sys.stderr, leave=False, unit="it")

    def advance(self, count: int = 1) -> None:
        """Record ``count`` more items done."""
        self.done += count
        if self._bar is not None:
            self._bar.update(count)

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def progress_bar(total: int, what: str, *, show: bool | None = None) -> Iterator[ProgressBar]:
    """A bar over ``total`` items of ``what``, closed when the block ends (see
    :func:`wants_progress` for when it shows)."""
    bar = ProgressBar(total, what, shown=wants_progress(total, show))
    try:
        yield bar
    finally:
        bar.close()
