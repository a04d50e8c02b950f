"""An in-memory graph store: a real implementation held in dictionaries, lost when the process ends.

It passes the same conformance suite as the SQLite and NebulaGraph stores; use it in tests and for
short-lived agents. Use :class:`~sagewai.graph.SqliteGraphStore` for a graph that persists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from sagewai.core._graph_matching import entity_keys
from sagewai.core._graph_records import Entity, Relation
from sagewai.stores.base._graph import GraphStore, GraphWrite

__all__ = ["InMemoryGraphStore"]


class _ProjectData:
    __slots__ = ("by_end", "by_key", "entities", "relations")

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.relations: dict[str, Relation] = {}
        self.by_key: dict[str, set[str]] = defaultdict(set)
        self.by_end: dict[str, set[str]] = defaultdict(set)

    def _unindex_entity(self, entity_id: str) -> None:
        old = self.entities.get(entity_id)
        if old is not None:
            for key in entity_keys(old):
                self.by_key[key].discard(entity_id)
                if not self.by_key[key]:
                    del self.by_key[key]

    def _unindex_relation(self, relation_id: str) -> None:
        old = self.relations.get(relation_id)
        if old is not None:
            for end in (old.subject_id, old.object_id):
                self.by_end[end].discard(relation_id)
                if not self.by_end[end]:
                    del self.by_end[end]

    def put_entity(self, entity: Entity) -> None:
        self._unindex_entity(entity.id)
        self.entities[entity.id] = entity
        for key in entity_keys(entity):
            self.by_key[key].add(entity.id)

    def put_relation(self, relation: Relation) -> None:
        self._unindex_relation(relation.id)
        self.relations[relation.id] = relation
        self.by_end[relation.subject_id].add(relation.id)
        self.by_end[relation.object_id].add(relation.id)

    def delete_relation(self, relation_id: str) -> None:
        self._unindex_relation(relation_id)
        self.relations.pop(relation_id, None)

    def delete_entity(self, entity_id: str) -> None:
        for relation_id in list(self.by_end.get(entity_id, ())):
            self.delete_relation(relation_id)
        self._unindex_entity(entity_id)
        self.entities.pop(entity_id, None)


class InMemoryGraphStore(GraphStore):
    """Entities, relations and their indexes (name keys, edge ends) in process memory, per project.

    Example:
        >>> from sagewai.stores import InMemoryGraphStore
        >>> graph = InMemoryGraphStore().for_project("demo")
    """

    def __init__(self) -> None:
        self._projects: dict[str, _ProjectData] = {}

    def _data(self, project_id: str) -> _ProjectData | None:
        return self._projects.get(project_id)

    async def _apply(self, write: GraphWrite) -> None:
        # The write was validated above, so none of the steps below can fail half-way.
        data = self._projects.setdefault(write.project_id, _ProjectData())
        for relation in write.delete_relations:
            data.delete_relation(relation.id)
        for entity_id in write.delete_entities:
            data.delete_entity(entity_id)
        for entity in write.put_entities:
            data.put_entity(entity)
        for relation in write.put_relations:
            data.put_relation(relation)

    async def _get_entities(self, project_id: str, ids: Sequence[str]) -> list[Entity]:
        data = self._data(project_id)
        if data is None:
            return []
        return [data.entities[i] for i in ids if i in data.entities]

    async def _entities(self, project_id: str) -> list[Entity]:
        data = self._data(project_id)
        return [] if data is None else list(data.entities.values())

    async def _entities_by_keys(self, project_id: str, keys: Collection[str]) -> list[Entity]:
        data = self._data(project_id)
        if data is None:
            return []
        ids: set[str] = set()
        for key in keys:
            ids |= data.by_key.get(key, set())
        return [data.entities[i] for i in sorted(ids)]

    async def _relations(self, project_id: str) -> list[Relation]:
        data = self._data(project_id)
        return [] if data is None else list(data.relations.values())

    async def _relations_touching(
        self, project_id: str, entity_ids: Sequence[str]
    ) -> list[Relation]:
        data = self._data(project_id)
        if data is None:
            return []
        ids: set[str] = set()
        for entity_id in entity_ids:
            ids |= data.by_end.get(entity_id, set())
        return [data.relations[i] for i in sorted(ids)]

    async def _delete_project(self, project_id: str) -> tuple[int, int]:
        data = self._projects.pop(project_id, None)
        if data is None:
            return (0, 0)
        return (len(data.entities), len(data.relations))
