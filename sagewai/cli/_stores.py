"""The store a command opens: ``--store`` and ``--vectors`` (or their environment variables).

Every command that opens a user's memory calls :func:`open_engine`; the strings themselves are
read by :func:`sagewai.stores.resolve_stores`, the one resolver.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.core._embedder import Embedder

__all__ = ["DEFAULT_STORE", "open_engine"]

DEFAULT_STORE = "./sagewai-data"
"""The embedded store folder used when neither ``--store`` nor ``SAGEWAI_STORE`` is given."""


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
