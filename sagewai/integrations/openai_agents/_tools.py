"""Memory tools for an OpenAI Agents SDK agent: search, remember and forget, per user.

The user is the one the run names: ``Runner.run(agent, text, context={"user_id": "maya"})`` (or
any context object with a ``user_id`` attribute), or ``user_id=`` fixed when the tools are made.
A run that names no user gets a refusal from the tool, never another user's memories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents import FunctionTool, RunContextWrapper, function_tool

from sagewai.errors import InvalidInputError, SagewaiError
from sagewai.integrations._user_memory import (
    FORGET_DOC,
    REMEMBER_DOC,
    SEARCH_DOC,
    UserMemories,
    user_of,
)

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["memory_tools"]


def memory_tools(
    engine: ContextEngine, *, user_id: str | None = None, user_key: str = "user_id", top_k: int = 5
) -> list[FunctionTool]:
    """Three function tools (``search_memory``, ``remember``, ``forget_memory``) for one agent.

    Args:
        engine: The project's engine.
        user_id: A fixed user for every run; otherwise each run's context names it.
        user_key: The key (or attribute) of the run context holding the user id.
        top_k: How many memories a search returns.

    Example:
        >>> from sagewai import ContextEngine
        >>> [tool.name for tool in memory_tools(ContextEngine.in_memory())]
        ['search_memory', 'remember', 'forget_memory']
    """
    memories = UserMemories(engine, top_k=top_k)

    def user(ctx: RunContextWrapper[Any]) -> str | None:
        named = user_of(ctx.context, key=user_key)
        if user_id is not None and named is not None and named != user_id:
            raise InvalidInputError(f"these tools act for {user_id!r}, the run names {named!r}")
        return user_id if user_id is not None else named

    def refusal(exc: SagewaiError) -> str:
        return f"memory unavailable: {exc}"

    async def search_memory(ctx: RunContextWrapper[Any], query: str) -> str:
        try:
            return await memories.search(user(ctx), query)
        except SagewaiError as exc:
            return refusal(exc)

    async def remember(ctx: RunContextWrapper[Any], content: str) -> str:
        try:
            return await memories.remember(user(ctx), content)
        except SagewaiError as exc:
            return refusal(exc)

    async def forget_memory(ctx: RunContextWrapper[Any], memory_id: str) -> str:
        try:
            return await memories.forget(user(ctx), memory_id)
        except SagewaiError as exc:
            return refusal(exc)

    return [
        function_tool(search_memory, description_override=SEARCH_DOC),
        function_tool(remember, description_override=REMEMBER_DOC),
        function_tool(forget_memory, description_override=FORGET_DOC),
    ]
