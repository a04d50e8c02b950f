"""The index entries of new records: one vector each, plus one per piece of a long one.

:meth:`ContextEngine.commit <sagewai.context._engine.ContextEngine.commit>` indexes new records
with these before their metadata lands (see :mod:`sagewai.core._pieces` for why long records
are indexed in pieces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sagewai.core._embedder import Embedder, Vector, Vectors
from sagewai.core._pieces import piece_ids, piece_texts
from sagewai.core._queries import VectorPayload, VectorRecord
from sagewai.core._records import Fact

__all__ = ["vector_records"]


async def vector_records(
    embedder: Embedder, new: Sequence[Fact], vectors: Vectors | Mapping[str, Vector] | None
) -> list[VectorRecord]:
    """The index entries of new records: one vector each, plus one per piece of a long one.

    ``vectors`` gives the own vector of every record (one row per record of ``new``) or of some
    (by record id); the others are computed here. A long record's own vector is the mean of its
    pieces'. Everything left to embed goes to the embedder in one call, each distinct text
    once (a message and its context record, or two equal replies, share their pieces).
    """
    import numpy as np

    given: dict[int, Vector] = {}
    if isinstance(vectors, Mapping):
        given = {row: vectors[fact.id] for row, fact in enumerate(new) if fact.id in vectors}
    elif vectors is not None:
        given = {row: vectors[row] for row in range(len(new))}
    pieces = [piece_texts(fact.content) for fact in new]
    wanted: dict[str, int] = {}
    for row, fact in enumerate(new):
        for text in pieces[row] or ([] if row in given else [fact.content]):
            wanted.setdefault(text, len(wanted))
    embedded: Vectors = (
        await embedder.embed_documents(list(wanted))
        if wanted
        else np.zeros((0, embedder.dimension), dtype=np.float32)
    )
    records: list[VectorRecord] = []
    for row, fact in enumerate(new):
        payload = VectorPayload.of(fact)
        mine = [embedded[wanted[text]] for text in pieces[row]]
        if row in given:
            vector: Vector = given[row]
        elif mine:
            mean = np.mean(mine, axis=0)
            vector = mean / max(float(np.linalg.norm(mean)), 1e-12)
        else:
            vector = embedded[wanted[fact.content]]
        records.append(VectorRecord(fact.id, vector, payload))
        records.extend(
            VectorRecord(piece_id, mine[n], payload)
            for n, piece_id in enumerate(piece_ids(fact.id, fact.content))
        )
    return records
