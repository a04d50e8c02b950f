"""sagewai's warnings when the application configured no logging: with their level and source.

Python prints a library's warnings through ``logging.lastResort`` when no handler is
configured, as bare lines ("the model is not reachable; ..."): a reader cannot tell a warning
from program output, nor which part said it. sagewai puts one handler on its own ``sagewai``
logger that prints ``WARNING sagewai.context.bridge: ...`` on standard error, and only while the
application has configured no logging (no handler on the root logger, none of its own on
``sagewai``): once it has, its handlers alone print sagewai's records, formatted its way.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["FORMAT", "install_fallback_handler"]

FORMAT = "%(levelname)s %(name)s: %(message)s"
"""How a warning is printed when the application configured no logging."""


class _FallbackHandler(logging.Handler):
    """Prints WARNING and above on standard error while nothing else would (see the module)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter(FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers or _other_handlers():
            return  # the application logs: its handlers print the record
        try:
            sys.stderr.write(self.format(record) + "\n")  # the stream of the moment, as lastResort
            sys.stderr.flush()
        except Exception:  # a logging handler never raises into the caller
            self.handleError(record)


def _other_handlers() -> bool:
    return any(not isinstance(h, _FallbackHandler) for h in logging.getLogger("sagewai").handlers)


def install_fallback_handler() -> None:
    """Put the fallback handler on the ``sagewai`` logger (once; a re-import adds none)."""
    logger = logging.getLogger("sagewai")
    if not any(isinstance(h, _FallbackHandler) for h in logger.handlers):
        logger.addHandler(_FallbackHandler())
