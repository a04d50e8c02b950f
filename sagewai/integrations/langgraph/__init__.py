"""LangGraph on sagewai memory: a ``BaseStore``, a recall hook and memory tools.

Why: agent builders already write LangGraph graphs and LangMem managers against LangGraph's
``BaseStore``. :class:`SagewaiStore` is that store over a :class:`ContextEngine`, so
``graph.compile(store=SagewaiStore(engine))`` gives every node sagewai's hybrid search, scopes,
audit history and forgetting, and what a graph stores is recalled by sagewai's own agent too.

How namespaces map onto scopes, one rule, first match wins (``user_namespaces``,
``session_namespaces`` and ``user_id_keys`` set the labels and keys):

1. ``("users", user_id, ...)``: the USER scope of ``user_id`` (read in all their sessions);
   ``("sessions", session_id, ...)``: the SESSION scope of ``session_id``.
2. Inside a LangGraph run whose config names its user (``configurable["langgraph_user_id"]``,
   else ``configurable["user_id"]``), a namespace holding that user's id as any label is that
   user's: ``("profile", "{langgraph_user_id}")``, ``("memories", "{org_id}", "{user_id}")``.
3. A namespace that already holds items keeps their scope, so a script writing outside a run
   lands where the graph's writes did.
4. Anything else is the project's, shared: ``("docs", "faq")``, ``("memories", "team_a")``.

Inside a run for a user, reads never return another user's items, and a write into a
namespace that belongs to another user is refused (:class:`~sagewai.errors.InvalidInputError`).
Reads find an item by its namespace and key wherever it is stored, inside a run or outside one.

Each item is one fact: its text (the value's ``content``/``text``/``memory`` string, the fields
named by ``index``, or the value as JSON) is embedded and keyword-indexed; with ``index=False``
the fact holds only the item's address, so the value's text is found by no search (``get`` and
listing still return it). The value, namespace and key ride in ``fact.metadata["langgraph"]``;
tags mark the item and every prefix of its namespace. A ``put`` over an existing key supersedes
the old fact (its history stays, and ``engine.search(..., as_of=...)`` still finds what was
believed then); ``delete`` deletes every version with an audit tombstone.

The user's standing profile (``ctx.profile(user_id=...)``: their instructions, identity and
preferences, which ``UniversalAgent`` shows in every turn) is the namespace ``("standing",
user_id)``, and the project's team rules ``("standing",)``: ``asearch`` lists the entries,
``aget`` reads one by its id, ``aput`` with ``{"content": ..., "kind": "instruction"}`` sets one
(an instruction replaces one about the same aspect; a key naming an entry replaces it) and
``adelete`` removes one. Entries are keyed by their ids. LangMem's ``("profile", user_id)``
items stay ordinary items.

TTL is decay: a ``ttl`` (minutes) is the item's life without use. Its weight in searches fades
from 1 to :data:`TTL_FLOOR` over the TTL (``refresh_ttl`` on read starts it again); once it
has run out the item is left out of reads, and :meth:`SagewaiStore.sweep_expired` archives it
as decay archives a faded fact (kept with its history, restorable). Consolidation's own decay
applies to items like to any fact.

Needs the ``langgraph`` extra: ``pip install "sagewai[langgraph]"``.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import langchain.agents.middleware  # noqa: F401
    import langchain_core  # noqa: F401
    import langgraph.store.base  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        exc.name or "langgraph", "langgraph", "sagewai.integrations.langgraph"
    ) from exc

from sagewai.integrations.langgraph._agent import (
    SagewaiRecallMiddleware,
    make_memory_tools,
    make_recall_hook,
    make_recall_node,
    recall_text,
)
from sagewai.integrations.langgraph._items import (
    ITEM_TAG,
    TTL_FLOOR,
    UNINDEXED_TAG,
    check_filter,
    item_tag,
    item_text,
    matches_filter,
    namespace_tag,
    ttl_weight,
)
from sagewai.integrations.langgraph._store import SagewaiStore

__all__ = [
    "ITEM_TAG",
    "TTL_FLOOR",
    "UNINDEXED_TAG",
    "SagewaiRecallMiddleware",
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
    "ttl_weight",
]
