"""What a consolidation run reports: counts, timing, and every action with its reason.

Why a list of actions and not only counts: consolidation changes stored knowledge unattended, so an
operator must be able to read what it did (or, under ``dry_run``, what it would do) fact by fact,
with the rule that decided it, and compare a dry run with the real run that follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["ActionKind", "ConsolidationAction", "ConsolidationProgress", "ConsolidationReport"]


class ActionKind(StrEnum):
    """What one consolidation action did."""

    MERGE = "merge"
    """Near-duplicates folded into one canonical fact."""
    SUPERSEDE = "supersede"
    """A contradicted fact replaced by the one that wins (its validity closed)."""
    FLAG = "flag"
    """Contradicting facts marked for review, all kept retrievable."""
    DECAY = "decay"
    """A fact's strength lowered after a time without use."""
    ARCHIVE = "archive"
    """A fact decayed below the floor and archived (kept, no longer searched)."""
    REFRESH = "refresh"
    """A decayed fact's strength raised again because it was used since."""
    REFLECT = "reflect"
    """A subject's synthesis written, rewritten because its facts changed, or archived."""


class ConsolidationAction(BaseModel):
    """One decision of a run: what, on which facts, by which rule, and why.

    ``fact_ids`` are the facts the action changes; ``target_id`` is the fact that absorbs them
    (MERGE) or replaces them (SUPERSEDE). ``change_ids`` name the audit rows written (empty under
    ``dry_run``), so ``ContextEngine.revert`` can undo each of them.
    """

    model_config = ConfigDict(frozen=True)

    kind: ActionKind
    rule: str
    fact_ids: tuple[str, ...]
    target_id: str | None = None
    reason: str
    details: dict[str, JsonValue] = Field(default_factory=dict)
    change_ids: tuple[str, ...] = ()

    def comparable(self) -> dict[str, JsonValue]:
        """The action without its audit row ids, to compare a dry run with a real run."""
        return self.model_dump(mode="json", exclude={"change_ids"})


class ConsolidationReport(BaseModel):
    """The outcome of :meth:`MemoryConsolidator.consolidate`.

    The first five fields are the contract; the others help an operator read the run.
    ``facts_decayed`` counts facts whose strength was lowered, archived ones included
    (``facts_archived`` is that subset); ``contradictions_resolved`` counts facts superseded or
    flagged because of a contradiction (``facts_flagged`` is the flagged subset).
    """

    model_config = ConfigDict(frozen=True)

    duplicates_removed: int = 0
    facts_decayed: int = 0
    contradictions_resolved: int = 0
    total_processed: int = 0
    duration_ms: float = 0.0

    facts_archived: int = 0
    facts_flagged: int = 0
    run_id: str
    project_id: str
    dry_run: bool = False
    incremental: bool = False
    resumed_run_id: str | None = None
    """Set when this run finished the work of an interrupted run (and kept its reference time)."""
    reference_time: datetime
    """The time decay was computed at; pass it as ``now=`` to reproduce a run exactly."""
    batches: int = 0
    index_repairs: int = 0
    """Vector payloads found out of step with the metadata (a crash between the two) and fixed."""
    actions: list[ConsolidationAction] = Field(default_factory=list)
    actions_omitted: int = 0
    """Actions beyond ``max_report_actions`` (they are all in the audit log of a real run)."""
    syntheses_written: int = 0
    """Subjects whose synthesis was written or rewritten (``reflect=True``)."""
    syntheses_archived: int = 0
    """Syntheses archived because their subject fell below ``reflection_min_facts``."""

    @property
    def changed(self) -> bool:
        """True when the run changed (or would change) at least one fact."""
        return bool(self.actions or self.actions_omitted)


@dataclass(frozen=True, slots=True)
class ConsolidationProgress:
    """Progress of a running consolidation, handed to the ``progress`` callback after each batch.

    Attributes:
        processed: Facts examined so far.
        total: Facts the run expects to examine (counted at the start; an estimate).
        batches: Batches finished.
        changed: Facts changed so far (or planned to change, under dry run).
    """

    processed: int
    total: int
    batches: int
    changed: int
