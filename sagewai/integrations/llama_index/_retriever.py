"""``SagewaiRetriever``: a LlamaIndex retriever over a sagewai project.

Any LlamaIndex query engine, chat engine or agent tool built on a retriever reads sagewai's
memory this way: hybrid search (dense and keyword, fused, with recency and strength) at the
scope the retriever is bound to, each result a ``TextNode`` whose id is the fact's id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from sagewai._background import run_blocking
from sagewai.core import validate_identifier
from sagewai.core._records import Fact

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["SagewaiRetriever", "fact_node"]


def fact_node(fact: Fact) -> TextNode:
    """A fact as a LlamaIndex node: its text, its id, and the fields a reader filters on."""
    metadata: dict[str, Any] = {
        "fact_type": fact.fact_type.value,
        "kind": fact.kind.value,
        "scope": fact.scope.value,
        "created_at": fact.created_at.isoformat(),
    }
    for name in ("user_id", "session_id", "subject"):
        value = getattr(fact, name)
        if value is not None:
            metadata[name] = value
    return TextNode(id_=fact.id, text=fact.content, metadata=metadata)


class SagewaiRetriever(BaseRetriever):
    """Retrieve from a sagewai project (a user's and the project's memory, or a session's).

    Args:
        engine: The project's engine.
        user_id: Read this user's memory (and the project's); without it, the project's only.
        session_id: Read this session too (the narrowest scope).
        top_k: How many nodes a query returns.
        search_options: More :meth:`~sagewai.ContextEngine.search` arguments (``fact_types``,
            ``kinds``, ``tags``, ``as_of``, ``graph_hops``, ``min_score``).

    The synchronous ``retrieve`` runs the search on sagewai's background loop
    (:mod:`sagewai.sync`), so it also works inside a running loop (a notebook); use one engine
    either from synchronous calls or from a loop of your own, not both.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> engine = ContextEngine.in_memory(embedder=FakeEmbedder())
        >>> _ = asyncio.run(engine.add("Invoices are archived for 10 years"))
        >>> [n.node.get_content() for n in SagewaiRetriever(engine).retrieve("invoices")]
        ['Invoices are archived for 10 years']
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        top_k: int = 5,
        search_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")
        self.session_id = (
            None if session_id is None else validate_identifier(session_id, "session_id")
        )
        self.top_k = top_k
        self.search_options = dict(search_options or {})

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = await self.engine.search(
            query_bundle.query_str,
            self.top_k,
            user_id=self.user_id,
            session_id=self.session_id,
            **self.search_options,
        )
        return [NodeWithScore(node=fact_node(r.fact), score=r.score) for r in results]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return run_blocking(self._aretrieve(query_bundle))
