"""The graph store contract: :class:`GraphStore` and its per-project view :class:`ProjectGraph`.

A graph store is shared by many projects, so every core method takes ``project_id`` explicitly and
never returns, changes or deletes another project's data. Backends implement a narrow async core
(``_apply`` one atomic :class:`GraphWrite`, a few fetches, ``_delete_project``); validation,
scoping, traversal and forgetting are written once here, above them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from datetime import datetime
from types import TracebackType
from typing import Self, TypeVar

from sagewai.core._graph_matching import (
    adjacency_of,
    entity_keys,
    mention_keys,
    name_key,
    plan_session_forget,
    simple_paths,
)
from sagewai.core._graph_records import (
    Entity,
    GraphCounts,
    GraphDeletion,
    GraphPath,
    GraphWrite,
    Neighbourhood,
    Relation,
)
from sagewai.core._scope import validate_identifier
from sagewai.errors import IntegrityError, InvalidInputError

__all__ = ["MAX_DEPTH", "GraphMemory", "GraphStore", "GraphWrite", "ProjectGraph"]

MAX_DEPTH = 4
"""Deepest traversal :meth:`GraphStore.neighbours` and :meth:`GraphStore.paths` accept."""

_R = TypeVar("_R", Entity, Relation)


class GraphStore(ABC):
    """A knowledge graph of entities and time-bounded relations, shared by many projects.

    Subclasses implement the private core; everything public is defined here once. Use
    :meth:`for_project` to get a view bound to one project (what ``ContextEngine.graph_store``
    returns and what :class:`~sagewai.intelligence.ConversationGraphBuilder` takes).

    Example:
        >>> import asyncio
        >>> from sagewai.stores import InMemoryGraphStore
        >>> from sagewai.graph import Entity, Relation
        >>> async def demo() -> list[str]:
        ...     graph = InMemoryGraphStore().for_project("demo")
        ...     alice = await graph.upsert_entity(Entity(project_id="demo", name="Alice"))
        ...     acme = await graph.upsert_entity(Entity(project_id="demo", name="Acme"))
        ...     await graph.upsert_relation(Relation(project_id="demo", subject_id=alice.id,
        ...                                          predicate="works_at", object_id=acme.id))
        ...     found = await graph.find_entities("Where does alice work?")
        ...     around = await graph.neighbours(found[0].id)
        ...     return [e.name for e in around.entities]
        >>> asyncio.run(demo())
        ['Acme']
    """

    # ----------------------------------------------------------------- the backend core

    @abstractmethod
    async def _apply(self, write: GraphWrite) -> None:
        """Apply a validated write atomically (see :class:`GraphWrite` for the order)."""

    @abstractmethod
    async def _get_entities(self, project_id: str, ids: Sequence[str]) -> list[Entity]:
        """Entities of the project with these ids (missing ids are skipped)."""

    @abstractmethod
    async def _entities(self, project_id: str) -> list[Entity]:
        """Every entity of the project."""

    @abstractmethod
    async def _relations(self, project_id: str) -> list[Relation]:
        """Every relation of the project."""

    @abstractmethod
    async def _relations_touching(
        self, project_id: str, entity_ids: Sequence[str]
    ) -> list[Relation]:
        """Relations of the project whose subject or object is one of ``entity_ids``."""

    @abstractmethod
    async def _delete_project(self, project_id: str) -> tuple[int, int]:
        """Delete every entity and relation of the project; returns how many of each."""

    async def _entities_by_keys(self, project_id: str, keys: Collection[str]) -> list[Entity]:
        """Entities with a name or alias whose :func:`name_key` is in ``keys``.

        The default scans the project; backends with an index override it.
        """
        wanted = set(keys)
        return [e for e in await self._entities(project_id) if wanted.intersection(entity_keys(e))]

    async def open(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Connect now instead of at first use (backends otherwise open lazily)."""

    async def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections and files. Safe to call twice; a later call reopens."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # ----------------------------------------------------------------- views

    def for_project(self, project_id: str) -> ProjectGraph:
        """A view of this store bound to one project: the same operations without ``project_id``."""
        return ProjectGraph(self, project_id)

    # ----------------------------------------------------------------- writes

    async def apply(self, write: GraphWrite) -> None:
        """Apply ``write`` atomically, after checking scope and that every edge has both ends.

        Raises:
            InvalidInputError: a record belongs to another project, or the batch is too big.
            IntegrityError: a relation names an entity that neither exists in the project nor is
                written by the same batch.
        """
        write.validate()
        if write.empty:
            return
        if write.put_relations:
            ends = {r.subject_id for r in write.put_relations} | {
                r.object_id for r in write.put_relations
            }
            ends -= {e.id for e in write.put_entities}
            doomed = set(write.delete_entities)
            found = {e.id for e in await self._get_entities(write.project_id, sorted(ends))}
            missing = sorted((ends - found) | (ends & doomed))
            if missing:
                raise IntegrityError(
                    f"relations name entities that are not in project {write.project_id!r}: "
                    + ", ".join(repr(m) for m in missing[:5])
                )
        await self._apply(write)

    async def upsert_entities(self, project_id: str, entities: Sequence[Entity]) -> None:
        """Insert or replace entities (matched by id) in one atomic write."""
        await self.apply(GraphWrite(project_id, put_entities=list(entities)))

    async def upsert_entity(self, project_id: str, entity: Entity) -> Entity:
        """Insert or replace one entity; returns it."""
        await self.upsert_entities(project_id, [entity])
        return entity

    async def upsert_relations(self, project_id: str, relations: Sequence[Relation]) -> None:
        """Insert or replace relations (matched by id); both ends must exist in the project."""
        await self.apply(GraphWrite(project_id, put_relations=list(relations)))

    async def upsert_relation(self, project_id: str, relation: Relation) -> Relation:
        """Insert or replace one relation; returns it."""
        await self.upsert_relations(project_id, [relation])
        return relation

    # ----------------------------------------------------------------- reads

    async def get_entity(self, project_id: str, entity_id: str) -> Entity | None:
        """The entity with this id in the project, or ``None``."""
        found = await self.get_entities(project_id, [entity_id])
        return found[0] if found else None

    async def get_entities(self, project_id: str, ids: Sequence[str]) -> list[Entity]:
        """Entities with these ids, in the order asked, skipping unknown ids."""
        validate_identifier(project_id, "project_id")
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        by_id = {e.id: e for e in await self._get_entities(project_id, ids) if _own(e, project_id)}
        return [by_id[i] for i in ids if i in by_id]

    async def entities(self, project_id: str, *, label: str | None = None) -> list[Entity]:
        """Every entity of the project (optionally of one label), oldest first."""
        validate_identifier(project_id, "project_id")
        found = [
            e
            for e in await self._entities(project_id)
            if _own(e, project_id) and (label is None or e.label == label)
        ]
        return sorted(found, key=lambda e: (e.created_at, e.id))

    async def relations(
        self,
        project_id: str,
        *,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        active_only: bool = False,
        valid_at: datetime | None = None,
    ) -> list[Relation]:
        """Relations of the project matching every given filter, oldest first."""
        validate_identifier(project_id, "project_id")
        ends = [i for i in (subject_id, object_id) if i is not None]
        pool = (
            await self._relations_touching(project_id, ends)
            if ends
            else await self._relations(project_id)
        )
        found = [
            r
            for r in pool
            if _own(r, project_id)
            and (subject_id is None or r.subject_id == subject_id)
            and (object_id is None or r.object_id == object_id)
            and (predicate is None or r.predicate == predicate)
            and (not active_only or r.is_active)
            and (valid_at is None or r.valid_at(valid_at))
        ]
        return sorted(_unique(found), key=lambda r: (r.created_at, r.id))

    async def entities_named(self, project_id: str, name: str) -> list[Entity]:
        """Entities whose name or an alias is ``name`` up to case, spacing and edge punctuation."""
        validate_identifier(project_id, "project_id")
        key = name_key(name)
        if not key:
            return []
        found = await self._entities_by_keys(project_id, [key])
        return sorted(
            (e for e in found if _own(e, project_id) and key in entity_keys(e)),
            key=lambda e: (e.created_at, e.id),
        )

    async def find_entities(self, project_id: str, text: str) -> list[Entity]:
        """Entities whose name or an alias occurs in ``text`` (case-insensitive, word-bounded).

        This is what graph-aware retrieval calls on a query to find the entities it names.
        Longer matches come first, so "Alice Smith" ranks before "Alice".
        """
        validate_identifier(project_id, "project_id")
        candidates = mention_keys(text)
        if not candidates:
            return []
        found = [
            e
            for e in await self._entities_by_keys(project_id, candidates)
            if _own(e, project_id) and candidates.intersection(entity_keys(e))
        ]

        def longest(entity: Entity) -> int:
            return max(len(k) for k in entity_keys(entity) if k in candidates)

        return sorted(_unique(found), key=lambda e: (-longest(e), e.created_at, e.id))

    async def search_entities(
        self, project_id: str, query: str, *, limit: int = 10
    ) -> list[Entity]:
        """Entities by name or alias: exact matches first, then names that contain ``query``."""
        if limit <= 0:
            raise InvalidInputError("limit must be positive")
        key = name_key(query)
        if not key:
            return []
        exact = await self.entities_named(project_id, query)
        if len(exact) >= limit:
            return exact[:limit]
        seen = {e.id for e in exact}
        partial = [
            e
            for e in await self.entities(project_id)
            if e.id not in seen and any(key in k for k in entity_keys(e))
        ]
        partial.sort(key=lambda e: (min(len(k) for k in entity_keys(e) if key in k), e.name))
        return [*exact, *partial][:limit]

    async def neighbours(
        self, project_id: str, entity_id: str, depth: int = 1, *, active_only: bool = True
    ) -> Neighbourhood:
        """The entities within ``depth`` edges of an entity, and the relations that join them.

        Edges are walked in both directions. With ``active_only`` (the default) relations whose
        validity ended are not walked; pass ``False`` to include the history.

        Raises:
            InvalidInputError: ``depth`` is out of range or the entity is not in the project.
        """
        _check_depth(depth)
        center = await self.get_entity(project_id, entity_id)
        if center is None:
            raise InvalidInputError(f"no entity {entity_id!r} in project {project_id!r}")
        seen = {center.id}
        order: list[str] = []
        walked: dict[str, Relation] = {}
        frontier = [center.id]
        for _ in range(depth):
            if not frontier:
                break
            touching = await self._relations_touching(project_id, frontier)
            frontier_set = set(frontier)
            next_frontier: list[str] = []
            for relation in sorted(_unique(touching), key=lambda r: (r.created_at, r.id)):
                if not _own(relation, project_id) or (active_only and not relation.is_active):
                    continue
                if not {relation.subject_id, relation.object_id} & frontier_set:
                    continue
                walked.setdefault(relation.id, relation)
                for end in (relation.subject_id, relation.object_id):
                    if end not in seen:
                        seen.add(end)
                        order.append(end)
                        next_frontier.append(end)
            frontier = next_frontier
        entities = await self.get_entities(project_id, order)
        return Neighbourhood(
            center=center, entities=tuple(entities), relations=tuple(walked.values())
        )

    async def paths(
        self,
        project_id: str,
        source_id: str,
        target_id: str,
        *,
        max_depth: int = 3,
        limit: int = 10,
        active_only: bool = True,
    ) -> list[GraphPath]:
        """Simple paths joining two entities, shortest first, walking edges in both directions."""
        _check_depth(max_depth)
        if limit <= 0:
            raise InvalidInputError("limit must be positive")
        ends = await self.get_entities(project_id, [source_id, target_id])
        if len(ends) < 2:
            return []
        relations: dict[str, Relation] = {}
        seen = {source_id}
        frontier = [source_id]
        for _ in range(max_depth):
            if not frontier:
                break
            next_frontier: list[str] = []
            for relation in await self._relations_touching(project_id, frontier):
                if not _own(relation, project_id) or (active_only and not relation.is_active):
                    continue
                relations[relation.id] = relation
                for end in (relation.subject_id, relation.object_id):
                    if end not in seen:
                        seen.add(end)
                        next_frontier.append(end)
            frontier = next_frontier
        found = simple_paths(
            adjacency_of(relations.values()),
            source_id,
            target_id,
            max_depth=max_depth,
            limit=limit,
        )
        needed = list(dict.fromkeys(node for path in found for node, _ in path))
        by_id = {e.id: e for e in await self.get_entities(project_id, needed)}
        by_id[source_id] = ends[0]
        out = []
        for path in found:
            if all(node in by_id for node, _ in path):
                out.append(
                    GraphPath(
                        entities=(ends[0], *(by_id[node] for node, _ in path)),
                        relations=tuple(relation for _, relation in path),
                    )
                )
        return out

    async def counts(self, project_id: str) -> GraphCounts:
        """How many entities and relations (and active relations) the project holds."""
        validate_identifier(project_id, "project_id")
        relations = [r for r in await self._relations(project_id) if _own(r, project_id)]
        entities = [e for e in await self._entities(project_id) if _own(e, project_id)]
        return GraphCounts(
            entities=len(entities),
            relations=len(relations),
            active_relations=sum(1 for r in relations if r.is_active),
        )

    # ----------------------------------------------------------------- forgetting

    async def delete_entities(self, project_id: str, entity_ids: Sequence[str]) -> GraphDeletion:
        """Delete entities of the project together with every edge that touches them."""
        present = [e.id for e in await self.get_entities(project_id, entity_ids)]
        if not present:
            return GraphDeletion()
        touching = _unique(
            [r for r in await self._relations_touching(project_id, present) if _own(r, project_id)]
        )
        await self.apply(GraphWrite(project_id, delete_entities=present, delete_relations=touching))
        return GraphDeletion(entities_deleted=len(present), relations_deleted=len(touching))

    async def delete_subject(self, project_id: str, name: str) -> GraphDeletion:
        """Forget a subject: every entity named (or aliased) ``name``, with its edges."""
        named = await self.entities_named(project_id, name)
        return await self.delete_entities(project_id, [e.id for e in named])

    async def delete_session(
        self, project_id: str, session_id: str, *, subject: str | None = None
    ) -> GraphDeletion:
        """Forget a session: see :func:`~sagewai.core._graph_matching.plan_session_forget`.

        With ``subject``, only what the session said about that subject (AND): the session is
        forgotten from the entities named ``subject`` and from the edges that touch them; every
        other entity of the session is left as it is.
        """
        validate_identifier(project_id, "project_id")
        validate_identifier(session_id, "session_id")
        if subject is None:
            entities = [e for e in await self._entities(project_id) if _own(e, project_id)]
            relations = [r for r in await self._relations(project_id) if _own(r, project_id)]
        else:
            entities = await self.entities_named(project_id, subject)
            relations = (
                _unique(
                    [
                        r
                        for r in await self._relations_touching(
                            project_id, [e.id for e in entities]
                        )
                        if _own(r, project_id)
                    ]
                )
                if entities
                else []
            )
        plan = plan_session_forget(session_id, entities, relations)
        write = GraphWrite(
            project_id,
            put_entities=plan.update_entities,
            put_relations=plan.update_relations,
            delete_entities=plan.delete_entities,
            delete_relations=plan.delete_relations,
        )
        write.validate()
        if not write.empty:
            await self._apply(write)
        return GraphDeletion(
            entities_deleted=len(plan.delete_entities),
            relations_deleted=len(plan.delete_relations),
            relations_updated=len(plan.update_relations),
            entities_updated=len(plan.update_entities),
        )

    async def delete_project(self, project_id: str) -> GraphDeletion:
        """Forget a whole project's graph. Other projects are untouched."""
        validate_identifier(project_id, "project_id")
        entities, relations = await self._delete_project(project_id)
        return GraphDeletion(entities_deleted=entities, relations_deleted=relations)


def _own(record: Entity | Relation, project_id: str) -> bool:
    return record.project_id == project_id


def _unique(records: Sequence[_R]) -> list[_R]:
    seen: set[str] = set()
    out = []
    for record in records:
        if record.id not in seen:
            seen.add(record.id)
            out.append(record)
    return out


def _check_depth(depth: int) -> None:
    if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidInputError(f"depth must be an integer from 1 to {MAX_DEPTH}, got {depth!r}")


GraphMemory = GraphStore
"""The seed's name of :class:`GraphStore` (DESIGN's diagram: ``GraphMemory``)."""


class ProjectGraph:
    """One project's view of a shared :class:`GraphStore`: the same operations, no ``project_id``.

    Everything read or written through the view is confined to its project. Build one with
    ``store.for_project("p")``; ``ContextEngine.graph_store`` returns one.

    Example:
        >>> from sagewai.stores import InMemoryGraphStore
        >>> graph = InMemoryGraphStore().for_project("demo")
        >>> graph.project_id
        'demo'
    """

    __slots__ = ("_project_id", "_store")

    def __init__(self, store: GraphStore, project_id: str) -> None:
        self._store = store
        self._project_id = validate_identifier(project_id, "project_id")

    def __repr__(self) -> str:
        return f"ProjectGraph({type(self._store).__name__}, project_id={self._project_id!r})"

    @property
    def project_id(self) -> str:
        """The project this view is bound to."""
        return self._project_id

    @property
    def store(self) -> GraphStore:
        """The shared store behind the view."""
        return self._store

    async def open(self) -> None:
        """Open the store behind the view (see :meth:`GraphStore.open`)."""
        await self._store.open()

    async def close(self) -> None:
        """Close the store behind the view; other views of the same store close with it."""
        await self._store.close()

    def write(self) -> GraphWrite:
        """An empty :class:`GraphWrite` for this project, to fill and pass to :meth:`apply`."""
        return GraphWrite(self._project_id)

    async def apply(self, write: GraphWrite) -> None:
        """See :meth:`GraphStore.apply`; the write must be for this view's project."""
        if write.project_id != self._project_id:
            raise InvalidInputError(
                f"this view is bound to project {self._project_id!r}, not {write.project_id!r}"
            )
        await self._store.apply(write)

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """See :meth:`GraphStore.upsert_entities`."""
        await self._store.upsert_entities(self._project_id, entities)

    async def upsert_entity(self, entity: Entity) -> Entity:
        """See :meth:`GraphStore.upsert_entity`."""
        return await self._store.upsert_entity(self._project_id, entity)

    async def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """See :meth:`GraphStore.upsert_relations`."""
        await self._store.upsert_relations(self._project_id, relations)

    async def upsert_relation(self, relation: Relation) -> Relation:
        """See :meth:`GraphStore.upsert_relation`."""
        return await self._store.upsert_relation(self._project_id, relation)

    async def get_entity(self, entity_id: str) -> Entity | None:
        """See :meth:`GraphStore.get_entity`."""
        return await self._store.get_entity(self._project_id, entity_id)

    async def get_entities(self, ids: Sequence[str]) -> list[Entity]:
        """See :meth:`GraphStore.get_entities`."""
        return await self._store.get_entities(self._project_id, ids)

    async def entities(self, *, label: str | None = None) -> list[Entity]:
        """See :meth:`GraphStore.entities`."""
        return await self._store.entities(self._project_id, label=label)

    async def relations(
        self,
        *,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        active_only: bool = False,
        valid_at: datetime | None = None,
    ) -> list[Relation]:
        """See :meth:`GraphStore.relations`."""
        return await self._store.relations(
            self._project_id,
            subject_id=subject_id,
            object_id=object_id,
            predicate=predicate,
            active_only=active_only,
            valid_at=valid_at,
        )

    async def entities_named(self, name: str) -> list[Entity]:
        """See :meth:`GraphStore.entities_named`."""
        return await self._store.entities_named(self._project_id, name)

    async def find_entities(self, text: str) -> list[Entity]:
        """See :meth:`GraphStore.find_entities`."""
        return await self._store.find_entities(self._project_id, text)

    async def search_entities(self, query: str, *, limit: int = 10) -> list[Entity]:
        """See :meth:`GraphStore.search_entities`."""
        return await self._store.search_entities(self._project_id, query, limit=limit)

    async def neighbours(
        self, entity_id: str, depth: int = 1, *, active_only: bool = True
    ) -> Neighbourhood:
        """See :meth:`GraphStore.neighbours`."""
        return await self._store.neighbours(
            self._project_id, entity_id, depth, active_only=active_only
        )

    async def paths(
        self,
        source_id: str,
        target_id: str,
        *,
        max_depth: int = 3,
        limit: int = 10,
        active_only: bool = True,
    ) -> list[GraphPath]:
        """See :meth:`GraphStore.paths`."""
        return await self._store.paths(
            self._project_id,
            source_id,
            target_id,
            max_depth=max_depth,
            limit=limit,
            active_only=active_only,
        )

    async def counts(self) -> GraphCounts:
        """See :meth:`GraphStore.counts`."""
        return await self._store.counts(self._project_id)

    async def delete_entities(self, entity_ids: Sequence[str]) -> GraphDeletion:
        """See :meth:`GraphStore.delete_entities`."""
        return await self._store.delete_entities(self._project_id, entity_ids)

    async def delete_subject(self, name: str) -> GraphDeletion:
        """See :meth:`GraphStore.delete_subject`."""
        return await self._store.delete_subject(self._project_id, name)

    async def delete_session(self, session_id: str, *, subject: str | None = None) -> GraphDeletion:
        """See :meth:`GraphStore.delete_session`."""
        return await self._store.delete_session(self._project_id, session_id, subject=subject)

    async def delete_all(self) -> GraphDeletion:
        """Forget this project's whole graph (see :meth:`GraphStore.delete_project`)."""
        return await self._store.delete_project(self._project_id)
