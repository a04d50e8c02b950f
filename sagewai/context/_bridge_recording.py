"""The record stage and the extract stage: a message becomes its verbatim record and the facts
drawn from it (the rules' at once, the model's in batches), reconciled and written.

:class:`RecordingBridge` holds the bridge's settings and sessions; the journal
(:mod:`.journaling`), the background workers (:mod:`.background`) and the public API
(:class:`~sagewai.context._bridge.MemoryBridge`) build on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue, ValidationError

from sagewai.context._ranking import CONTEXT_MARK, REPLY_MARK
from sagewai.context._reconcile import Candidate, Reconciler, ReconcilingWriter, WriteOutcome
from sagewai.context.bridge._journal import FsyncPolicy, WriteAheadJournal
from sagewai.context.bridge._sessions import SessionState
from sagewai.context.bridge._turns import (
    CONTEXT_MESSAGE_CHARS,
    EXTRACTION_ROLES,
    MAX_SESSIONS,
    MODEL_FACT_INDEX,
    ROLE_FOR_EXTRACTION,
    SIBLING_JOURNALS,
    BridgeStats,
    BridgeTurn,
    PendingTurn,
    context_prefix,
    context_record_id,
    fact_id_for,
    message_record_id,
)
from sagewai.core._arguments import string_list
from sagewai.core._conversation import ChatMessage, MessageLike
from sagewai.core._records import (
    Fact,
    FactKind,
    Provenance,
    new_id,
    utcnow,
)
from sagewai.core._scope import ContextScope, validate_identifier
from sagewai.errors import (
    ConfigurationError,
    InvalidInputError,
    SagewaiRuntimeError,
)

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.extraction._base import (
        ExtractedFact,
        ExtractionContext,
        FactExtractor,
    )
    from sagewai.extraction._hybrid import HybridFactExtractor

logger = logging.getLogger("sagewai.context._bridge")
_warned_no_folder = False


def _default_extractor(model: str) -> FactExtractor:
    """Rules everywhere, ``model`` where they are unsure, the rules again when it is offline."""
    from sagewai.extraction import (
        HybridFactExtractor,
        LLMFactExtractor,
        RuleBasedFactExtractor,
    )

    rules = RuleBasedFactExtractor()
    return HybridFactExtractor(
        rule_extractor=rules, llm_extractor=LLMFactExtractor(model=model, fallback=rules)
    )


class RecordingBridge:
    """Settings, sessions and the two stages of :class:`~sagewai.context._bridge.MemoryBridge`."""

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
        context_records: bool = True,
        context_max_chars: int = CONTEXT_MESSAGE_CHARS,
        context_after: Sequence[str] | None = None,
    ) -> None:
        if extract_every_n_turns < 1:
            raise ConfigurationError("extract_every_n_turns must be at least 1")
        if queue_size < 1 or workers < 1:
            raise ConfigurationError("queue_size and workers must be at least 1")
        if context_max_chars < 0:
            raise ConfigurationError("context_max_chars must not be negative")
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
        self.context_records = context_records
        self.context_max_chars = context_max_chars
        self.context_after = (
            self.roles if context_after is None else frozenset(r.lower() for r in context_after)
        )
        self.writer = ReconcilingWriter(
            context_engine.port, reconciler=reconciler, echo_threshold=echo_threshold
        )
        self._fsync: FsyncPolicy = fsync
        self._journal_candidates: list[Path] = []
        if journal_path is not None:
            self.journal: WriteAheadJournal | None = WriteAheadJournal(journal_path, fsync=fsync)
        elif journal and context_engine.stores.folder is not None:
            base = context_engine.stores.folder / f"bridge-{context_engine.project_id}"
            self._journal_candidates = [Path(f"{base}.journal")] + [
                Path(f"{base}.{n}.journal") for n in range(1, SIBLING_JOURNALS)
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
        self._sessions: dict[str, SessionState] = {}
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

    def _session(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is None:
            if len(self._sessions) >= MAX_SESSIONS:
                self._forget_idle_sessions()
            state = self._sessions[session_id] = SessionState()
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

    @property
    def durable(self) -> bool:
        """Whether an accepted message outlives this process.

        True with a journal, or when the engine's metadata store is not in memory (an engine on
        SQLite or PostgreSQL holds each message's verbatim record once it is recorded).
        """
        return self.journal is not None or self.engine.stores.persistent

    def _context(
        self, turn: BridgeTurn, previous: Sequence[tuple[str, str, str | None]]
    ) -> ExtractionContext:
        from sagewai.extraction._base import ExtractionContext, Turn

        role = ROLE_FOR_EXTRACTION.get(turn.message.role, turn.message.role)
        if role not in EXTRACTION_ROLES:
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
                Turn(role=r if r in EXTRACTION_ROLES else "user", content=c, speaker=s)
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

    async def _extract_later(self, pending: PendingTurn) -> tuple[list[ExtractedFact], int]:
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
        return facts, MODEL_FACT_INDEX

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
        from sagewai.extraction._dates import ground_dates

        engine = self.engine
        now = utcnow()
        recalled = tuple(self._session(turn.session_id).recalled)
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
            if turn.message.role == "assistant":
                # What the assistant said, like its verbatim reply (see _message_records).
                fact = fact.model_copy(update={"metadata": {**fact.metadata, REPLY_MARK: True}})
            out.append(
                Candidate(fact=fact, role=turn.message.role, source=source, recalled=recalled)
            )
        return out

    def _message_records(self, turn: BridgeTurn) -> list[Fact]:
        """The verbatim record of a message (in parts when it is longer than a record holds)."""
        from sagewai.core import _records as records

        engine = self.engine
        text = turn.message.content
        limit = records.MAX_CONTENT_CHARS
        parts = _split(text, limit)
        source = self._source(turn, speaker=turn.message.speaker_name, extractor="verbatim")
        # An assistant's reply is marked: search weighs it below the user's own words.
        reply: dict[str, JsonValue] = {REPLY_MARK: True} if turn.message.role == "assistant" else {}
        out: list[Fact] = []
        for part, content in enumerate(parts):
            if not content.strip():
                continue
            split: dict[str, JsonValue] = (
                {"part": part, "parts": len(parts)} if len(parts) > 1 else {}
            )
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
                        metadata={**split, **reply},
                        sources=(source,),
                        created_at=min(turn.timestamp, utcnow()),
                        valid_from=turn.timestamp,
                    )
                )
            except (ValidationError, ValueError) as exc:
                self.stats.facts_invalid += 1
                logger.warning("message %s could not be stored verbatim: %s", turn.message_id, exc)
        return out

    def _context_record(
        self, turn: BridgeTurn, previous: tuple[str, str, str | None] | None
    ) -> Fact | None:
        """The message with the end of the turn before it: what it answers or refers to.

        A reply such as "Yes, last Friday" says little by itself; with the question before it,
        search finds it by the question's words. The record is searchable as the message's own
        source (same provenance, so it is fused with the message and never takes a place of
        another source) and ranks with :attr:`~sagewai.SearchConfig.context_weight`.
        Only short messages get one (a long message says what it means by itself); ``None``
        when there is no earlier turn to add.
        """
        text = turn.message.content
        if (
            not self.context_records
            or previous is None
            or previous[0] not in self.roles
            or previous[0] not in self.context_after
            or previous[1] == text  # the message again (a replay): nothing before it to add
            or len(text) > self.context_max_chars
        ):
            return None
        before = context_prefix(previous[1])
        if not before:
            return None
        engine = self.engine
        source = self._source(turn, speaker=turn.message.speaker_name, extractor="context")
        metadata: dict[str, JsonValue] = {CONTEXT_MARK: len(before) + 1}
        if turn.message.role == "assistant":
            metadata[REPLY_MARK] = True
        try:
            return Fact(
                id=context_record_id(engine.project_id, turn.session_id, turn.message_id),
                project_id=engine.project_id,
                org_id=engine.org_id,
                scope=self._scope_of(turn),
                user_id=turn.user_id,
                session_id=turn.session_id,
                kind=FactKind.MESSAGE,
                content=f"{before}\n{text}",
                tags=turn.tags,
                metadata=metadata,
                sources=(source,),
                created_at=min(turn.timestamp, utcnow()),
                valid_from=turn.timestamp,
            )
        except (ValidationError, ValueError) as exc:
            self.stats.facts_invalid += 1
            logger.warning("message %s has no context record: %s", turn.message_id, exc)
            return None

    async def _record(
        self, turns: Sequence[BridgeTurn]
    ) -> tuple[list[PendingTurn], list[ExtractedFact]]:
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
            pendings: list[PendingTurn] = []
            messages: dict[str, list[Fact]] = {}
            # The sessions' histories take these turns only once they are stored (a retried
            # batch must not see its own turns twice as context).
            said: dict[str, list[tuple[str, str, str | None]]] = {}
            last: dict[str, str | None] = {}
            # Context records whose earlier turn was recorded before these turns: kept only if
            # that turn's record is still stored (it may have been forgotten since).
            check: dict[str, list[Fact]] = {}
            made: set[str] = set()
            for turn in turns:
                state = self._session(turn.session_id)
                history = said.setdefault(turn.session_id, list(state.history))
                before = last.setdefault(turn.session_id, state.last_record)
                context: ExtractionContext | None = None
                if turn.message.role in self.roles and not turn.message.is_empty:
                    context = self._context(turn, history)
                    records = messages.setdefault(turn.session_id, [])
                    records.extend(self._message_records(turn))
                    # The first turn of a conversation has none before it (a session bridged
                    # again starts over: its history holds the end of the earlier pass).
                    previous = history[-1] if history and turn.turn_index > 0 else None
                    around = self._context_record(turn, previous)
                    if around is not None and before is not None and before not in made:
                        check.setdefault(before, []).append(around)
                    elif around is not None:
                        records.append(around)
                    last[turn.session_id] = message_record_id(
                        self.engine.project_id, turn.session_id, turn.message_id
                    )
                    made.add(last[turn.session_id] or "")
                else:
                    last[turn.session_id] = None
                history.append((turn.message.role, turn.message.content, turn.message.speaker_name))
                if turn.message.role == "user" and turn.message.speaker_name:
                    state.user_speaker = turn.message.speaker_name
                pendings.append(PendingTurn(turn, context, [], False))
            if check:
                present = {f.id for f in await self.engine.port.get_many(list(check))}
                for record_id, arounds in check.items():
                    if record_id in present:
                        for around in arounds:
                            sid = around.session_id or ""
                            messages.setdefault(sid, []).append(around)
            extracted = await asyncio.gather(
                *(self._extract_now(p.turn, p.context) for p in pendings if p.context is not None)
            )
            jobs = [p for p in pendings if p.context is not None]
            candidates: list[Candidate] = []
            facts: list[ExtractedFact] = []
            for pending, (found, deferred) in zip(jobs, extracted, strict=True):
                assert pending.context is not None
                pending.rule_facts, pending.deferred = found, deferred
                facts.extend(found)
                candidates.extend(self._candidates(pending.turn, pending.context, found))
            # The messages and the rules' facts drawn from them, of every session of these
            # turns, land in one commit (one embedding call): a drain of the queue is one write.
            outcome = await self.writer.write(
                candidates, verbatim=[r for records in messages.values() for r in records]
            )
            for sid, history in said.items():
                state = self._session(sid)
                state.history.clear()
                state.history.extend(history)
                state.last_record = last.get(sid)
        self.stats.messages_recorded += len(turns)
        self._count(len(facts), outcome)
        self._stored += outcome.added + outcome.updated
        return pendings, facts

    async def _extract_batch(self, batch: Sequence[PendingTurn]) -> tuple[list[ExtractedFact], int]:
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

    def _finish(self, batch: Sequence[PendingTurn]) -> None:
        """Both stages of these turns are stored: checkpoint them in the journal."""
        if not batch:
            return
        self.stats.messages_processed += len(batch)
        if self.journal is not None and self.journal.is_open:
            self.journal.complete(p.turn.entry_id for p in batch)

    def _buffer(self, pendings: Sequence[PendingTurn]) -> list[str]:
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


def _stages(extractor: FactExtractor) -> tuple[HybridFactExtractor | None, bool]:
    """How an extractor splits between the record stage and the batch stage.

    A ``HybridFactExtractor``'s rules run at once and its model in batches; a
    ``RuleBasedFactExtractor`` runs at once entirely; any other extractor (an LLM, your own)
    runs in batches of ``extract_every_n_turns``.
    """
    from sagewai.extraction._hybrid import HybridFactExtractor
    from sagewai.extraction._rules import RuleBasedFactExtractor

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
