"""The tunable numbers of an agent, validated once when the agent is built."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentSettings"]


class AgentSettings(BaseModel):
    """How much an agent recalls, remembers and may do in one turn.

    Example:
        >>> AgentSettings(max_steps=3).memory_token_budget
        1200
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=5, ge=1, le=50)
    """Model calls per turn at most; the last one is sent without tools, so a turn always ends
    with an answer (1 means no tool use at all)."""
    memory_token_budget: int = Field(default=1200, ge=0, le=200_000)
    """Tokens the recalled-memory block may take in the system message (0: recall nothing)."""
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
