"""Agent parts for LangGraph: a recall pre-model hook, a recall node and memory tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["make_memory_tools", "make_recall_hook", "make_recall_node", "recall_text"]

# ------------------------------------------------------------------------------- agent parts


def _configured(config: RunnableConfig | None, key: str) -> str | None:
    configurable = (config or {}).get("configurable") or {}
    value = configurable.get(key)
    if value is None and key == "user_id":
        value = configurable.get("langgraph_user_id")
    return None if value is None else str(value)


def _last_user_text(messages: Sequence[AnyMessage]) -> str | None:
    for message in reversed(messages):
        if getattr(message, "type", None) == "human":
            content = message.content
            if isinstance(content, str):
                return content
            parts = [p.get("text", "") for p in content if isinstance(p, dict)]
            return " ".join(p for p in parts if p) or None
    return None


async def recall_text(
    engine: ContextEngine,
    query: str,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    top_k: int = 5,
    header: str = "What you remember (most relevant first):",
) -> str | None:
    """The memories relevant to ``query`` as a short block for a system message, or ``None``."""
    results = await engine.search(query, top_k=top_k, user_id=user_id, session_id=session_id)
    if not results:
        return None
    return "\n".join([header, *(f"- {r.fact.content}" for r in results)])


def make_recall_hook(
    engine: ContextEngine,
    *,
    top_k: int = 5,
    user_id_key: str = "user_id",
    session_id_key: str | None = "thread_id",
) -> Callable[[Mapping[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]:
    """A LangGraph pre-model hook: recall for the last user message, put it before the model.

    It returns ``{"llm_input_messages": [SystemMessage(memories), *messages]}``, which
    ``create_react_agent(..., pre_model_hook=...)`` sends to the model without changing the
    graph state. The user comes from ``config["configurable"][user_id_key]`` (or
    ``langgraph_user_id``), the session from ``session_id_key`` (the thread by default).
    """

    async def recall_hook(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages = list(state.get("messages", []))
        query = _last_user_text(messages)
        block = None
        if query and query.strip():
            block = await recall_text(
                engine,
                query[:4_000],
                user_id=_configured(config, user_id_key),
                session_id=_configured(config, session_id_key) if session_id_key else None,
                top_k=top_k,
            )
        prefix = [SystemMessage(content=block)] if block else []
        return {"llm_input_messages": [*prefix, *messages]}

    return recall_hook


def make_recall_node(
    engine: ContextEngine,
    *,
    top_k: int = 5,
    user_id_key: str = "user_id",
    output_key: str = "memories",
) -> Callable[[Mapping[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]:
    """A graph node that writes the recalled memories (texts, best first) to ``output_key``."""

    async def recall_node(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        query = _last_user_text(list(state.get("messages", [])))
        if not query or not query.strip():
            return {output_key: []}
        results = await engine.search(
            query[:4_000], top_k=top_k, user_id=_configured(config, user_id_key)
        )
        return {output_key: [r.fact.content for r in results]}

    return recall_node


def make_memory_tools(
    engine: ContextEngine, *, user_id_key: str = "user_id", top_k: int = 5
) -> list[BaseTool]:
    """Two tools for a LangGraph agent: ``remember`` a fact and ``recall_memories`` by query.

    Both act for the user named in the run's config (``configurable[user_id_key]``, or
    ``langgraph_user_id``); without one, memories are the project's.
    """

    async def remember(content: str, config: RunnableConfig) -> str:
        """Store one short fact worth remembering in later conversations."""
        fact = await engine.add(content, user_id=_configured(config, user_id_key))
        return f"remembered ({fact.id})"

    async def recall_memories(query: str, config: RunnableConfig) -> str:
        """Search long-term memory for facts relevant to the query."""
        text = await recall_text(
            engine, query, user_id=_configured(config, user_id_key), top_k=top_k
        )
        return text or "nothing remembered about that"

    return [
        StructuredTool.from_function(coroutine=remember, name="remember"),
        StructuredTool.from_function(coroutine=recall_memories, name="recall_memories"),
    ]
