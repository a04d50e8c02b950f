"""LangGraph on sagewai memory: a ``BaseStore``, a recall hook and memory tools.

Why: agent builders already write LangGraph graphs and LangMem managers against LangGraph's
``BaseStore``. :class:`SagewaiStore` is that store over a :class:`ContextEngine`, so
``graph.compile(store=SagewaiStore(engine))`` gives every node sagewai's hybrid search, scopes,
audit history and forgetting, and what a graph stores is recalled by sagewai's own agent too.

How namespaces map onto scopes (``user_namespaces`` and ``session_namespaces`` set the labels):

======================================  ========================================================
namespace                               stored at
======================================  ========================================================
``("users", user_id, ...)``             USER scope of ``user_id`` (read in all their sessions)
``("sessions", session_id, ...)``       SESSION scope of ``session_id``
anything else, e.g. ``("docs", "faq")`` PROJECT scope
======================================  ========================================================

Each item is one fact: its text (the value's ``content``/``text``/``memory`` string, the fields
named by ``index``, or the value as JSON) is embedded and keyword-indexed; the value, namespace
and key ride in ``fact.metadata["langgraph"]``; tags mark the item and every prefix of its
namespace. A ``put`` over an existing key supersedes the old fact (its history stays, and
``engine.search(..., as_of=...)`` still finds what was believed then); ``delete`` deletes every
version with an audit tombstone. A ``ttl`` (minutes) sets an expiry: expired items are left out
of reads and removed by :meth:`SagewaiStore.sweep_expired`; ``refresh_ttl`` pushes it on read.
Decay and consolidation apply to items like to any fact.

Needs the ``langgraph`` extra: ``pip install "sagewai[langgraph]"``.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import langchain_core  # noqa: F401
    import langgraph.store.base  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        exc.name or "langgraph", "langgraph", "sagewai.integrations.langgraph"
    ) from exc

from sagewai.integrations.langgraph._agent import (
    make_memory_tools,
    make_recall_hook,
    make_recall_node,
    recall_text,
)
from sagewai.integrations.langgraph._items import (
    ITEM_TAG,
    check_filter,
    item_tag,
    item_text,
    matches_filter,
    namespace_tag,
)
from sagewai.integrations.langgraph._store import SagewaiStore

__all__ = [
    "ITEM_TAG",
    "SagewaiStore",
    "check_filter",
    "item_tag",
    "item_text",
    "make_memory_tools",
    "make_recall_hook",
    "make_recall_node",
    "matches_filter",
    "namespace_tag",
    "recall_text",
]
