"""OpenAI Agents SDK on sagewai memory: a ``Session`` store and memory tools.

Why: agents built with the OpenAI Agents SDK (``openai-agents``) keep their conversation in a
``Session`` and act through function tools. :class:`SagewaiSession` keeps each session's items
in sagewai (per user, per session, audited, searchable, optionally learning facts through a
:class:`~sagewai.context.MemoryBridge`), and :func:`memory_tools` gives an agent
``search_memory``, ``remember`` and ``forget_memory`` over the run's user's long-term memory.

Turn off the SDK's trace export where nothing may leave the machine:
``OPENAI_AGENTS_DISABLE_TRACING=1`` (or ``agents.set_tracing_disabled(True)``).

Needs the ``openai-agents`` extra: ``pip install "sagewai[openai-agents]"``.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import agents  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        "openai-agents", "openai-agents", "sagewai.integrations.openai_agents"
    ) from exc

from sagewai.integrations.openai_agents._session import (
    SESSION_ITEM_TAG,
    SagewaiSession,
    conversation_item_text,
)
from sagewai.integrations.openai_agents._tools import memory_tools

__all__ = ["SESSION_ITEM_TAG", "SagewaiSession", "conversation_item_text", "memory_tools"]
