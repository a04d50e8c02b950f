"""Pure ranking functions: how dense, keyword, recency and strength signals become one score.

Kept free of I/O so retrieval can be tuned and tested without a backend. The engine gathers ranked
candidate lists from the stores and hands them here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from sagewai.records import Fact, ScoreParts

__all__ = ["RankedCandidate", "SearchConfig", "fuse", "recency_score"]


class SearchConfig(BaseModel):
    """Tuning knobs of hybrid search. The defaults were chosen on the LoCoMo dev split.

    Scores are reciprocal-rank fusion (RRF) of the dense and keyword lists, normalised to [0, 1],
    blended with small recency and strength terms:
    ``score = (1 - recency_weight - strength_weight) * fusion + recency_weight * recency
    + strength_weight * strength``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidates: int = Field(default=60, ge=1, le=2000)
    """How many candidates each retriever contributes (at least ``top_k``)."""
    rrf_k: float = Field(default=60.0, gt=0)
    """The RRF constant: larger values flatten the advantage of the first ranks."""
    dense_weight: float = Field(default=1.0, ge=0)
    keyword_weight: float = Field(default=1.0, ge=0)
    recency_weight: float = Field(default=0.02, ge=0, le=0.5)
    recency_halflife_days: float = Field(default=90.0, gt=0)
    strength_weight: float = Field(default=0.02, ge=0, le=0.5)
    track_access: bool = True
    """Record reads in ``last_accessed_at`` (reads keep a fact from decaying)."""


@dataclass(frozen=True, slots=True)
class RankedCandidate:
    """A fact with its fused score and the parts of it."""

    fact: Fact
    score: float
    parts: ScoreParts


def recency_score(fact: Fact, now: datetime, halflife_days: float) -> float:
    """1.0 for a fact valid from now, halving every ``halflife_days`` of age."""
    age_days = max(0.0, (now - fact.effective_from).total_seconds() / 86_400.0)
    return math.pow(0.5, age_days / halflife_days)


def fuse(
    facts: Mapping[str, Fact],
    dense: Sequence[tuple[str, float]],
    keyword: Sequence[tuple[str, float]],
    *,
    config: SearchConfig,
    now: datetime,
    bonus: Mapping[str, float] | None = None,
) -> list[RankedCandidate]:
    """Fuse ranked candidate lists into one ranking.

    Args:
        facts: The hydrated facts by id; ids missing here (deleted, filtered out) are dropped.
        dense: ``(id, cosine)`` best first.
        keyword: ``(id, keyword score)`` best first.
        config: Weights.
        now: The reference time for recency.
        bonus: Extra fusion mass per id (graph expansion), added before normalisation.

    Returns:
        Candidates sorted by score, best first; ties broken by id for determinism.
    """
    dense_rank = {fact_id: rank for rank, (fact_id, _) in enumerate(dense) if fact_id in facts}
    keyword_rank = {fact_id: rank for rank, (fact_id, _) in enumerate(keyword) if fact_id in facts}
    dense_score = dict(dense)
    keyword_score = dict(keyword)
    bonus = bonus or {}
    best = (config.dense_weight + config.keyword_weight) / (config.rrf_k + 1)
    best += max(bonus.values(), default=0.0)
    blend = 1.0 - config.recency_weight - config.strength_weight
    ranked: list[RankedCandidate] = []
    for fact_id in {*dense_rank, *keyword_rank, *(i for i in bonus if i in facts)}:
        fact = facts[fact_id]
        fusion = 0.0
        if fact_id in dense_rank:
            fusion += config.dense_weight / (config.rrf_k + 1 + dense_rank[fact_id])
        if fact_id in keyword_rank:
            fusion += config.keyword_weight / (config.rrf_k + 1 + keyword_rank[fact_id])
        graph = bonus.get(fact_id, 0.0)
        fusion = (fusion + graph) / best if best > 0 else 0.0
        recency = recency_score(fact, now, config.recency_halflife_days)
        strength = min(1.0, fact.strength)
        score = blend * fusion + config.recency_weight * recency + config.strength_weight * strength
        parts = ScoreParts(
            dense=dense_score.get(fact_id) if fact_id in dense_rank else None,
            keyword=keyword_score.get(fact_id) if fact_id in keyword_rank else None,
            dense_rank=dense_rank.get(fact_id),
            keyword_rank=keyword_rank.get(fact_id),
            fusion=fusion,
            recency=recency,
            strength=strength,
            graph=graph,
        )
        ranked.append(RankedCandidate(fact, score, parts))
    ranked.sort(key=lambda candidate: (-candidate.score, candidate.fact.id))
    return ranked
