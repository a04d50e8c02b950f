"""MemoryBridge: conversation turns in, reconciled facts (and episodes) out.

The bridge is where an agent's conversation becomes memory. For each session it buffers turns,
extracts facts from every turn with the turns before it as context (``extract_every_n_turns``
turns at a time, so no turn is skipped), gives each fact its provenance (session, message id,
turn index, role, speaker, time, extractor), reconciles it with what the scope already holds
(ADD / UPDATE / NOOP, see :mod:`sagewai.context.reconcile`) and writes it atomically.

Two ways in:

* ``await bridge.process_message(...)`` / ``await bridge.bridge_conversation(...)`` do the work
  before they return (the facts are searchable right after).
* ``await bridge.submit(...)`` returns as soon as the message is accepted (well under a
  millisecond): a bounded queue feeds background workers. With ``journal_path`` every accepted
  message is first appended to a write-ahead journal (:mod:`sagewai.context.journal`), so a
  crash loses nothing: a bridge restarted on the same journal replays what was accepted but not
  stored. Fact ids are deterministic (``uuid5(project, session, message id, index)``), so a
  replay of work that did land changes nothing. When the queue is full, ``submit`` waits up to
  ``submit_timeout`` seconds for room and then raises :class:`~sagewai.errors.SagewaiTimeoutError`
  (the message is then *not* accepted: nothing is journaled). ``flush()`` waits until everything
  accepted so far is stored; ``aclose()`` flushes and stops the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sagewai.context.arguments import string_list
from sagewai.context.conversation import ChatMessage, Conversation, MessageLike
from sagewai.context.journal import FsyncPolicy, JournalEntry, WriteAheadJournal
from sagewai.context.reconcile import Candidate, Reconciler, ReconcilingWriter, WriteOutcome
from sagewai.context.scope import ContextScope, validate_identifier
from sagewai.errors import (
    BackendError,
    ConfigurationError,
    InvalidInputError,
    SagewaiRuntimeError,
    SagewaiTimeoutError,
)
from sagewai.records import Fact, Provenance, new_id, utcnow

if TYPE_CHECKING:
    from sagewai.context.engine import ContextEngine
    from sagewai.intelligence.extraction.base import (
        ExtractedFact,
        ExtractionContext,
        FactExtractor,
    )

__all__ = ["BridgeStats", "BridgeTurn", "MemoryBridge", "fact_id_for"]

logger = logging.getLogger("sagewai.context.bridge")

_FACT_NAMESPACE = uuid.UUID("6f1c1f4e-8a43-5b0e-9d52-2f0f3c1d7a10")
_EXTRACTION_ROLES = {"user", "assistant", "system", "tool"}
_ROLE_FOR_EXTRACTION = {"developer": "system", "function": "tool"}
_MAX_SESSIONS = 10_000
_RETRY_DELAYS = (0.1, 0.5, 2.0)


def fact_id_for(project_id: str, session_id: str, message_id: str, index: int) -> str:
    """The deterministic id of the ``index``-th fact extracted from one message.

    Replaying a message gives the same ids, so a replay upserts instead of duplicating.

    Example:
        >>> fact_id_for("p", "s1", "m1", 0) == fact_id_for("p", "s1", "m1", 0)
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, str(index)))
    return str(uuid.uuid5(_FACT_NAMESPACE, name))


class BridgeTurn(BaseModel):
    """An accepted message with everything needed to process it later (what the journal keeps)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: ChatMessage
    session_id: str
    user_id: str | None = None
    message_id: str
    turn_index: int = Field(ge=0)
    received_at: datetime
    tags: tuple[str, ...] = ()

    @property
    def timestamp(self) -> datetime:
        """When the message was said: its own timestamp, else when the bridge received it."""
        return self.message.timestamp or self.received_at

    @property
    def entry_id(self) -> str:
        """The journal id: one per (session, message)."""
        return f"{self.session_id}\x1f{self.message_id}"


@dataclass(slots=True)
class BridgeStats:
    """Counters of what the bridge did since it was created."""

    messages_accepted: int = 0
    messages_processed: int = 0
    messages_replayed: int = 0
    facts_extracted: int = 0
    facts_added: int = 0
    facts_updated: int = 0
    facts_reinforced: int = 0
    echoes_suppressed: int = 0
    already_stored: int = 0
    facts_invalid: int = 0
    extraction_failures: int = 0
    batches_failed: int = 0


@dataclass(slots=True)
class _Session:
    buffer: list[BridgeTurn] = field(default_factory=list)
    history: deque[tuple[str, str, str | None]] = field(default_factory=lambda: deque(maxlen=32))
    next_turn: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_seen: float = field(default_factory=time.monotonic)
    user_speaker: str | None = None
    recalled: deque[str] = field(default_factory=lambda: deque(maxlen=200))


def _default_extractor(model: str) -> FactExtractor:
    """Rules everywhere, ``model`` where they are unsure, the rules again when it is offline."""
    from sagewai.intelligence.extraction import (
        HybridFactExtractor,
        LLMFactExtractor,
        RuleBasedFactExtractor,
    )

    rules = RuleBasedFactExtractor()
    return HybridFactExtractor(
        rule_extractor=rules, llm_extractor=LLMFactExtractor(model=model, fallback=rules)
    )


class MemoryBridge:
    """Turns conversation turns into reconciled, provenance-carrying facts.

    Args:
        context_engine: Where facts are stored (and its ``episode_store``, if any, gets whole
            conversations from :meth:`bridge_conversation`).
        model: The model of the default LLM extractor (when ``fact_extractor`` is omitted, a
            ``HybridFactExtractor`` whose LLM part falls back to the rules offline).
        extract_every_n_turns: Turns buffered per session before they are extracted together
            (each with the turns before it as context). 1 extracts every turn at once.
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
        journal_path: Write-ahead journal of :meth:`submit` (crash safety); ``None`` keeps
            accepted messages in memory only.
        fsync: The journal's durability policy (see :mod:`sagewai.context.journal`).
        queue_size: Most messages accepted but not yet taken by the workers.
        workers: Batches extracted and written concurrently in the background.
        submit_timeout: Seconds :meth:`submit` waits for room in a full queue before it raises
            :class:`~sagewai.errors.SagewaiTimeoutError` (0 fails at once).
        idle_flush_seconds: A session's buffered turns are extracted after this long without a
            new turn (background mode), so a conversation that stops mid-buffer is not left
            waiting.
        save_episodes: Save each conversation given to :meth:`bridge_conversation` as an episode
            when the engine has an ``episode_store``.

    Example:
        >>> import asyncio
        >>> from sagewai.context.engine import ContextEngine
        >>> from sagewai.intelligence.extraction.rules import RuleBasedFactExtractor
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ...         bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=1,
        ...                               fact_extractor=RuleBasedFactExtractor())
        ...         await bridge.process_message("I moved to Berlin.", session_id="s1",
        ...                                      user_id="alice")
        ...         found = await ctx.search("where does the user live", user_id="alice")
        ...         return [r.fact.content for r in found]
        >>> asyncio.run(demo())
        ['The user moved to Berlin.']
    """

    def __init__(
        self,
        *,
        context_engine: ContextEngine,
        model: str = "gpt-4o-mini",
        extract_every_n_turns: int = 5,
        fact_extractor: FactExtractor | None = None,
        user_id: str | None = None,
        scope: ContextScope | str | None = None,
        reconciler: Reconciler | None = None,
        roles: Sequence[str] = ("user", "assistant"),
        context_turns: int = 6,
        echo_threshold: float = 0.85,
        journal_path: str | Path | None = None,
        fsync: FsyncPolicy = "interval",
        queue_size: int = 10_000,
        workers: int = 2,
        submit_timeout: float = 5.0,
        idle_flush_seconds: float = 30.0,
        save_episodes: bool = True,
    ) -> None:
        if extract_every_n_turns < 1:
            raise ConfigurationError("extract_every_n_turns must be at least 1")
        if queue_size < 1 or workers < 1:
            raise ConfigurationError("queue_size and workers must be at least 1")
        if submit_timeout < 0 or idle_flush_seconds <= 0 or context_turns < 0:
            raise ConfigurationError(
                "submit_timeout and context_turns must not be negative, idle_flush_seconds > 0"
            )
        self.engine = context_engine
        self.model = model
        self.extract_every_n_turns = extract_every_n_turns
        self.fact_extractor: FactExtractor = fact_extractor or _default_extractor(model)
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")
        self.scope = None if scope is None else ContextScope(scope)
        self.roles = frozenset(role.lower() for role in roles)
        self.context_turns = context_turns
        self.writer = ReconcilingWriter(
            context_engine, reconciler=reconciler, echo_threshold=echo_threshold
        )
        self.journal = (
            None if journal_path is None else WriteAheadJournal(journal_path, fsync=fsync)
        )
        self.queue_size = queue_size
        self.workers = workers
        self.submit_timeout = submit_timeout
        self.idle_flush_seconds = idle_flush_seconds
        self.save_episodes = save_episodes
        self.stats = BridgeStats()
        self.default_session_id = new_id()
        """The session of messages given without a ``session_id``."""
        self._sessions: dict[str, _Session] = {}
        self._started = False
        self._closing = False
        self._start_lock = asyncio.Lock()
        self._queue: asyncio.Queue[BridgeTurn] = asyncio.Queue()
        self._room = asyncio.Semaphore(queue_size)
        self._slots = asyncio.Semaphore(workers)
        self._tasks: set[asyncio.Task[None]] = set()
        self._background: list[asyncio.Task[None]] = []
        self._failures: list[BaseException] = []
        self._instance = new_id()
        self._minted = 0

    # ------------------------------------------------------------------ sessions and turns

    def _session(self, session_id: str) -> _Session:
        state = self._sessions.get(session_id)
        if state is None:
            if len(self._sessions) >= _MAX_SESSIONS:
                self._forget_idle_sessions()
            state = self._sessions[session_id] = _Session()
        return state

    def _forget_idle_sessions(self) -> None:
        idle = [sid for sid, s in self._sessions.items() if not s.buffer and not s.lock.locked()]
        idle.sort(key=lambda sid: self._sessions[sid].last_seen)
        for sid in idle[: len(idle) // 2 or len(idle)]:
            del self._sessions[sid]

    def _turn(
        self,
        message: MessageLike,
        *,
        role: str | None,
        session_id: str | None,
        user_id: str | None,
        tags: Sequence[str] | None,
        turn_index: int | None = None,
        message_id: str | None = None,
    ) -> BridgeTurn:
        chat = ChatMessage.coerce(message, role=role)
        session_id = session_id or self.default_session_id
        if not isinstance(session_id, str) or session_id not in self._sessions:
            validate_identifier(session_id, "session_id")  # known sessions were checked once
        user_id = user_id if user_id is not None else self.user_id
        if user_id is not None:
            validate_identifier(user_id, "user_id")
        tags = string_list(tags, "tags")
        for tag in tags or ():
            validate_identifier(tag, "tag")
        state = self._session(session_id)
        if turn_index is None:
            turn_index = state.next_turn
        state.next_turn = max(state.next_turn, turn_index + 1)
        if message_id is None and chat.id is None:
            self._minted += 1
            message_id = f"{self._instance}-{self._minted}"
        # Every field is validated above; skipping a second validation keeps ``submit`` fast.
        return BridgeTurn.model_construct(
            message=chat,
            session_id=session_id,
            user_id=user_id,
            message_id=message_id or chat.id,
            turn_index=turn_index,
            received_at=utcnow(),
            tags=tuple(tags or ()),
        )

    def note_recalled(self, session_id: str, facts: Sequence[Fact | str]) -> None:
        """Tell the bridge which facts the agent was shown in a session.

        An assistant turn that restates one of them is an echo of memory, not new knowledge,
        and is not stored again. An agent loop calls this after each recall from memory.
        """
        state = self._session(validate_identifier(session_id, "session_id"))
        state.recalled.extend(f.id if isinstance(f, Fact) else f for f in facts)

    # ------------------------------------------------------------------ extraction and writing

    def _context(
        self, turn: BridgeTurn, previous: Sequence[tuple[str, str, str | None]]
    ) -> ExtractionContext:
        from sagewai.intelligence.extraction.base import ExtractionContext, Turn

        role = _ROLE_FOR_EXTRACTION.get(turn.message.role, turn.message.role)
        if role not in _EXTRACTION_ROLES:
            role = "user"
        state = self._session(turn.session_id)
        return ExtractionContext(
            speaker=turn.message.speaker_name,
            role=role,
            session_id=turn.session_id,
            message_id=turn.message_id,
            timestamp=turn.timestamp,
            addressee=state.user_speaker if role == "assistant" else None,
            previous_turns=tuple(
                Turn(role=r if r in _EXTRACTION_ROLES else "user", content=c, speaker=s)
                for r, c, s in previous[-self.context_turns :]
                if self.context_turns
            ),
        )

    async def _extract(self, turn: BridgeTurn, context: ExtractionContext) -> list[ExtractedFact]:
        try:
            return list(await self.fact_extractor.extract(turn.message.content, context))
        except (SagewaiRuntimeError, InvalidInputError, ValueError) as exc:
            # Extractors do not raise on bad model output; this is a bug or bad input: the turn
            # is skipped and counted, the conversation loop goes on.
            self.stats.extraction_failures += 1
            logger.warning("extraction failed for message %s: %s", turn.message_id, exc)
            return []

    def _candidates(
        self, turn: BridgeTurn, context: ExtractionContext, extracted: Sequence[ExtractedFact]
    ) -> list[Candidate]:
        engine = self.engine
        now = utcnow()
        out: list[Candidate] = []
        extractor_name = type(self.fact_extractor).__name__
        for index, item in enumerate(extracted):
            source = Provenance(
                session_id=turn.session_id,
                message_id=turn.message_id,
                turn_index=turn.turn_index,
                role=turn.message.role,
                speaker=item.speaker or turn.message.speaker_name,
                timestamp=turn.timestamp,
                extractor=item.extractor or extractor_name,
            )
            scope = self.scope or (
                ContextScope.USER if turn.user_id is not None else ContextScope.PROJECT
            )
            try:
                fact = item.to_fact(
                    engine.project_id,
                    context=context,
                    id=fact_id_for(engine.project_id, turn.session_id, turn.message_id, index),
                    org_id=engine.org_id,
                    scope=scope,
                    user_id=turn.user_id,
                    session_id=turn.session_id,
                    tags=turn.tags,
                    sources=(source,),
                    created_at=min(turn.timestamp, now),
                    valid_from=turn.timestamp,
                )
            except (ValidationError, ValueError) as exc:
                self.stats.facts_invalid += 1
                logger.warning("skipped an invalid fact from message %s: %s", turn.message_id, exc)
                continue
            out.append(Candidate(fact=fact, role=turn.message.role, source=source))
        return out

    async def _process(self, turns: Sequence[BridgeTurn]) -> tuple[list[ExtractedFact], int]:
        """Extract and write one batch of turns of one session (in order); under its lock."""
        if not turns:
            return [], 0
        state = self._session(turns[0].session_id)
        jobs: list[tuple[BridgeTurn, ExtractionContext]] = []
        previous = list(state.history)
        for turn in turns:
            if turn.message.role in self.roles and not turn.message.is_empty:
                jobs.append((turn, self._context(turn, previous)))
            previous.append((turn.message.role, turn.message.content, turn.message.speaker_name))
            if turn.message.role == "user" and turn.message.speaker_name:
                state.user_speaker = turn.message.speaker_name
        results = await asyncio.gather(*(self._extract(turn, ctx) for turn, ctx in jobs))
        candidates: list[Candidate] = []
        extracted_all: list[ExtractedFact] = []
        for (turn, ctx), extracted in zip(jobs, results, strict=True):
            extracted_all.extend(extracted)
            candidates.extend(self._candidates(turn, ctx, extracted))
        outcome = await self.writer.write(candidates, recalled=list(state.recalled))
        for turn in turns:
            state.history.append(
                (turn.message.role, turn.message.content, turn.message.speaker_name)
            )
        self._count(len(turns), len(extracted_all), outcome)
        return extracted_all, outcome.added + outcome.updated

    def _count(self, turns: int, extracted: int, outcome: WriteOutcome) -> None:
        stats = self.stats
        stats.messages_processed += turns
        stats.facts_extracted += extracted
        stats.facts_added += outcome.added
        stats.facts_updated += outcome.updated
        stats.facts_reinforced += outcome.reinforced
        stats.echoes_suppressed += outcome.echoes
        stats.already_stored += outcome.already_stored

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
        """Buffer one turn; when the session's buffer is full, extract and store it.

        Args:
            message: Text, an OpenAI-style dict or a :class:`ChatMessage` (whose own role wins).
            role: The role of a plain-text message.
            session_id: The conversation (the bridge's default session when omitted).
            tags: Tags stored on the facts of this turn.
            user_id: Overrides the bridge's default user for this turn.

        Returns:
            The facts extracted by this call: those of the whole buffered batch when this turn
            completed it, else an empty list (call :meth:`flush` at the end of a session).

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
        self.stats.messages_accepted += 1
        state = self._session(turn.session_id)
        state.last_seen = time.monotonic()
        async with state.lock:
            state.buffer.append(turn)
            if len(state.buffer) < self.extract_every_n_turns:
                return []
            batch, state.buffer = state.buffer, []
            extracted, _ = await self._process(batch)
        return extracted

    async def bridge_conversation(
        self, conversation: Conversation | Sequence[MessageLike], tags: Sequence[str] | None = None
    ) -> int:
        """Extract and store a whole conversation; return how many facts were stored.

        Turns are processed ``extract_every_n_turns`` at a time, each with the turns before it as
        context; a message without an id gets ``turn-<index>``, so bridging the same
        conversation (same ``session_id``) again stores nothing twice. The count is the new fact
        records written (added or updated); repeats that reinforced a fact are not counted.
        When the engine has an ``episode_store``, the conversation is also saved as an episode.

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
        episodes = self.engine.episode_store
        keep_episode = self.save_episodes and episodes is not None and bool(chat.messages)
        check_episode = getattr(episodes, "check_episode", None) if keep_episode else None
        if check_episode is not None:
            # All or nothing: an episode that would be refused fails before any fact is written.
            check_episode(
                session_id,
                list(chat.messages),
                dict(chat.metadata),
                project_id=self.engine.project_id,
                user_id=user_id,
            )
        self.stats.messages_accepted += len(turns)
        state = self._session(session_id)
        stored = 0
        async with state.lock:
            pending, state.buffer = state.buffer, []
            if pending:
                stored += (await self._process(pending))[1]
            step = self.extract_every_n_turns
            for start in range(0, len(turns), step):
                stored += (await self._process(turns[start : start + step]))[1]
        if keep_episode and episodes is not None:
            await episodes.save_episode(
                session_id,
                list(chat.messages),
                metadata=dict(chat.metadata),
                project_id=self.engine.project_id,
                user_id=user_id,
                episode_id=str(
                    uuid.uuid5(_FACT_NAMESPACE, f"{self.engine.project_id}\x1f{session_id}")
                ),
            )
        return stored

    async def flush(self, session_id: str | None = None) -> int:
        """Extract and store every buffered turn (of one session, or all); return facts stored.

        In background mode this also waits until every message accepted by :meth:`submit`
        before the call is stored.

        Raises:
            BackendError: a background batch failed after retries (its messages stay in the
                journal and are replayed by the next start).
        """
        stored = 0
        if self._started:
            await self._queue.join()
        sessions = (
            [session_id]
            if session_id is not None
            else [s for s, st in self._sessions.items() if st.buffer]
        )
        for sid in sessions:
            state = self._sessions.get(sid)
            if state is None or not state.buffer:
                continue
            if self._started:
                await self._dispatch(sid)
            else:
                async with state.lock:
                    batch, state.buffer = state.buffer, []
                    stored += (await self._process(batch))[1]
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self._raise_failures()
        return stored

    def _raise_failures(self) -> None:
        if self._failures:
            failures, self._failures = self._failures, []
            raise BackendError(
                f"{len(failures)} background batch(es) could not be stored; their messages stay "
                f"in the journal for the next start. First error: {failures[0]!r}"
            ) from failures[0]

    # ------------------------------------------------------------------ the non-blocking API

    async def start(self) -> None:
        """Open the journal, replay what it holds, and start the background workers.

        Called for you by the first :meth:`submit`; call it yourself to replay a journal left
        by a crash at a time of your choosing. Replayed messages are stored before this returns.

        Raises:
            LockedError: another process has the journal open.
        """
        if self._started:
            return
        async with self._start_lock:
            if self.is_started:
                return
            if self.journal is not None:
                state = self.journal.open()
                try:
                    self.journal.start()
                    await self._replay(state.pending, state.batches)
                except BaseException:
                    await self.journal.aclose()  # release it: a later start() replays again
                    raise
            loop = asyncio.get_running_loop()
            self._background = [
                loop.create_task(self._dispatch_forever(), name="sagewai-bridge-dispatch"),
                loop.create_task(self._flush_idle_forever(), name="sagewai-bridge-idle"),
            ]
            self._started = True

    @property
    def is_started(self) -> bool:
        """True once the background workers run."""
        return self._started

    async def _replay(
        self, pending: Sequence[JournalEntry], batches: Mapping[str, Sequence[str]]
    ) -> None:
        turns: dict[str, BridgeTurn] = {}
        for entry in pending:
            try:
                turns[entry.id] = BridgeTurn.model_validate(entry.payload)
            except ValidationError:
                logger.error("journal entry %s is unreadable; skipped", entry.id)
        if not turns:
            return
        assert self.journal is not None
        order = {entry_id: position for position, entry_id in enumerate(turns)}
        grouped: list[list[BridgeTurn]] = []
        in_batch: set[str] = set()
        for members in sorted(
            batches.values(), key=lambda m: min(order.get(i, 1 << 60) for i in m)
        ):
            batch = [turns[i] for i in members if i in turns]
            if batch:
                grouped.append(batch)
                in_batch.update(members)
        loose: dict[str, list[BridgeTurn]] = {}
        for entry_id, turn in turns.items():
            if entry_id not in in_batch:
                loose.setdefault(turn.session_id, []).append(turn)
        for session_turns in loose.values():
            step = self.extract_every_n_turns
            grouped.extend(session_turns[i : i + step] for i in range(0, len(session_turns), step))
        for batch in grouped:
            state = self._session(batch[0].session_id)
            state.next_turn = max(state.next_turn, max(t.turn_index for t in batch) + 1)
            async with state.lock:
                await self._process(batch)
            self.journal.complete(t.entry_id for t in batch)
        self.stats.messages_replayed += len(turns)
        logger.info("replayed %d journaled message(s)", len(turns))

    async def submit(
        self,
        message: MessageLike,
        role: str = "user",
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        *,
        user_id: str | None = None,
    ) -> str:
        """Accept a message for background extraction; return its message id at once.

        Accepted means journaled (with ``journal_path``): it will be stored even if the process
        dies before the workers reach it. Use :meth:`flush` to wait until it is stored.

        Raises:
            InvalidInputError: a malformed message (nothing accepted).
            SagewaiTimeoutError: the queue stayed full for ``submit_timeout`` seconds (nothing
                accepted).
            BackendUnavailableError: the journal could not be written (nothing accepted).

        Example:
            >>> async def chat(bridge: MemoryBridge) -> None:
            ...     await bridge.submit("We deploy on Fridays", session_id="s1")
            ...     await bridge.flush()
        """
        if not self._started:
            await self.start()
        if self._closing:
            raise ConfigurationError("the bridge is closing; no message is accepted")
        turn = self._turn(message, role=role, session_id=session_id, user_id=user_id, tags=tags)
        if self._room.locked():
            try:
                await asyncio.wait_for(self._room.acquire(), timeout=self.submit_timeout or 1e-9)
            except TimeoutError as exc:
                raise SagewaiTimeoutError(
                    f"the bridge queue stayed full ({self.queue_size} messages) for "
                    f"{self.submit_timeout} s; the message was not accepted"
                ) from exc
        else:
            await self._room.acquire()
        try:
            if self.journal is not None:
                self.journal.append_json(turn.entry_id, turn.model_dump_json())
        except BaseException:
            self._room.release()
            raise
        self._queue.put_nowait(turn)
        self.stats.messages_accepted += 1
        return turn.message_id

    async def _dispatch_forever(self) -> None:
        while True:
            turn = await self._queue.get()
            try:
                self._room.release()
                state = self._session(turn.session_id)
                state.last_seen = time.monotonic()
                state.buffer.append(turn)
                if len(state.buffer) >= self.extract_every_n_turns:
                    await self._dispatch(turn.session_id)
            finally:
                self._queue.task_done()

    async def _flush_idle_forever(self) -> None:
        interval = min(1.0, self.idle_flush_seconds / 2)
        while True:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for sid, state in list(self._sessions.items()):
                if state.buffer and now - state.last_seen >= self.idle_flush_seconds:
                    await self._dispatch(sid)

    async def _dispatch(self, session_id: str) -> None:
        """Hand the session's buffer to a worker as one batch (journaled first)."""
        state = self._sessions[session_id]
        batch, state.buffer = state.buffer, []
        if not batch:
            return
        if self.journal is not None:
            self.journal.record_batch(new_id(), [t.entry_id for t in batch])
        await self._slots.acquire()
        task = asyncio.get_running_loop().create_task(self._run_batch(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_batch(self, batch: list[BridgeTurn]) -> None:
        state = self._session(batch[0].session_id)
        try:
            async with state.lock:
                for attempt, delay in enumerate((*_RETRY_DELAYS, None)):
                    try:
                        await self._process(batch)
                        break
                    except Exception as exc:
                        # Only runtime failures (a backend down, a timeout) may pass by retrying.
                        if delay is None or not isinstance(exc, SagewaiRuntimeError):
                            self.stats.batches_failed += 1
                            self._failures.append(exc)
                            logger.error("a batch of %d message(s) failed: %s", len(batch), exc)
                            return
                        logger.warning("batch attempt %d failed (%s); retrying", attempt + 1, exc)
                        await asyncio.sleep(delay)
            if self.journal is not None:
                self.journal.complete(t.entry_id for t in batch)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Store everything accepted, stop the workers and close the journal.

        Raises:
            BackendError: a background batch failed (its messages stay in the journal).
        """
        if not self._started:
            if self.journal is not None and self.journal.is_open:
                await self.journal.aclose()
            return
        self._closing = True
        try:
            await self.flush()
        finally:
            for task in self._background:
                task.cancel()
            for task in self._background:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._background = []
            self._started = False
            self._closing = False
            if self.journal is not None:
                await self.journal.aclose()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
