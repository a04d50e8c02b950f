"""The consolidator's settings: one validated, documented place for every knob.

Why a model and not loose arguments: a consolidation run is scheduled (cron, systemd, Kubernetes)
and changes stored knowledge, so a typo in a threshold must fail at construction with a clear
message, never half-way through a night run. The settings also form the fingerprint that decides
whether an interrupted run may be resumed (resuming under other settings would mix two policies).
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Self, TypedDict

from pydantic import Field, model_validator

from sagewai.core._settings import Settings

__all__ = ["ConsolidationOptions", "ConsolidationSettings", "ContradictionStrategy"]


class ContradictionStrategy(StrEnum):
    """What to do when two stored facts cannot both be true."""

    KEEP_NEWER = "keep_newer"
    """The later statement wins; the older gets its validity closed (``valid_to``)."""
    KEEP_HIGHER_CONFIDENCE = "keep_higher_confidence"
    """The statement with the higher confidence wins (the newer on a tie)."""
    FLAG = "flag"
    """Neither wins: both are marked FLAGGED for a human and both stay retrievable."""


class ConsolidationSettings(Settings):
    """Validated settings of :class:`~sagewai.intelligence.MemoryConsolidator`.

    Example:
        >>> ConsolidationSettings(similarity_threshold=0.95).contradiction_strategy
        <ContradictionStrategy.KEEP_NEWER: 'keep_newer'>
    """

    kind = "consolidation"

    decay_halflife_days: float = Field(default=30.0, gt=0, le=36_500)
    """Days without use or reinforcement after which a fact's strength has halved."""
    similarity_threshold: float = Field(default=0.92, gt=0.0, le=1.0)
    """Cosine similarity at or above which two facts are near-duplicates."""
    structure_threshold: float = Field(default=0.75, gt=0.0, le=1.0)
    """Cosine at or above which two facts that state the same subject, predicate and object (or
    the same words in another order) merge although they are below ``similarity_threshold``
    ("Eli keeps recommending chess" / "Eli recommends chess"). Set it to the similarity
    threshold to merge on cosine (and agreeing structure) only."""
    contradiction_strategy: ContradictionStrategy = ContradictionStrategy.KEEP_NEWER
    """How contradictions are resolved (see :class:`ContradictionStrategy`)."""
    batch_size: int = Field(default=100, ge=1, le=10_000)
    """Facts per batch; each batch is one transaction and bounds the memory of a run."""
    archive_below: float = Field(default=0.05, ge=0.0, lt=1.0)
    """Decayed strength under which a fact is archived (kept, but no longer searched)."""
    decay_min_change: float = Field(default=0.05, gt=0.0, le=1.0)
    """Smallest drop in strength worth writing; smaller drops are left for a later run, which
    keeps the audit log to a handful of decay rows per fact over its whole life."""
    neighbours: int = Field(default=8, ge=1, le=1_000)
    """Nearest neighbours asked for first; doubled while every hit is still a duplicate."""
    max_neighbours: int = Field(default=512, ge=1, le=1_000)
    """Cap on the neighbours considered per fact (a cluster larger than this is split)."""
    search_ef: int | None = Field(default=32, ge=1, le=4_096)
    """Beam of the nearest-neighbour searches in an approximate index (``None``: the store's
    own, 128 on the embedded default). Near-duplicates are a fact's very nearest points, which a
    narrow beam finds: with 32 the benchmark's duplicate recall was 1.00 at 100k facts and 0.986
    at 1M (``benchmarks/consolidation_bench.py``)."""
    reading_process_from: int | None = Field(default=50_000, ge=0)
    """Facts in a full run from which their words are read in a child Python process, on the
    machine's other core, while this one reads the store (``None``: always in this process).
    The decisions are the same either way; below this size starting the child costs more than
    it saves."""
    writing_process_from: int | None = Field(default=50_000, ge=0)
    """Facts in a run from which its batches are written by a child Python process, on the
    machine's other core, while this one decides the next batch (the embedded SQLite store
    only; ``None``: always in this process). The decisions are the same either way."""
    max_report_actions: int | None = Field(default=10_000, ge=0)
    """How many actions the report lists (``None``: all); the audit log always has them all."""
    reflect: bool = False
    """Write a synthesis per subject after the run's other steps: what is current about it,
    linked to the facts it rests on (see ``docs/consolidation.md``, "Reflection")."""
    reflection_min_facts: int = Field(default=3, ge=1, le=1_000)
    """Current facts a subject needs (in one scope) before it gets a synthesis; with fewer, a
    synthesis it had is archived."""
    reflection_max_facts: int = Field(default=12, ge=1, le=200)
    """The most recent current facts of a subject a synthesis lists (it stays short)."""
    reflection_model: str | None = None
    """A litellm model name that writes the syntheses (``None``: the offline rules write a
    plain one). A written one that drops or alters an exact value is replaced by the plain one."""

    @model_validator(mode="after")
    def _neighbour_bounds(self) -> Self:
        if self.neighbours > self.max_neighbours:
            raise ValueError("neighbours must not exceed max_neighbours")
        return self

    def fingerprint(self) -> str:
        """A short hash of the settings that change decisions (not of performance knobs)."""
        deciding = self.model_dump(
            mode="json",
            include={
                "decay_halflife_days",
                "similarity_threshold",
                "structure_threshold",
                "contradiction_strategy",
                "archive_below",
                "decay_min_change",
            },
        )
        text = json.dumps(deciding, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


class ConsolidationOptions(TypedDict, total=False):
    """The fields of :class:`ConsolidationSettings`, accepted by name by ``MemoryConsolidator``."""

    decay_halflife_days: float
    similarity_threshold: float
    structure_threshold: float
    contradiction_strategy: ContradictionStrategy | str
    batch_size: int
    archive_below: float
    decay_min_change: float
    neighbours: int
    max_neighbours: int
    search_ef: int | None
    reading_process_from: int | None
    writing_process_from: int | None
    max_report_actions: int | None
    reflect: bool
    reflection_min_facts: int
    reflection_max_facts: int
    reflection_model: str | None
