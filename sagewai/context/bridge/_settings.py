"""BridgeSettings: every tunable value of a :class:`~sagewai.context.MemoryBridge`, in one place.

The bridge is built as ``MemoryBridge(ctx, settings=BridgeSettings(...), fact_extractor=...,
reconciler=...)``; any field below may also be given by name to the bridge itself (the seed's
``MemoryBridge(context_engine=ctx, extract_every_n_turns=5)``), which builds the settings from
them. Either way the values are validated once, when the bridge is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from pydantic import Field, field_validator

from sagewai.context.bridge._journal import FsyncPolicy
from sagewai.context.bridge._turns import CONTEXT_MESSAGE_CHARS
from sagewai.core._arguments import check_scope
from sagewai.core._scope import ContextScope, validate_identifier
from sagewai.core._settings import Settings

__all__ = ["BridgeOptions", "BridgeSettings"]


class BridgeSettings(Settings):
    """How a bridge extracts, journals and schedules (see :class:`~sagewai.context.MemoryBridge`).

    Example:
        >>> BridgeSettings(extract_every_n_turns=1).roles
        ('user', 'assistant')
        >>> BridgeSettings(scope="bogus")
        Traceback (most recent call last):
        ...
        sagewai.errors.ScopeError: invalid bridge settings: scope: ...
    """

    kind = "bridge"

    model: str = "gpt-4o-mini"
    """The model of the default extractor (when no ``fact_extractor`` is given, a
    ``HybridFactExtractor`` whose model part falls back to the rules offline)."""
    extract_every_n_turns: int = Field(default=5, ge=1, le=10_000)
    """How often the deferred extraction stage (a model) runs: turns it must read wait per
    session and are extracted together, each with the turns before it as context. Every message
    is stored verbatim, and the extractor's at-once facts of it, whatever this is."""
    user_id: str | None = None
    """Default user of the conversations: facts go to that user's scope, so they are recalled in
    the user's later sessions. ``None`` stores project-wide facts."""
    scope: ContextScope | None = None
    """Force the scope of stored facts (``"session"`` for session-local facts)."""
    roles: tuple[str, ...] = ("user", "assistant")
    """Message roles facts are extracted from (system prompts and tool output are not what a
    user said)."""
    context_turns: int = Field(default=6, ge=0, le=1_000)
    """How many earlier turns each extraction sees."""
    echo_threshold: float = Field(default=0.85, ge=0.0, le=1.0)
    """Cosine at or above which an assistant's fact restates what memory holds (or what the agent
    was shown, see ``note_recalled``) and is not stored again."""
    journal: bool = True
    """``False`` switches the default write-ahead journal off (accepted messages then wait for
    their extraction in memory only)."""
    journal_path: Path | None = None
    """The write-ahead journal (crash safety). ``None``: in the engine's folder when it has one
    (``ContextEngine.local``), else no journal."""
    fsync: FsyncPolicy = "interval"
    """The journal's durability policy (``always``, ``interval``, ``never``)."""
    queue_size: int = Field(default=10_000, ge=1)
    """Most messages accepted by ``submit`` but not yet taken by the workers."""
    workers: int = Field(default=2, ge=1, le=64)
    """Batches extracted and written concurrently in the background."""
    submit_timeout: float = Field(default=5.0, ge=0.0)
    """Seconds ``submit`` waits for room in a full queue before it raises
    :class:`~sagewai.errors.SagewaiTimeoutError` (0 fails at once)."""
    idle_flush_seconds: float = Field(default=30.0, gt=0.0)
    """A session's waiting turns are extracted after this long without a new turn (background
    mode), so a conversation that stops mid-batch is not left waiting."""
    save_episodes: bool = True
    """Save each conversation given to ``bridge_conversation`` as an episode when the engine has
    an episode store."""
    context_records: bool = True
    """Store, beside each message up to ``context_max_chars``, a context record: the message with
    the end of the turn before it (what it answers), searchable as the message's own source.
    With them the bridge's R@10 on LoCoMo dev is 0.788 against 0.755 for the raw messages
    (``docs/benchmarks-beam.md``); ``False`` stores the messages and facts only."""
    context_max_chars: int = Field(default=CONTEXT_MESSAGE_CHARS, ge=0)
    """The longest message that gets a context record."""
    context_after: tuple[str, ...] | None = None
    """Roles of the turn before a message that give it a context record (``None``: every role of
    ``roles``). ``("user",)`` adds what another user said before a message, not the end of an
    assistant's reply, which in a user-assistant chat is mostly a closing line."""
    share_vectors: bool = True
    """Embed each message once: the fact that restates it, and its context record when that
    holds the whole turn before it, take vectors made of the message's (and the turn before's)
    instead of embedding their own text, and a text met again is not embedded again
    (``docs/bridge.md``, "One embedding per message"): about 1.4 texts a LoCoMo turn instead of
    2.4. ``False`` embeds every record's own text."""

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return None if value is None else validate_identifier(value, "user_id")

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: object) -> ContextScope | None:
        return check_scope(value)

    @field_validator("roles", "context_after", mode="before")
    @classmethod
    def _roles(cls, value: object) -> tuple[str, ...] | None:
        if value is None:
            return None
        if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
            raise ValueError(f"a list of role names is needed, got {type(value).__name__}")
        if not all(isinstance(role, str) and role.strip() for role in value):
            raise ValueError("every role must be a non-empty string")
        return tuple(dict.fromkeys(role.strip().lower() for role in value))

    @property
    def context_roles(self) -> frozenset[str]:
        """The roles of a turn before a message that give the message a context record."""
        return frozenset(self.roles if self.context_after is None else self.context_after)


class BridgeOptions(TypedDict, total=False):
    """The fields of :class:`BridgeSettings`, accepted by name by ``MemoryBridge(...)``."""

    model: str
    extract_every_n_turns: int
    user_id: str | None
    scope: ContextScope | str | None
    roles: Sequence[str]
    context_turns: int
    echo_threshold: float
    journal: bool
    journal_path: str | Path | None
    fsync: FsyncPolicy
    queue_size: int
    workers: int
    submit_timeout: float
    idle_flush_seconds: float
    save_episodes: bool
    context_records: bool
    context_max_chars: int
    context_after: Sequence[str] | None
    share_vectors: bool
