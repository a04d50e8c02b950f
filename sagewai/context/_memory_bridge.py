"""The public class: :class:`MemoryBridge` and its blocking API (``process_message``,
``remember``, ``bridge_conversation``); see :mod:`sagewai.context._bridge` for the whole design.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sagewai.context._bridge_background import BackgroundBridge
from sagewai.context.bridge._turns import FACT_NAMESPACE, RECORD_DRAIN
from sagewai.core._conversation import Conversation, MessageLike
from sagewai.core._records import (
    new_id,
)
from sagewai.errors import (
    ConfigurationError,
)

if TYPE_CHECKING:
    from sagewai.extraction._base import (
        ExtractedFact,
    )


__all__ = ["MemoryBridge"]


class MemoryBridge(BackgroundBridge):
    """Turns conversation turns into reconciled, provenance-carrying facts.

    Args:
        context_engine: Where facts are stored (and its ``episode_store``, if any, gets whole
            conversations from :meth:`bridge_conversation`).
        model: The model of the default LLM extractor (when ``fact_extractor`` is omitted, a
            ``HybridFactExtractor`` whose LLM part falls back to the rules offline).
        extract_every_n_turns: How often the expensive extractor runs: turns it must read are
            buffered per session and extracted together (each with the turns before it as
            context). Every message is stored verbatim, and a rule extractor's facts of it
            (a ``RuleBasedFactExtractor``, or the rules of a ``HybridFactExtractor``), at once.
        fact_extractor: Any :class:`~sagewai.intelligence.FactExtractor`.
        user_id: Default user of the conversations: facts go to that user's scope, so they are
            recalled in the user's later sessions. ``None`` stores project-wide facts.
        scope: Force the scope of stored facts (e.g. ``"session"`` for session-local facts).
        reconciler: ADD / UPDATE / NOOP judge (rules by default; ``LLMReconciler(client)``).
        roles: Message roles facts are extracted from (system prompts and tool output are not
            what a user said).
        context_turns: How many earlier turns each extraction sees.
        echo_threshold: Cosine at or above which an assistant's fact restates what memory holds
            (or what the agent was shown, see :meth:`note_recalled`) and is not stored again.
        journal_path: The write-ahead journal (crash safety). ``None`` (default): in the
            engine's folder when it has one (``ContextEngine.local``), else no journal.
        journal: ``False`` switches the default journal off (accepted messages then wait for
            their extraction in memory only).
        fsync: The journal's durability policy (see :mod:`sagewai.context.bridge._journal`).
        queue_size: Most messages accepted but not yet taken by the workers.
        workers: Batches extracted and written concurrently in the background.
        submit_timeout: Seconds :meth:`submit` waits for room in a full queue before it raises
            :class:`~sagewai.errors.SagewaiTimeoutError` (0 fails at once).
        idle_flush_seconds: A session's buffered turns are extracted after this long without a
            new turn (background mode), so a conversation that stops mid-buffer is not left
            waiting.
        save_episodes: Save each conversation given to :meth:`bridge_conversation` as an episode
            when the engine has an ``episode_store``.
        context_records: Store, beside each message up to 1,000 characters, a context record:
            the message with the end of the turn before it (what it answers), searchable as the
            message's own source. With them the bridge's R@10 on LoCoMo dev is 0.788 against
            0.755 for the raw messages (``docs/benchmarks-beam.md``); ``False`` stores the
            messages and facts only.
        context_max_chars: The longest message that gets a context record (1,000 characters).
        context_after: Roles of the turn before a message that give it a context record
            (``None``: every role of ``roles``). ``("user",)`` adds what another user said
            before a message, not the end of an assistant's reply, which in a user-assistant
            chat is mostly a closing line while the user's next message is a new request.

    Example:
        >>> import asyncio
        >>> from sagewai.context._engine import ContextEngine
        >>> from sagewai.extraction._rules import RuleBasedFactExtractor
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ...         bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=1,
        ...                               fact_extractor=RuleBasedFactExtractor())
        ...         await bridge.process_message("I moved to Berlin.", session_id="s1",
        ...                                      user_id="alice")
        ...         found = await ctx.search("where does the user live", user_id="alice")
        ...         return sorted({f.content for r in found for f in (r.fact, *r.related)})
        >>> asyncio.run(demo())  # the message, verbatim, and the fact drawn from it
        ['I moved to Berlin.', 'The user moved to Berlin.']
    """

    # ------------------------------------------------------------------ the blocking API

    async def process_message(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> list[ExtractedFact]:
        """Store one turn verbatim with its rule facts; extract the buffer when it is full.

        When this returns the message is durable (journaled, and its verbatim record stored)
        and searchable. Turns the expensive extractor must read wait in the session's buffer
        until ``extract_every_n_turns`` of them are there (or :meth:`flush`).

        Args:
            message: Text, an OpenAI-style dict or a :class:`ChatMessage` (whose own role wins).
            role: The role of a plain-text message.
            session_id: The conversation (the bridge's default session when omitted).
            tags: Tags stored on the facts of this turn.
            user_id: Overrides the bridge's default user for this turn.

        Returns:
            The facts extracted by this call: the rules' facts of this turn, and those of the
            whole buffered batch when this turn completed it.

        Raises:
            InvalidInputError: a malformed message or identifier.
            BackendError: the store failed (nothing of the batch was written).

        Example:
            >>> async def chat(bridge: MemoryBridge) -> None:
            ...     await bridge.process_message({"role": "user", "content": "I prefer tea"},
            ...                                  session_id="s1")
            ...     await bridge.flush("s1")
        """
        turn = self._turn(message, role=role, session_id=session_id, user_id=user_id, tags=tags)
        await self._open_journal()
        self._accept(turn)
        pendings, extracted = await self._record([turn])
        state = self._session(turn.session_id)
        if not self._buffer(pendings):
            return extracted
        async with state.lock:
            batch, state.buffer = state.buffer, []
            later, _ = await self._extract_batch(batch)
            self._finish(batch)
        return extracted + later

    async def remember(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> str:
        """Store one turn verbatim with its rule facts now; extract the rest in the background.

        What an agent loop calls after each turn: when this returns the message is durable and
        recallable by the next turn (and by ``MemoryConsolidator``), while the expensive
        extractor runs in the background every ``extract_every_n_turns`` turns. Returns the
        message id.

        Raises:
            InvalidInputError: a malformed message (nothing accepted).
            BackendError: the store failed (a journaled message is replayed by the next start).
        """
        if not self._started:
            await self.start()
        if self._closing:
            raise ConfigurationError("the bridge is closing; no message is accepted")
        turn = self._turn(message, role=role, session_id=session_id, user_id=user_id, tags=tags)
        self._accept(turn)
        pendings, _ = await self._record([turn])
        for sid in self._buffer(pendings):
            await self._dispatch(sid)
        return turn.message_id

    async def bridge_conversation(
        self, conversation: Conversation | Sequence[MessageLike], tags: Sequence[str] | None = None
    ) -> int:
        """Store a whole conversation (verbatim and extracted); return how many facts were stored.

        Turns are processed ``extract_every_n_turns`` at a time, each with the turns before it as
        context; a message without an id gets ``turn-<index>``, so bridging the same
        conversation (same ``session_id``) again stores nothing twice. The count is the new fact
        records written (added or updated; verbatim message records are not counted); repeats
        that reinforced a fact are not counted. When the engine has an ``episode_store``, the
        conversation is also saved as an episode.

        Example:
            >>> async def ingest(bridge: MemoryBridge) -> int:
            ...     return await bridge.bridge_conversation(
            ...         Conversation.of([{"role": "user", "content": "I work at Initech"}],
            ...                         session_id="s1", user_id="bob"))
        """
        chat = Conversation.coerce(conversation)
        session_id = chat.session_id or new_id()
        user_id = chat.user_id if chat.user_id is not None else self.user_id
        turns = [
            self._turn(
                message,
                role=None,
                session_id=session_id,
                user_id=user_id,
                tags=tags,
                turn_index=index,
                message_id=message.id or f"turn-{index}",
            )
            for index, message in enumerate(chat.messages)
        ]
        await self._open_journal()
        keep_episode = self.save_episodes and self.engine.episodes.enabled and bool(chat.messages)
        if keep_episode:
            # All or nothing: an episode that would be refused fails before any fact is written.
            self.engine.episodes.check(
                session_id, list(chat.messages), dict(chat.metadata), user_id=user_id
            )
        self.stats.messages_accepted += len(turns)
        state = self._session(session_id)
        before = self._stored
        async with state.lock:
            pending, state.buffer = state.buffer, []
            await self._extract_batch(pending)
            self._finish(pending)
            # Each batch is recorded, then extracted, before the next (the model's facts of a
            # turn are reconciled before later turns' facts). An extractor with no batch stage
            # (the rules) records many turns per write: one embedding call and one commit.
            step = RECORD_DRAIN if self._rules_only else self.extract_every_n_turns
            for start in range(0, len(turns), step):
                recorded, _ = await self._record(turns[start : start + step])
                await self._extract_batch(recorded)
                self.stats.messages_processed += len(recorded)
        stored = self._stored - before
        if keep_episode:
            await self.engine.episodes.save(
                session_id,
                list(chat.messages),
                metadata=dict(chat.metadata),
                user_id=user_id,
                episode_id=str(
                    uuid.uuid5(FACT_NAMESPACE, f"{self.engine.project_id}\x1f{session_id}")
                ),
            )
        return stored
