"""AgentSettings: every tunable value of an agent, validated once when the agent is built.

The agent is built as ``UniversalAgent(name=..., context=ctx, settings=AgentSettings(...),
llm=..., tools=...)``; any field below may also be given by name to the agent itself (the seed's
``UniversalAgent(name=..., model="gpt-4o", context=ctx)``), which builds the settings from them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from pydantic import Field, field_validator

from sagewai.core._scope import validate_identifier
from sagewai.core._settings import Settings

__all__ = ["AgentOptions", "AgentSettings"]


class AgentSettings(Settings):
    """Which model an agent asks, and how much it recalls, remembers and may do in one turn.

    Example:
        >>> AgentSettings(max_steps=3).memory_token_budget
        1200
    """

    kind = "agent"

    model: str = "gpt-4o"
    """The litellm model of the default client (``"gpt-4o"``, ``"ollama/llama3"``,
    ``"openai/<alias>"`` with ``api_base`` for a local OpenAI-compatible server)."""
    api_base: str | None = None
    """Base URL of the default client's server."""
    system_prompt: str | None = None
    """Instructions; the memory block and the tool guide are added after them (``None``: a short
    default naming the agent)."""
    user_id: str | None = None
    """The default user of ``chat`` calls that name none."""
    token_counter: Callable[[str], int] | None = None
    """Counts tokens for the memory budget (``None``: an estimate of about four characters a
    token)."""

    max_steps: int = Field(default=5, ge=1, le=50)
    """Model calls per turn at most; the last one is sent without tools, so a turn always ends
    with an answer (1 means no tool use at all)."""
    memory_token_budget: int = Field(default=1200, ge=0, le=200_000)
    """Tokens the recalled-memory block may take in the system message (0: recall nothing)."""
    profile_tokens: int = Field(default=400, ge=0, le=50_000)
    """Tokens the standing profile section may take in every turn's system message (the user's
    instructions, identity and preferences, shown whatever the message is about; 0: off).
    About 15 entries of a typical length fit the default."""
    history_window: int = Field(default=20, ge=0, le=10_000)
    """Messages of the session's history shown to the model (whole tool exchanges only)."""
    recall_top_k: int = Field(default=10, ge=0, le=100)
    """Sources recalled per turn (search results: a message with its facts is one), before the
    token budget is applied."""
    episode_limit: int = Field(default=2, ge=0, le=50)
    """Past sessions recalled per turn."""
    graph_hops: int = Field(default=1, ge=0, le=2)
    """Hops of graph-aware fact ranking when the engine has a graph (0: off)."""
    graph_depth: int = Field(default=2, ge=1, le=2)
    """Hops walked from the entities a message names when recalling graph relations (nearest
    first), so "Caroline's sister's job" reaches ``Sara works_as nurse``."""
    max_relations: int = Field(default=10, ge=0, le=200)
    """Graph relations recalled per turn."""
    model_timeout: float | None = Field(default=None, gt=0)
    """Seconds one model call may take (``None``: the client's own timeout)."""
    tool_timeout: float = Field(default=30.0, gt=0)
    """Seconds one tool call may take before the model is told it timed out."""
    memory_tools: bool = True
    """Offer the model ``search_memory``, ``save_memory`` and ``forget_memory``."""
    learn: bool = True
    """Feed each turn to the memory bridge (facts) and the graph builder (relations)."""
    learn_from_answers: bool = True
    """Learn from the model's answers too, not only from what the user says (switch it off for a
    small model whose answers are not reliable enough to become memory)."""

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return None if value is None else validate_identifier(value, "user_id")


class AgentOptions(TypedDict, total=False):
    """The fields of :class:`AgentSettings`, accepted by name by ``UniversalAgent(...)``."""

    model: str
    api_base: str | None
    system_prompt: str | None
    user_id: str | None
    token_counter: Callable[[str], int] | None
    max_steps: int
    memory_token_budget: int
    profile_tokens: int
    history_window: int
    recall_top_k: int
    episode_limit: int
    graph_hops: int
    graph_depth: int
    max_relations: int
    model_timeout: float | None
    tool_timeout: float
    memory_tools: bool
    learn: bool
    learn_from_answers: bool
