"""Agent parts for LangGraph: recall before the model (middleware, node, hook) and memory tools.

Where recall goes depends on how the agent is built:

* ``langchain.agents.create_agent(..., middleware=[SagewaiRecallMiddleware(engine)])``: the
  middleware adds the memories to the system message of every model call (the state does not
  change). This replaces ``create_react_agent(..., pre_model_hook=...)``, deprecated since
  LangGraph 1.0.
* A graph of your own: :func:`make_recall_hook` as a node before the model node (it writes
  ``llm_input_messages``, the messages to send), or :func:`make_recall_node` (it writes the
  recalled texts to a state key).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config

from sagewai._background import run_blocking
from sagewai.agent._recall import changed_note, later_note, rested_note
from sagewai.integrations._user_memory import user_of

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = [
    "SagewaiRecallMiddleware",
    "make_memory_tools",
    "make_recall_hook",
    "make_recall_node",
    "recall_text",
]

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
    """The memories relevant to ``query`` as a short block for a system message, or ``None``.

    A memory whose claim changed since, or that rested on a claim that changed, says so on its
    line (the agent's own block does the same): an old value is never shown as current.
    """
    results = await engine.search(query, top_k=top_k, user_id=user_id, session_id=session_id)
    if not results:
        return None
    lines = [header]
    for result in results:
        notes = [changed_note(c) for c in result.changes]
        notes += [rested_note(c) for c in result.rested_on]
        notes += [later_note(f) for f in result.later]
        lines.append(f"- {result.fact.content}" + (f" ({'; '.join(notes)})" if notes else ""))
    return "\n".join(lines)


def make_recall_hook(
    engine: ContextEngine,
    *,
    top_k: int = 5,
    user_id_key: str = "user_id",
    session_id_key: str | None = "thread_id",
) -> Callable[[Mapping[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]:
    """A LangGraph pre-model hook: recall for the last user message, put it before the model.

    It returns ``{"llm_input_messages": [SystemMessage(memories), *messages]}``: run it as the
    node before your model node, which sends those messages (the graph's ``messages`` do not
    change). For ``langchain.agents.create_agent`` use :class:`SagewaiRecallMiddleware`. The
    user comes from ``config["configurable"][user_id_key]`` (or
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


class SagewaiRecallMiddleware(AgentMiddleware[Any, Any, Any]):
    """Recall before every model call of a ``langchain.agents.create_agent`` agent.

    The memories relevant to the last user message (the user's and the project's) are added to
    the model call's system message; the agent's state does not change. The user comes from the
    agent's context (``context={"user_id": ...}``, or a context object with that attribute),
    else from ``config["configurable"]`` (``user_id`` or ``langgraph_user_id``); the session
    from ``configurable[session_id_key]`` (the thread by default).

    Args:
        engine: The project's engine.
        top_k: How many memories a call gets.
        user_id_key: The context / configurable key naming the user.
        session_id_key: The configurable key naming the session (``None``: none).

    Example:
        >>> from sagewai import ContextEngine
        >>> SagewaiRecallMiddleware(ContextEngine.in_memory()).name
        'SagewaiRecallMiddleware'
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        top_k: int = 5,
        user_id_key: str = "user_id",
        session_id_key: str | None = "thread_id",
    ) -> None:
        super().__init__()
        self.engine = engine
        self.top_k = top_k
        self.user_id_key = user_id_key
        self.session_id_key = session_id_key

    def _identity(self, request: ModelRequest[Any]) -> tuple[str | None, str | None]:
        try:
            config: RunnableConfig | None = get_config()
        except RuntimeError:
            config = None
        runtime = getattr(request, "runtime", None)
        user = user_of(getattr(runtime, "context", None), key=self.user_id_key)
        user = user or _configured(config, self.user_id_key)
        session = _configured(config, self.session_id_key) if self.session_id_key else None
        return user, session

    async def _with_memories(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        query = _last_user_text(request.messages)
        if not query or not query.strip():
            return request
        user, session = self._identity(request)
        block = await recall_text(
            self.engine, query[:4_000], user_id=user, session_id=session, top_k=self.top_k
        )
        if block is None:
            return request
        current = request.system_message
        text = block if current is None else f"{current.text}\n\n{block}"
        return request.override(system_message=SystemMessage(content=text))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Add the memories to the request, then call the model."""
        return await handler(await self._with_memories(request))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """The same for a synchronous agent (the search runs on sagewai's background loop)."""
        return handler(run_blocking(self._with_memories(request)))
