"""The store a command opens: ``--store`` and ``--vectors`` (or their environment variables).

Every command that opens a user's memory calls :func:`open_engine`; the strings themselves are
read by :func:`sagewai.stores.resolve_stores`, the one resolver.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.core._embedder import Embedder

__all__ = ["DEFAULT_STORE", "VECTORS_HELP", "open_engine", "store_arguments"]

DEFAULT_STORE = "./sagewai-data"
"""The embedded store folder used when neither ``--store`` nor ``SAGEWAI_STORE`` is given."""

VECTORS_HELP = "with a postgresql:// store: a Qdrant URL or edge folder (as in consolidate)"
"""The ``--vectors`` help of the commands that read the vector store as ``consolidate`` does."""


def store_arguments(
    parser: argparse.ArgumentParser, *, created: bool = False, vectors: str | None = VECTORS_HELP
) -> None:
    """Add ``--store`` (said to be created when missing if ``created``) and, unless ``vectors``
    is None, ``--vectors`` with that help."""
    where = (
        "embedded store folder (created when missing), or postgresql://..."
        if created
        else "embedded store folder, or postgresql://... for the PostgreSQL metadata store"
    )
    parser.add_argument(
        "--store", default=None, help=f"{where} (default: $SAGEWAI_STORE or {DEFAULT_STORE})"
    )
    if vectors is not None:
        parser.add_argument("--vectors", default=None, help=vectors)


def open_engine(
    store: str,
    project_id: str,
    *,
    vectors: str | None = None,
    embedder: Embedder | None = None,
) -> ContextEngine:
    """The engine of ``project_id`` on ``store``: an embedded folder, or PostgreSQL plus vectors.

    ``vectors`` falls back to ``$SAGEWAI_VECTORS``. The embedder is the default (MiniLM) unless
    one is given; the embedded folder's manifest makes sure it matches.

    Raises:
        ConfigurationError: ``store`` is neither an existing folder nor a PostgreSQL URL.
    """
    from sagewai.context._engine import ContextEngine
    from sagewai.stores._resolve import resolve_stores

    stores = resolve_stores(
        store, vectors=vectors or os.environ.get("SAGEWAI_VECTORS"), embedder=embedder
    )
    return ContextEngine(stores=stores, project_id=project_id)
