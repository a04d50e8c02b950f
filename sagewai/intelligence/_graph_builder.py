"""Build a project's knowledge graph from conversation turns.

:class:`ConversationGraphBuilder` runs an entity extractor and a relation extractor over each
message, resolves every mention to a graph entity (same normalised name, a known alias, or, with
an embedder, a name embedding at least ``dedup_threshold`` close), and writes the turn's entities
and relations in one atomic graph write. A relation stated again gains a source instead of a
duplicate edge; a new value of a single-valued relation (``lives_in``, ``works_at``, ...) closes
the old edge's validity interval instead of deleting it, so the graph keeps its history.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from sagewai.core._arguments import aware_time
from sagewai.core._embedder import Embedder, Vector
from sagewai.core._graph_matching import entity_keys, name_key
from sagewai.core._graph_records import MAX_NAME_CHARS, Entity, Relation
from sagewai.core._predicates import is_single_valued, relation_predicate
from sagewai.core._records import Provenance, utcnow
from sagewai.core._scope import validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import (
    ConfigurationError,
    ExtractionError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotAvailableError,
)
from sagewai.intelligence._entities import EntityExtractor, ExtractedEntity
from sagewai.intelligence._relations import (
    ExtractedRelation,
    HeuristicRelationExtractor,
    RelationExtractor,
)
from sagewai.intelligence._rule_entities import RuleBasedEntityExtractor
from sagewai.stores.base._graph import GraphStore, GraphWrite, ProjectGraph

__all__ = ["ConversationGraphBuilder", "GraphUpdateResult", "usable_entity_name"]

logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 20_000
_MAX_MENTION_CHARS = 120
_JUNK_NAMES = frozenset(
    re.split(
        r"\s+",
        "i me my mine you your he him his she her it its we us our they them their this that "
        "these those there here who what which someone something anyone anything everyone "
        "everything nothing none one a an the some any another every each",
    )
)
_GENERIC_LABELS = frozenset({"entity", "other", "thing"})


class GraphUpdateResult(BaseModel):
    """What one turn (or a whole conversation) changed in the graph.

    ``entities_merged`` counts mentions folded into an entity that already existed (by name,
    alias or embedding); ``relations_superseded`` the old edges whose validity a new value of a
    single-valued relation ended; ``relations_reinforced`` relations stated again (a source was
    added). Results add up with ``+``.
    """

    model_config = ConfigDict(frozen=True)

    entities_added: int = 0
    entities_merged: int = 0
    relations_added: int = 0
    total_messages: int = 0
    relations_superseded: int = 0
    relations_reinforced: int = 0
    messages_skipped: int = 0

    def __add__(self, other: GraphUpdateResult) -> GraphUpdateResult:
        return GraphUpdateResult(
            **{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        )


@dataclass(slots=True)
class _Turn:
    """The write being built for one message, and what it counted."""

    write: GraphWrite
    by_key: dict[str, Entity]
    created: set[str] = field(default_factory=set)
    added: int = 0
    merged: int = 0
    relations_added: int = 0
    superseded: int = 0
    reinforced: int = 0

    def put_entity(self, entity: Entity) -> None:
        self.write.put_entities = [e for e in self.write.put_entities if e.id != entity.id]
        self.write.put_entities.append(entity)
        for key in entity_keys(entity):
            self.by_key[key] = entity

    def put_relation(self, relation: Relation) -> None:
        self.write.put_relations = [r for r in self.write.put_relations if r.id != relation.id]
        self.write.put_relations.append(relation)


def _clean(text: str) -> str:
    # Lone surrogates become U+FFFD (the rule of sagewai.core._text); controls are dropped.
    text = clean_text(text[:MAX_MESSAGE_CHARS])
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")


_Record = TypeVar("_Record", Entity, Relation)


def _evolve(record: _Record, updates: Mapping[str, Any]) -> _Record:
    """A validated copy of ``record`` with ``updates`` (``model_copy`` would skip validation)."""
    try:
        return type(record).model_validate({**record.model_dump(), **updates})
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {type(record).__name__.lower()}: {exc}") from exc


def usable_entity_name(name: str) -> bool:
    key = name_key(name)
    return (
        bool(key)
        and key not in _JUNK_NAMES
        and len(name) <= _MAX_MENTION_CHARS
        and any(ch.isalnum() for ch in key)
    )


def _parse_time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str) and value.strip():
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


class ConversationGraphBuilder:
    """Turns conversation messages into entities and relations in a project's graph.

    Args:
        graph_store: The project's graph view (``ctx.graph_store`` or
            ``SqliteGraphStore(path).for_project("p")``); a bare store needs ``project_id``.
        entity_extractor: Finds mentions (default: :class:`RuleBasedEntityExtractor`). If it fails
            because its model or dependency is missing, the builder logs once and falls back to
            the rule-based extractor; it never raises inside a conversation loop.
        relation_extractor: Reads triples (default: :class:`HeuristicRelationExtractor`).
        dedup_threshold: Cosine similarity of name embeddings at which two names are merged
            (used only with an ``embedder``; names of different labels never merge this way).
        max_entities_per_message: Most mentions kept per message (highest scores first).
        embedder: Optional embedder for fuzzy name merging.
        project_id: Required only when ``graph_store`` is a bare :class:`GraphStore`.

    Example:
        >>> import asyncio
        >>> from sagewai.stores import InMemoryGraphStore
        >>> graph = InMemoryGraphStore().for_project("demo")
        >>> builder = ConversationGraphBuilder(graph_store=graph)
        >>> result = asyncio.run(builder.process_conversation([
        ...     {"role": "user", "name": "Ana", "content": "I live in Paris."},
        ...     {"role": "user", "name": "Ana", "content": "I moved to Lisbon last month."},
        ... ]))
        >>> result.relations_added, result.relations_superseded
        (2, 1)
    """

    def __init__(
        self,
        graph_store: ProjectGraph | GraphStore | None,
        entity_extractor: EntityExtractor | None = None,
        relation_extractor: RelationExtractor | None = None,
        dedup_threshold: float = 0.85,
        max_entities_per_message: int = 20,
        embedder: Embedder | None = None,
        *,
        project_id: str | None = None,
    ) -> None:
        if graph_store is None:
            raise ConfigurationError(
                "ConversationGraphBuilder needs a graph store: pass ctx.graph_store (an engine "
                "with a graph) or SqliteGraphStore(path).for_project(project_id)"
            )
        if isinstance(graph_store, GraphStore):
            if project_id is None:
                raise ConfigurationError(
                    "graph_store is a shared store: pass project_id=..., or a view from "
                    "store.for_project(project_id)"
                )
            graph_store = graph_store.for_project(project_id)
        if not isinstance(graph_store, ProjectGraph):
            raise ConfigurationError(
                f"graph_store must be a ProjectGraph view, got {type(graph_store).__name__}"
            )
        if not 0.0 < dedup_threshold <= 1.0:
            raise InvalidInputError("dedup_threshold must be in (0, 1]")
        if max_entities_per_message < 1:
            raise InvalidInputError("max_entities_per_message must be positive")
        self.graph = graph_store
        self._fallback = RuleBasedEntityExtractor()
        self.entity_extractor: EntityExtractor = entity_extractor or self._fallback
        self.relation_extractor: RelationExtractor = (
            relation_extractor or HeuristicRelationExtractor()
        )
        self.dedup_threshold = dedup_threshold
        self.max_entities_per_message = max_entities_per_message
        self.embedder = embedder
        self._vectors: dict[str, tuple[Vector, str]] = {}
        self._vectors_loaded = False
        self._warned: set[str] = set()
        self._lock = asyncio.Lock()
        self._turns = 0

    # ----------------------------------------------------------------- public

    async def process_turn(
        self,
        message: str,
        role: str = "user",
        session_id: str | None = None,
        speaker: str | None = None,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> GraphUpdateResult:
        """Extract one message's entities and relations and write them in one atomic write.

        Empty or non-text messages are skipped and counted (``messages_skipped``), never raised.
        First person ("I", "my") refers to ``speaker``, or to an entity named after ``role``.
        """
        if not isinstance(message, str) or not message.strip():
            return GraphUpdateResult(total_messages=1, messages_skipped=1)
        # Everything that is copied into records is checked here, at the boundary: a value
        # that would not validate must never reach a stored entity or relation.
        if session_id is not None:
            validate_identifier(session_id, "session_id")
        if not isinstance(role, str) or not role.strip():
            raise InvalidInputError("role must be non-empty text")
        if speaker is not None:
            if not isinstance(speaker, str):
                raise InvalidInputError("speaker must be text")
            speaker = _clean(speaker)
        if message_id is not None:
            validate_identifier(message_id, "message_id")
        timestamp = aware_time(timestamp, "timestamp")
        async with self._lock:
            self._turns += 1
            return await self._process(
                _clean(message), role, session_id, speaker, message_id, timestamp
            )

    async def process_conversation(
        self,
        conversation: Iterable[Mapping[str, Any] | object],
        *,
        session_id: str | None = None,
    ) -> GraphUpdateResult:
        """Process messages in order: dicts with ``role`` and ``content`` (or ``text``), and
        optionally ``name``/``speaker``, ``id``/``message_id``, ``timestamp``, ``session_id``.

        Malformed items are skipped and counted; the rest of the conversation still runs.
        """
        total = GraphUpdateResult()
        for item in conversation:
            if not isinstance(item, Mapping):
                total += GraphUpdateResult(total_messages=1, messages_skipped=1)
                continue
            content = item.get("content", item.get("text"))
            speaker = item.get("speaker", item.get("name"))
            message_id = item.get("message_id", item.get("id"))
            try:
                total += await self.process_turn(
                    content if isinstance(content, str) else "",
                    role=str(item.get("role") or "user"),
                    session_id=item.get("session_id") or session_id,
                    speaker=speaker if isinstance(speaker, str) and speaker.strip() else None,
                    message_id=str(message_id) if message_id is not None else None,
                    timestamp=_parse_time(item.get("timestamp")),
                )
            except InvalidInputError:  # a bad identifier or time: this item only is skipped
                total += GraphUpdateResult(total_messages=1, messages_skipped=1)
        return total

    # ----------------------------------------------------------------- steps

    def _warn_once(self, key: str, message: str, *args: object) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(message, *args)

    async def _entities(self, text: str) -> list[ExtractedEntity]:
        try:
            found = await self.entity_extractor.extract(text)
        except (ModelNotAvailableError, MissingDependencyError) as exc:
            self._warn_once(
                "entity-model",
                "entity extractor %s is not usable (%s); using the rule-based extractor",
                type(self.entity_extractor).__name__,
                exc,
            )
            self.entity_extractor = self._fallback
            found = await self._fallback.extract(text)
        except ExtractionError as exc:
            self._warn_once(
                "entity-failed",
                "entity extraction failed (%s); using the rule-based extractor "
                "for this message (logged once)",
                exc,
            )
            found = await self._fallback.extract(text)
        usable = [e for e in found if usable_entity_name(e.name)]
        if len(usable) > self.max_entities_per_message:
            best = sorted(usable, key=lambda e: -e.score)[: self.max_entities_per_message]
            usable = sorted(best, key=lambda e: e.start)
        return usable

    async def _relations(
        self, text: str, speaker: str, entities: Sequence[ExtractedEntity]
    ) -> list[ExtractedRelation]:
        try:
            return await self.relation_extractor.extract(text, speaker=speaker, entities=entities)
        except ExtractionError as exc:
            self._warn_once("relation-failed", "relation extraction failed (%s); skipped", exc)
            return []

    async def _process(
        self,
        text: str,
        role: str,
        session_id: str | None,
        speaker: str | None,
        message_id: str | None,
        timestamp: datetime | None,
    ) -> GraphUpdateResult:
        entities = await self._entities(text)
        speaker_name = speaker or role
        relations = await self._relations(text, speaker_name, entities)
        turn = _Turn(GraphWrite(self.graph.project_id), {})
        when = timestamp or utcnow()
        for mention in entities:
            await self._resolve(turn, mention.name, mention.label, session_id, message_id)
        if speaker is not None and usable_entity_name(speaker):
            await self._resolve(turn, speaker, "person", session_id, message_id)
        source = Provenance(
            session_id=session_id,
            message_id=message_id,
            turn_index=self._turns - 1,
            role=role,
            speaker=speaker,
            timestamp=timestamp,
            extractor=type(self.relation_extractor).__name__,
        )
        fresh: set[str] = set()
        for extracted in relations:
            if not (usable_entity_name(extracted.subject) and usable_entity_name(extracted.object)):
                continue
            subject_label = extracted.subject_label or ("person" if role == "user" else "agent")
            subject = await self._resolve(
                turn, extracted.subject, subject_label, session_id, message_id
            )
            obj = await self._resolve(
                turn, extracted.object, extracted.object_label or "entity", session_id, message_id
            )
            if subject.id == obj.id:
                continue
            await self._relate(
                turn,
                subject,
                relation_predicate(extracted.predicate),
                obj,
                extracted.confidence,
                source,
                when,
                fresh,
            )
        await self.graph.apply(turn.write)
        return GraphUpdateResult(
            entities_added=turn.added,
            entities_merged=turn.merged,
            relations_added=turn.relations_added,
            total_messages=1,
            relations_superseded=turn.superseded,
            relations_reinforced=turn.reinforced,
        )

    async def _resolve(
        self,
        turn: _Turn,
        name: str,
        label: str,
        session_id: str | None,
        message_id: str | None,
    ) -> Entity:
        """The entity a mention refers to: found (and updated) or created in ``turn``."""
        name = " ".join(name.split())[:MAX_NAME_CHARS]
        key = name_key(name)
        entity = turn.by_key.get(key)
        if entity is not None:
            return entity
        existing = await self.graph.entities_named(name)
        matched = existing[0] if existing else None
        if existing:
            matched = next((e for e in existing if e.label == label), existing[0])
        elif self.embedder is not None:
            matched = await self._nearest(name, label)
        if matched is None:
            created = Entity(
                project_id=self.graph.project_id,
                name=name,
                label=label,
                session_ids=(session_id,) if session_id else (),
                metadata={"first_message_id": message_id} if message_id else {},
            )
            turn.added += 1
            turn.created.add(created.id)
            turn.put_entity(created)
            await self._remember_vector(created)
            return created
        turn.merged += 1
        updates: dict[str, Any] = {}
        if key not in entity_keys(matched):
            updates["aliases"] = (*matched.aliases, name)
        if session_id and session_id not in matched.session_ids:
            updates["session_ids"] = (*matched.session_ids, session_id)
        if matched.label in _GENERIC_LABELS and label not in _GENERIC_LABELS:
            updates["label"] = label
        merged = _evolve(matched, updates) if updates else matched
        if updates:
            turn.put_entity(merged)
        else:
            for entity_key in entity_keys(merged):
                turn.by_key[entity_key] = merged
        turn.by_key[key] = merged
        return merged

    async def _relate(
        self,
        turn: _Turn,
        subject: Entity,
        predicate: str,
        obj: Entity,
        confidence: float,
        source: Provenance,
        when: datetime,
        fresh: set[str],
    ) -> None:
        pending = {r.id: r for r in turn.write.put_relations}
        stored = (
            []
            if subject.id in turn.created
            else await self.graph.relations(
                subject_id=subject.id, predicate=predicate, active_only=True
            )
        )
        merged = {r.id: pending.get(r.id, r) for r in stored}
        merged.update(
            {
                r.id: r
                for r in pending.values()
                if r.subject_id == subject.id and r.predicate == predicate
            }
        )
        current = {i: r for i, r in merged.items() if r.is_active}
        same = next((r for r in current.values() if r.object_id == obj.id), None)
        if same is not None:
            if source not in same.sources:
                turn.put_relation(
                    _evolve(
                        same,
                        {
                            "sources": (*same.sources, source),
                            "confidence": max(same.confidence, confidence),
                        },
                    )
                )
                turn.reinforced += 1
            return
        relation = Relation(
            project_id=self.graph.project_id,
            subject_id=subject.id,
            predicate=predicate,
            object_id=obj.id,
            valid_from=when,
            confidence=confidence,
            sources=(source,),
        )
        if is_single_valued(predicate):
            for old in current.values():
                if old.id in fresh:
                    continue  # two values in one message: both stand
                turn.put_relation(
                    _evolve(
                        old,
                        {"valid_to": max(when, old.valid_from), "superseded_by": relation.id},
                    )
                )
                turn.superseded += 1
        fresh.add(relation.id)
        turn.put_relation(relation)
        turn.relations_added += 1

    # ----------------------------------------------------------------- embeddings

    async def _remember_vector(self, entity: Entity) -> None:
        if self.embedder is None or not self._vectors_loaded:
            return
        vector = await self.embedder.embed_query(entity.name)
        self._vectors[entity.id] = (vector, entity.label)

    async def _nearest(self, name: str, label: str) -> Entity | None:
        assert self.embedder is not None
        if not self._vectors_loaded:
            known = await self.graph.entities()
            if known:
                matrix = await self.embedder.embed_documents([e.name for e in known])
                self._vectors = {e.id: (matrix[i], e.label) for i, e in enumerate(known)}
            self._vectors_loaded = True
        candidates = [(i, v) for i, (v, lab) in self._vectors.items() if lab == label]
        if not candidates:
            return None
        query = await self.embedder.embed_query(name)
        scores = np.stack([v for _, v in candidates]) @ query
        best = int(np.argmax(scores))
        if float(scores[best]) < self.dedup_threshold:
            return None
        found = await self.graph.get_entity(candidates[best][0])
        if found is None:
            self._vectors.pop(candidates[best][0], None)
        return found
