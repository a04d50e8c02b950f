"""Helpers shared by the evaluations: JSON output, latency summaries, a vector cache.

Nothing here imports another evaluation module, so any of them may import this one (the
package has no import circles: ``beam_recall`` reads ``locomo_recall``, never the reverse).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sagewai.embeddings import Embedder, Vector, Vectors

RESULTS = Path(__file__).resolve().parent / "results"
"""Where an evaluation writes its JSON when no ``--out`` is given (git ignores it)."""


_SUBJECTS = ["Alice", "Bob", "Carol", "Dana", "Eve", "Frank", "Grace", "Hana", "Ivan", "Jo"]
_VERBS = [
    "likes",
    "visited",
    "decided to use",
    "is learning",
    "bought",
    "recommended",
    "moved to",
    "works with",
    "cooked",
    "wrote about",
]
_OBJECTS = [
    "green tea",
    "Lisbon",
    "PostgreSQL",
    "the violin",
    "a red bicycle",
    "sourdough",
    "Kyoto",
    "the billing team",
    "a mystery novel",
    "rust",
    "hiking boots",
    "jazz",
    "the quarterly report",
    "a rescue dog",
    "Berlin",
    "kubernetes",
    "pottery",
]
_TAILS = [
    "last week",
    "in May",
    "with friends",
    "for the third time",
    "after work",
    "on Sunday",
    "because it was cheaper",
    "again",
    "at the conference",
    "",
]


def synthetic_sentences(n: int, seed: int = 7) -> list[str]:
    """``n`` varied, realistic short facts (deterministic for a seed)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_TAILS)} (note {i})".replace("  ", " ")
        for i in range(n)
    ]


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean of latencies in milliseconds (zeros for no samples)."""
    if not samples_ms:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0}
    ordered = sorted(samples_ms)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50_ms": round(pick(0.50), 3),
        "p95_ms": round(pick(0.95), 3),
        "p99_ms": round(pick(0.99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` (plus the machine facts) as indented JSON, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine(), **payload}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


class HashCachingEmbedder:
    """An embedder that remembers vectors by the text's sha256 (within a run, or in a file).

    BEAM's messages are long (up to 350,000 characters): a cache keyed by the texts themselves
    would store them all again; a digest keeps the file small.
    """

    version = "windows-v1"
    """Bumped when the embedder reads texts differently (vectors of long texts change)."""

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.path = path
        self.cache: dict[str, Vector] = {}
        self.embedded = 0
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as stored:
                if str(stored["model"]) == self._model_tag:
                    keys = [str(k) for k in stored["keys"]]
                    self.cache = dict(zip(keys, stored["vectors"], strict=True))

    @property
    def _model_tag(self) -> str:
        return f"{self.inner.name}/{self.version}"

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def name(self) -> str:
        return self.inner.name

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        keys = [self.key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache}
        if missing:
            vectors = await self.inner.embed_documents(list(missing.values()))
            self.embedded += len(missing)
            self.cache.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache[k] for k in keys]).astype(np.float32)

    async def embed_query(self, text: str) -> Vector:
        vector: Vector = (await self.embed_documents([text]))[0]
        return vector

    def save(self) -> None:
        """Write the cache to ``path`` (when one was given)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.cache)
        vectors = np.stack([self.cache[k] for k in keys]) if keys else np.zeros((0, 1))
        np.savez(self.path, model=self._model_tag, keys=np.array(keys), vectors=vectors)
