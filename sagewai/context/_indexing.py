"""The index entries of new records: one vector each, plus one per piece of a long one.

:meth:`ContextEngine.commit <sagewai.context._engine.ContextEngine.commit>` indexes new records
with these before their metadata lands (see :mod:`sagewai.core._pieces` for why long records
are indexed in pieces).
"""

from __future__ import annotations

from collections.abc import Sequence

from sagewai.core._embedder import Embedder, Vector, Vectors
from sagewai.core._pieces import piece_ids, piece_texts
from sagewai.core._queries import VectorPayload, VectorRecord
from sagewai.core._records import Fact

__all__ = ["vector_records"]


async def vector_records(
    embedder: Embedder, new: Sequence[Fact], vectors: Vectors | None
) -> list[VectorRecord]:
    """The index entries of new records: one vector each, plus one per piece of a long one.

    A long record's own vector is the mean of its pieces' (unless the caller embedded it).
    """
    import numpy as np

    pieces = [piece_texts(fact.content) for fact in new]
    flat = [text for texts in pieces for text in texts]
    piece_vectors = await embedder.embed_documents(flat) if flat else None
    if vectors is None:
        short = [row for row, texts in enumerate(pieces) if not texts]
        embedded = await embedder.embed_documents([new[row].content for row in short])
        own: dict[int, Vector] = dict(zip(short, embedded, strict=True))
    records: list[VectorRecord] = []
    offset = 0
    for row, fact in enumerate(new):
        payload = VectorPayload.of(fact)
        mine: Vectors = (
            np.zeros((0, embedder.dimension), dtype=np.float32)
            if piece_vectors is None
            else piece_vectors[offset : offset + len(pieces[row])]
        )
        offset += len(pieces[row])
        if vectors is not None:
            vector: Vector = vectors[row]
        elif len(mine):
            mean = mine.mean(axis=0)
            vector = mean / max(float(np.linalg.norm(mean)), 1e-12)
        else:
            vector = own[row]
        records.append(VectorRecord(fact.id, vector, payload))
        records.extend(
            VectorRecord(piece_id, mine[n], payload)
            for n, piece_id in enumerate(piece_ids(fact.id, fact.content))
        )
    return records
