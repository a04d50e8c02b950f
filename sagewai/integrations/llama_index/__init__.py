"""LlamaIndex on sagewai memory: a memory block for ``Memory`` and a retriever over a project.

Why: LlamaIndex agents and chat engines keep the recent chat in ``llama_index.core.memory.Memory``
and read knowledge through retrievers. :class:`SagewaiMemoryBlock` is a long-term memory block of
that ``Memory`` (recalled from sagewai for each turn, fed with the messages that leave the short
window), and :class:`SagewaiRetriever` reads a project's facts, messages and documents with
sagewai's hybrid search, per user.

Needs the ``llama-index`` extra: ``pip install "sagewai[llama-index]"``.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        "llama-index-core", "llama-index", "sagewai.integrations.llama_index"
    ) from exc

from sagewai.integrations.llama_index._memory_block import SagewaiMemoryBlock, message_text
from sagewai.integrations.llama_index._retriever import SagewaiRetriever, fact_node

__all__ = ["SagewaiMemoryBlock", "SagewaiRetriever", "fact_node", "message_text"]
