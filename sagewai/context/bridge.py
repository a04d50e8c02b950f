"""MemoryBridge: conversation turns in, verbatim messages and reconciled facts (and episodes) out.

The bridge is where an agent's conversation becomes memory. Each accepted message goes through
two stages:

1. **Record** (at once, for every message): the message is stored verbatim as a record of kind
   ``message`` (:data:`~sagewai.records.FactKind.MESSAGE`, id :func:`message_record_id`, with its
   provenance), and the cheap rule extractor's facts of it are reconciled and stored. Both are
   searchable from the next turn on.
2. **Extract** (``extract_every_n_turns`` turns at a time): the expensive part of the extractor
   (the model of a :class:`~sagewai.intelligence.HybridFactExtractor`, or a whole
   LLM/custom extractor) reads the buffered turns, each with the turns before it as context.
   ``extract_every_n_turns`` sets how often the model runs, never whether a turn is remembered.

Every fact carries its provenance (session, message id, turn index, role, speaker, time,
extractor): the facts drawn from a message have the message record's ``session_id`` and
``sources[0].message_id``. Facts are reconciled with what the scope already holds (ADD / UPDATE /
NOOP, see :mod:`sagewai.context.reconcile`) and written atomically; messages are never
reconciled, merged or decayed (they are the verbatim source).

Durable on return: with a write-ahead journal (:mod:`sagewai.context.journal`) every accepted
message is appended to it before the call returns, and only marked done once both stages are
stored. An engine made by ``ContextEngine.local(folder)`` gives its bridges a journal in that
folder by default (``bridge-<project>.journal``); a bridge opened on the folder replays what was
accepted but not stored before its first operation. An engine without a folder (in memory, or
stores you built) has no default journal: pass ``journal_path=`` to have one. Ids are
deterministic (``uuid5(project, session, message id, ...)``), so a replay of work that did land
changes nothing.

Three ways in:

* ``await bridge.process_message(...)`` / ``await bridge.bridge_conversation(...)`` do the work
  before they return (the extract stage when a turn completes the buffer).
* ``await bridge.remember(...)`` (what :class:`~sagewai.UniversalAgent` calls) journals and
  records the message before it returns and leaves the extract stage to the background.
* ``await bridge.submit(...)`` returns as soon as the message is journaled (well under a
  millisecond): a bounded queue feeds background workers that record and extract. When the queue
  is full, ``submit`` waits up to ``submit_timeout`` seconds for room and then raises
  :class:`~sagewai.errors.SagewaiTimeoutError` (the message is then *not* accepted: nothing is
  journaled). ``flush()`` waits until everything accepted so far is stored; ``aclose()`` flushes
  and stops the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sagewai.context.arguments import string_list
from sagewai.context.conversation import ChatMessage, Conversation, MessageLike
from sagewai.context.journal import FsyncPolicy, JournalEntry, JournalState, WriteAheadJournal
from sagewai.context.reconcile import Candidate, Reconciler, ReconcilingWriter, WriteOutcome
from sagewai.context.scope import ContextScope, validate_identifier
from sagewai.errors import (
    BackendError,
    ConfigurationError,
    InvalidInputError,
    LockedError,
    SagewaiRuntimeError,
    SagewaiTimeoutError,
)
from sagewai.records import (
    Fact,
    FactKind,
    Provenance,
    new_id,
    utcnow,
)

if TYPE_CHECKING:
    from sagewai.context.engine import ContextEngine
    from sagewai.intelligence.extraction.base import (
        ExtractedFact,
        ExtractionContext,
        FactExtractor,
    )
    from sagewai.intelligence.extraction.hybrid import HybridFactExtractor

__all__ = ["BridgeStats", "BridgeTurn", "MemoryBridge", "fact_id_for", "message_record_id"]

logger = logging.getLogger("sagewai.context.bridge")

_FACT_NAMESPACE = uuid.UUID("6f1c1f4e-8a43-5b0e-9d52-2f0f3c1d7a10")
_EXTRACTION_ROLES = {"user", "assistant", "system", "tool"}
_ROLE_FOR_EXTRACTION = {"developer": "system", "function": "tool"}
_MESSAGE_NAMESPACE = uuid.UUID("3a7e9c14-52d8-5b6f-8e01-9d4c2b7f6a53")
_MAX_SESSIONS = 10_000
_RETRY_DELAYS = (0.1, 0.5, 2.0)
_MODEL_FACT_INDEX = 1000
"""Fact indexes of a hybrid extractor's model facts start here (the rules' facts from 0)."""
_SIBLING_JOURNALS = 8
_RECORD_DRAIN = 256
_warned_no_folder = False


def fact_id_for(project_id: str, session_id: str, message_id: str, index: int) -> str:
    """The deterministic id of the ``index``-th fact extracted from one message.

    Replaying a message gives the same ids, so a replay upserts instead of duplicating.

    Example:
        >>> fact_id_for("p", "s1", "m1", 0) == fact_id_for("p", "s1", "m1", 0)
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, str(index)))
    return str(uuid.uuid5(_FACT_NAMESPACE, name))


def message_record_id(project_id: str, session_id: str, message_id: str, part: int = 0) -> str:
    """The deterministic id of the verbatim record of one message (``part`` of a long one).

    The facts drawn from the message carry the same ``session_id`` and
    ``sources[0].message_id``, so a reader finds a fact's message with this id.

    Example:
        >>> message_record_id("p", "s1", "m1") == message_record_id("p", "s1", "m1")
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, str(part)))
    return str(uuid.uuid5(_MESSAGE_NAMESPACE, name))


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
    messages_recorded: int = 0
    """Messages whose verbatim record and rule facts are stored (the record stage)."""
    messages_processed: int = 0
    """Messages through both stages (record and extract)."""
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
class _Pending:
    """A recorded turn: its extraction context, the rules' facts, and whether the batch
    extractor still has to read it."""

    turn: BridgeTurn
    context: ExtractionContext | None
    rule_facts: list[ExtractedFact]
    deferred: bool


@dataclass(slots=True)
class _Session:
    buffer: list[_Pending] = field(default_factory=list)
    history: deque[tuple[str, str, str | None]] = field(default_factory=lambda: deque(maxlen=32))
    next_turn: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a batch of the session is extracted."""
    record_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while turns of the session are recorded (they enter the history in order)."""
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
        ...         return sorted({f.content for r in found for f in (r.fact, *r.related)})
        >>> asyncio.run(demo())  # the message, verbatim, and the fact drawn from it
        ['I moved to Berlin.', 'The user moved to Berlin.']
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
        journal: bool = True,
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
        self._fsync: FsyncPolicy = fsync
        self._journal_candidates: list[Path] = []
        if journal_path is not None:
            self.journal: WriteAheadJournal | None = WriteAheadJournal(journal_path, fsync=fsync)
        elif journal and context_engine.folder is not None:
            base = context_engine.folder / f"bridge-{context_engine.project_id}"
            self._journal_candidates = [Path(f"{base}.journal")] + [
                Path(f"{base}.{n}.journal") for n in range(1, _SIBLING_JOURNALS)
            ]
            self.journal = WriteAheadJournal(self._journal_candidates[0], fsync=fsync)
        else:
            self.journal = None
            if journal:
                _warn_no_folder()
        self._hybrid, self._rules_only = _stages(self.fact_extractor)
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
        self._ready = False
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
        self._stored = 0

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
    # ------------------------------------------------------------------ extraction and writing

    @property
    def durable(self) -> bool:
        """Whether an accepted message outlives this process.

        True with a journal, or when the engine's metadata store is not in memory (an engine on
        SQLite or PostgreSQL holds each message's verbatim record once it is recorded).
        """
        if self.journal is not None:
            return True
        from sagewai.stores.memory.metadata import InMemoryMetadataStore

        return not isinstance(self.engine.metadata_store, InMemoryMetadataStore)

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
                for r, c, s in list(previous)[-self.context_turns :]
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

    async def _extract_now(
        self, turn: BridgeTurn, context: ExtractionContext
    ) -> tuple[list[ExtractedFact], bool]:
        """The record stage's facts (the cheap rules), and whether the batch stage must read it."""
        if self._hybrid is not None:
            try:
                return self._hybrid.extract_rules(turn.message.content, context)
            except (InvalidInputError, ValueError) as exc:
                self.stats.extraction_failures += 1
                logger.warning("extraction failed for message %s: %s", turn.message_id, exc)
                return [], False
        if self._rules_only:
            return await self._extract(turn, context), False
        return [], True

    async def _extract_later(self, pending: _Pending) -> tuple[list[ExtractedFact], int]:
        """The batch stage's facts of one turn, and the fact index they are numbered from."""
        assert pending.context is not None
        if self._hybrid is None:
            return await self._extract(pending.turn, pending.context), 0
        try:
            facts = await self._hybrid.extract_model(
                pending.turn.message.content, pending.context, pending.rule_facts
            )
        except (SagewaiRuntimeError, InvalidInputError, ValueError) as exc:
            self.stats.extraction_failures += 1
            logger.warning("extraction failed for message %s: %s", pending.turn.message_id, exc)
            facts = []
        return facts, _MODEL_FACT_INDEX

    def _scope_of(self, turn: BridgeTurn) -> ContextScope:
        return self.scope or (
            ContextScope.USER if turn.user_id is not None else ContextScope.PROJECT
        )

    def _source(self, turn: BridgeTurn, *, speaker: str | None, extractor: str) -> Provenance:
        return Provenance(
            session_id=turn.session_id,
            message_id=turn.message_id,
            turn_index=turn.turn_index,
            role=turn.message.role,
            speaker=speaker,
            timestamp=turn.timestamp,
            extractor=extractor,
        )

    def _candidates(
        self,
        turn: BridgeTurn,
        context: ExtractionContext,
        extracted: Sequence[ExtractedFact],
        *,
        first_index: int = 0,
    ) -> list[Candidate]:
        from sagewai.intelligence.extraction.dates import ground_dates

        engine = self.engine
        now = utcnow()
        out: list[Candidate] = []
        extractor_name = type(self.fact_extractor).__name__
        for offset, item in enumerate(extracted):
            index = first_index + offset
            source = self._source(
                turn,
                speaker=item.speaker or turn.message.speaker_name,
                extractor=item.extractor or extractor_name,
            )
            # Relative dates mean the day they were said, whichever extractor wrote the fact.
            grounded = ground_dates(item.content, turn.timestamp, protected=item.exact_values)
            try:
                fact = item.to_fact(
                    engine.project_id,
                    content=grounded,
                    context=context,
                    id=fact_id_for(engine.project_id, turn.session_id, turn.message_id, index),
                    org_id=engine.org_id,
                    scope=self._scope_of(turn),
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

    def _message_records(self, turn: BridgeTurn) -> list[Fact]:
        """The verbatim record of a message (in parts when it is longer than a record holds)."""
        from sagewai import records

        engine = self.engine
        text = turn.message.content
        limit = records.MAX_CONTENT_CHARS
        parts = _split(text, limit)
        source = self._source(turn, speaker=turn.message.speaker_name, extractor="verbatim")
        out: list[Fact] = []
        for part, content in enumerate(parts):
            if not content.strip():
                continue
            try:
                out.append(
                    Fact(
                        id=message_record_id(
                            engine.project_id, turn.session_id, turn.message_id, part
                        ),
                        project_id=engine.project_id,
                        org_id=engine.org_id,
                        scope=self._scope_of(turn),
                        user_id=turn.user_id,
                        session_id=turn.session_id,
                        kind=FactKind.MESSAGE,
                        content=content,
                        tags=turn.tags,
                        metadata={"part": part, "parts": len(parts)} if len(parts) > 1 else {},
                        sources=(source,),
                        created_at=min(turn.timestamp, utcnow()),
                        valid_from=turn.timestamp,
                    )
                )
            except (ValidationError, ValueError) as exc:
                self.stats.facts_invalid += 1
                logger.warning("message %s could not be stored verbatim: %s", turn.message_id, exc)
        return out

    async def _record(
        self, turns: Sequence[BridgeTurn]
    ) -> tuple[list[_Pending], list[ExtractedFact]]:
        """Stage 1 for turns (of any sessions, in order): verbatim records and the rules' facts.

        Takes the record lock of every session involved, so each session's turns enter its
        history in order.
        """
        if not turns:
            return [], []
        sessions = sorted({t.session_id for t in turns})
        async with contextlib.AsyncExitStack() as stack:
            for sid in sessions:
                await stack.enter_async_context(self._session(sid).record_lock)
            pendings: list[_Pending] = []
            messages: dict[str, list[Fact]] = {}
            # The sessions' histories take these turns only once they are stored (a retried
            # batch must not see its own turns twice as context).
            said: dict[str, list[tuple[str, str, str | None]]] = {}
            for turn in turns:
                state = self._session(turn.session_id)
                history = said.setdefault(turn.session_id, list(state.history))
                context: ExtractionContext | None = None
                if turn.message.role in self.roles and not turn.message.is_empty:
                    context = self._context(turn, history)
                    messages.setdefault(turn.session_id, []).extend(self._message_records(turn))
                history.append((turn.message.role, turn.message.content, turn.message.speaker_name))
                if turn.message.role == "user" and turn.message.speaker_name:
                    state.user_speaker = turn.message.speaker_name
                pendings.append(_Pending(turn, context, [], False))
            extracted = await asyncio.gather(
                *(self._extract_now(p.turn, p.context) for p in pendings if p.context is not None)
            )
            jobs = [p for p in pendings if p.context is not None]
            by_session: dict[str, list[Candidate]] = {}
            facts: list[ExtractedFact] = []
            for pending, (found, deferred) in zip(jobs, extracted, strict=True):
                assert pending.context is not None
                pending.rule_facts, pending.deferred = found, deferred
                facts.extend(found)
                by_session.setdefault(pending.turn.session_id, []).extend(
                    self._candidates(pending.turn, pending.context, found)
                )
            # A message and the rules' facts drawn from it land in one commit (one embedding call).
            outcome = WriteOutcome()
            for sid in dict.fromkeys([*messages, *by_session]):
                outcome.merge(
                    await self.writer.write(
                        by_session.get(sid, []),
                        recalled=list(self._session(sid).recalled),
                        verbatim=messages.get(sid, []),
                    )
                )
            for sid, history in said.items():
                state = self._session(sid)
                state.history.clear()
                state.history.extend(history)
        self.stats.messages_recorded += len(turns)
        self._count(len(facts), outcome)
        self._stored += outcome.added + outcome.updated
        return pendings, facts

    async def _extract_batch(self, batch: Sequence[_Pending]) -> tuple[list[ExtractedFact], int]:
        """Stage 2 for recorded turns of one session: the batch extractor; returns its facts."""
        jobs = [p for p in batch if p.deferred and p.context is not None]
        if not jobs:
            return [], 0
        results = await asyncio.gather(*(self._extract_later(p) for p in jobs))
        candidates: list[Candidate] = []
        extracted_all: list[ExtractedFact] = []
        for pending, (extracted, first_index) in zip(jobs, results, strict=True):
            assert pending.context is not None
            extracted_all.extend(extracted)
            candidates.extend(
                self._candidates(pending.turn, pending.context, extracted, first_index=first_index)
            )
        state = self._session(jobs[0].turn.session_id)
        outcome = await self.writer.write(candidates, recalled=list(state.recalled))
        self._count(len(extracted_all), outcome)
        self._stored += outcome.added + outcome.updated
        return extracted_all, outcome.added + outcome.updated

    def _finish(self, batch: Sequence[_Pending]) -> None:
        """Both stages of these turns are stored: checkpoint them in the journal."""
        if not batch:
            return
        self.stats.messages_processed += len(batch)
        if self.journal is not None and self.journal.is_open:
            self.journal.complete(p.turn.entry_id for p in batch)

    def _buffer(self, pendings: Sequence[_Pending]) -> list[str]:
        """Checkpoint turns needing no batch extraction; buffer the others. Returns the
        sessions whose buffer is full."""
        self._finish([p for p in pendings if not p.deferred])
        full: list[str] = []
        for pending in pendings:
            if pending.deferred:
                state = self._session(pending.turn.session_id)
                state.buffer.append(pending)
                state.last_seen = time.monotonic()
                if len(state.buffer) >= self.extract_every_n_turns:
                    full.append(pending.turn.session_id)
        return list(dict.fromkeys(full))

    def _count(self, extracted: int, outcome: WriteOutcome) -> None:
        stats = self.stats
        stats.facts_extracted += extracted
        stats.facts_added += outcome.added
        stats.facts_updated += outcome.updated
        stats.facts_reinforced += outcome.reinforced
        stats.echoes_suppressed += outcome.echoes
        stats.already_stored += outcome.already_stored

    def _accept(self, turn: BridgeTurn) -> None:
        """Journal an accepted turn (before anything else happens to it)."""
        if self.journal is not None:
            self.journal.append_json(turn.entry_id, turn.model_dump_json())
        self.stats.messages_accepted += 1

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
        before = self._stored
        async with state.lock:
            pending, state.buffer = state.buffer, []
            await self._extract_batch(pending)
            self._finish(pending)
            step = self.extract_every_n_turns
            for start in range(0, len(turns), step):
                recorded, _ = await self._record(turns[start : start + step])
                await self._extract_batch(recorded)
                self.stats.messages_processed += len(recorded)
        stored = self._stored - before
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
        await self._open_journal()
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
                    stored += (await self._extract_batch(batch))[1]
                    self._finish(batch)
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

    # ------------------------------------------------------------------ the journal

    @property
    def is_ready(self) -> bool:
        """True once the journal (if any) is open and what it held is replayed."""
        return self._ready

    async def _open_journal(self) -> None:
        """Open the journal and replay what it holds; once, before the first operation."""
        if self._ready:
            return
        async with self._start_lock:
            if self.is_ready:
                return
            if self.journal is not None:
                state = self._lock_journal()
                try:
                    self.journal.start()
                    await self._replay(state.pending, state.batches)
                    await self._adopt_siblings()
                except BaseException:
                    await self.journal.aclose()  # release it: a later start replays again
                    raise
            self._ready = True

    def _lock_journal(self) -> JournalState:
        """Open the journal; a default one taken by another bridge moves to a free sibling."""
        assert self.journal is not None
        try:
            return self.journal.open()
        except LockedError:
            if not self._journal_candidates:
                raise
        for path in self._journal_candidates[1:]:
            journal = WriteAheadJournal(path, fsync=self._fsync)
            try:
                state = journal.open()
            except LockedError:
                continue
            self.journal = journal
            return state
        raise LockedError(
            f"every default journal of project {self.engine.project_id!r} in "
            f"{self.engine.folder} is open in another bridge; pass journal_path="
        )

    async def _adopt_siblings(self) -> None:
        """Replay what the default journals of bridges that are gone left behind."""
        assert self.journal is not None
        for path in self._journal_candidates:
            if path == self.journal.path or not path.exists() or path.stat().st_size == 0:
                continue
            other = WriteAheadJournal(path, fsync="never")
            try:
                state = other.open()
            except LockedError:
                continue  # a live bridge owns it
            try:
                await self._replay(state.pending, state.batches, journal=other)
            finally:
                other.close()

    # ------------------------------------------------------------------ the non-blocking API

    async def start(self) -> None:
        """Open the journal, replay what it holds, and start the background workers.

        Called for you by the first :meth:`submit` or :meth:`remember`; call it yourself to
        replay a journal left by a crash at a time of your choosing. Replayed messages are
        stored before this returns.

        Raises:
            LockedError: another process has the journal open.
        """
        if self._started:
            return
        await self._open_journal()
        async with self._start_lock:
            if self.is_started:
                return
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
        self,
        pending: Sequence[JournalEntry],
        batches: Mapping[str, Sequence[str]],
        *,
        journal: WriteAheadJournal | None = None,
    ) -> None:
        journal = journal or self.journal
        assert journal is not None
        turns: dict[str, BridgeTurn] = {}
        for entry in pending:
            try:
                turns[entry.id] = BridgeTurn.model_validate(entry.payload)
            except ValidationError:
                logger.error("journal entry %s is unreadable; skipped", entry.id)
        if not turns:
            return
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
                recorded, _ = await self._record(batch)
                await self._extract_batch(recorded)
            self.stats.messages_processed += len(batch)
            journal.complete(t.entry_id for t in batch)
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
        """Accept a message for background storage and extraction; return its message id at once.

        Accepted means journaled (with a journal): it will be stored even if the process dies
        before the workers reach it. Use :meth:`flush` to wait until it is stored, or
        :meth:`remember` to have it recorded before the call returns.

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
            self._accept(turn)
        except BaseException:
            self._room.release()
            raise
        self._queue.put_nowait(turn)
        return turn.message_id

    async def _dispatch_forever(self) -> None:
        while True:
            turns = [await self._queue.get()]
            while len(turns) < _RECORD_DRAIN and not self._queue.empty():
                turns.append(self._queue.get_nowait())
            try:
                for _ in turns:
                    self._room.release()
                pendings = await self._retrying(functools.partial(self._record, turns), len(turns))
                if pendings is not None:
                    for sid in self._buffer(pendings[0]):
                        await self._dispatch(sid)
            finally:
                for _ in turns:
                    self._queue.task_done()

    async def _retrying(self, work: Any, messages: int) -> Any:
        """Run ``work()`` with retries on runtime failures; ``None`` when it failed for good."""
        for attempt, delay in enumerate((*_RETRY_DELAYS, None)):
            try:
                return await work()
            except Exception as exc:
                # Only runtime failures (a backend down, a timeout) may pass by retrying.
                if delay is None or not isinstance(exc, SagewaiRuntimeError):
                    self.stats.batches_failed += 1
                    self._failures.append(exc)
                    logger.error("a batch of %d message(s) failed: %s", messages, exc)
                    return None
                logger.warning("batch attempt %d failed (%s); retrying", attempt + 1, exc)
                await asyncio.sleep(delay)
        return None

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
            self.journal.record_batch(new_id(), [p.turn.entry_id for p in batch])
        await self._slots.acquire()
        task = asyncio.get_running_loop().create_task(self._run_batch(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_batch(self, batch: list[_Pending]) -> None:
        state = self._session(batch[0].turn.session_id)
        try:
            async with state.lock:
                work = functools.partial(self._extract_batch, batch)
                done = await self._retrying(work, len(batch))
            if done is not None:
                self._finish(batch)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Store everything accepted, stop the workers and close the journal.

        Not needed for durability (what was accepted is journaled): it saves the next start
        the replay.

        Raises:
            BackendError: a background batch failed (its messages stay in the journal).
        """
        if not self._started:
            try:
                if self._ready and any(s.buffer for s in self._sessions.values()):
                    await self.flush()
            finally:
                if self.journal is not None and self.journal.is_open:
                    await self.journal.aclose()
                self._ready = False
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
            self._ready = False
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


def _stages(extractor: FactExtractor) -> tuple[HybridFactExtractor | None, bool]:
    """How an extractor splits between the record stage and the batch stage.

    A ``HybridFactExtractor``'s rules run at once and its model in batches; a
    ``RuleBasedFactExtractor`` runs at once entirely; any other extractor (an LLM, your own)
    runs in batches of ``extract_every_n_turns``.
    """
    from sagewai.intelligence.extraction.hybrid import HybridFactExtractor
    from sagewai.intelligence.extraction.rules import RuleBasedFactExtractor

    if isinstance(extractor, HybridFactExtractor):
        return extractor, False
    return None, isinstance(extractor, RuleBasedFactExtractor)


def _split(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at a space where one is near."""
    parts: list[str] = []
    while len(text) > limit:
        cut = text.rfind(" ", limit - limit // 10, limit)
        cut = limit if cut <= 0 else cut + 1
        parts.append(text[:cut])
        text = text[cut:]
    parts.append(text)
    return parts


def _warn_no_folder() -> None:
    global _warned_no_folder
    if not _warned_no_folder:
        _warned_no_folder = True
        logger.warning(
            "MemoryBridge: the engine has no folder, so no write-ahead journal: each message is "
            "stored as it is accepted, but turns waiting for extraction live in this process "
            "only (use ContextEngine.local(path) or pass journal_path=); logged once"
        )
