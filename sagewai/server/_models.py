"""The request and response bodies of the HTTP API, as pydantic models (the OpenAPI schema).

Requests are validated strictly (unknown fields refused, no NaN or infinity, bounded lists), so
bad input is a 422 before it reaches the engine; the engine checks again what only it can. The
responses name the records the library returns (:class:`~sagewai.Fact`,
:class:`~sagewai.FactChange`, ...), so the schema, and the TypeScript types generated from it,
say exactly what a Python caller would get.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue

from sagewai.core import validate_identifier
from sagewai.core._records import (
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    ScoreParts,
)
from sagewai.intelligence import ConsolidationReport

if TYPE_CHECKING:
    from sagewai.context._forgetting import ForgetReport

__all__ = [
    "AddFactsRequest",
    "AddFactsResponse",
    "ConsolidateRequest",
    "ConsolidationRun",
    "ConsolidationRuns",
    "ExtractedView",
    "FactIn",
    "FactList",
    "ForgetCounts",
    "ForgetRequest",
    "ForgetResponse",
    "Health",
    "HistoryResponse",
    "Identifier",
    "KeyView",
    "MessageIn",
    "ProfileEntry",
    "ProfileResponse",
    "ProjectInfo",
    "ProjectsResponse",
    "ProvenanceResponse",
    "RememberRequest",
    "RememberResponse",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "StatsResponse",
]

WritableScope = Literal["project", "user", "session"]
"""Scopes the API writes at (ORG facts reach other projects: the library writes them)."""


def _identifier(value: str) -> str:
    return validate_identifier(value, "identifier")  # InvalidInputError is a ValueError: a 422


Identifier = Annotated[str, AfterValidator(_identifier)]
"""A project, user, session, fact, change or tag id: 1 to 256 characters, no control
characters and no lone surrogates (what every store can hold and no scope key can forge)."""
Standing = Literal["current", "changed", "flagged", "archived"]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    project: Identifier | None = Field(
        default=None, description="the key's project (optional; another one is refused)"
    )


class MessageIn(BaseModel):
    """One conversation message."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(max_length=1_000_000)
    id: Identifier | None = Field(default=None, description="the message's own id")


class RememberRequest(_Request):
    """Messages for the memory bridge: stored verbatim, facts extracted from them."""

    messages: list[MessageIn] = Field(min_length=1, max_length=100)
    session_id: Identifier | None = None
    user_id: Identifier | None = Field(
        default=None, description="the user who spoke (a user's key: that user)"
    )
    tags: list[Identifier] | None = Field(default=None, max_length=50)


class ExtractedView(BaseModel):
    """A fact the bridge read from a message."""

    content: str
    fact_type: FactType
    confidence: float
    subject: str | None = None


class RememberResponse(BaseModel):
    """What ``remember`` stored."""

    project_id: str
    user_id: str | None
    session_id: str | None
    messages: int
    extracted: list[ExtractedView]


class FactIn(BaseModel):
    """A fact to store as given."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    content: str = Field(max_length=1_000_000)
    fact_type: FactType = FactType.GENERAL
    scope: WritableScope | None = None
    user_id: Identifier | None = None
    session_id: Identifier | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    tags: list[Identifier] = Field(default_factory=list, max_length=50)
    exact_values: list[str] = Field(default_factory=list, max_length=50)
    metadata: dict[str, JsonValue] | None = None
    valid_from: datetime | None = None


class AddFactsRequest(_Request):
    """Facts to store."""

    facts: list[FactIn] = Field(min_length=1, max_length=1000)


class AddFactsResponse(BaseModel):
    """The facts stored, with their ids."""

    facts: list[Fact]


class FactList(BaseModel):
    """One page of facts, oldest first; pass ``next_cursor`` as ``cursor`` for the next."""

    facts: list[Fact]
    next_cursor: str | None = None


class SearchRequest(_Request):
    """A hybrid search, as the engine's ``search``."""

    query: str = Field(max_length=100_000)
    top_k: int = Field(default=5, ge=1, le=100)
    scope: WritableScope | None = None
    user_id: Identifier | None = None
    session_id: Identifier | None = None
    as_of: datetime | None = Field(default=None, description="search memory as it stood then")
    fact_types: list[FactType] | None = None
    kinds: list[FactKind] | None = None
    tags: list[Identifier] | None = Field(default=None, max_length=50)
    statuses: list[FactStatus] | None = None
    graph_hops: int = Field(default=0, ge=0, le=2)
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)


class SearchHit(BaseModel):
    """One result: the record, its score, its standing and where it came from."""

    fact: Fact
    score: float
    parts: ScoreParts
    related: list[Fact] = Field(description="records of the same source fused into this one")
    standing: Standing = Field(description="current, changed (superseded or merged), ...")
    sources: list[Provenance]


class SearchResponse(BaseModel):
    """Search results, best first."""

    results: list[SearchHit]


class HistoryResponse(BaseModel):
    """A fact's audit log, oldest first (``fact`` is ``null`` once it was deleted)."""

    fact: Fact | None
    changes: list[FactChange]


class ProvenanceResponse(BaseModel):
    """Why memory holds a fact: where it came from, what it replaced, what changed it."""

    fact: Fact
    sources: list[Provenance]
    messages: list[Fact] = Field(description="the verbatim messages the fact was drawn from")
    changes: list[FactChange]
    successor: Fact | None = None


class ForgetRequest(_Request):
    """What to forget: one fact, or a subject, a session or a user's records."""

    fact_id: Identifier | None = None
    subject: str | None = Field(default=None, max_length=256)
    session_id: Identifier | None = None
    user_id: Identifier | None = None
    dry_run: bool = False


class ForgetCounts(BaseModel):
    """What was removed from each store (the engine's receipt; see ``ForgetReport``)."""

    facts: int = Field(
        default=0, description="records deleted from the metadata store, of every kind"
    )
    graph_items: int = Field(default=0, description="graph entities plus relations deleted")
    episodes: int = Field(default=0, description="episodes redacted or deleted")
    fact_records: int = Field(default=0, description="fact records deleted (every status)")
    messages: int = Field(default=0, description="verbatim message records deleted")
    context_records: int = Field(default=0, description="context records deleted")
    documents: int = Field(default=0, description="document chunks deleted")
    vectors: int = Field(default=0, description="points deleted from the vector index")
    graph_entities: int = 0
    graph_relations: int = 0
    episodes_redacted: int = Field(
        default=0, description="episodes kept without the forgotten turns"
    )
    episodes_removed: int = Field(default=0, description="episodes deleted whole")
    episode_messages: int = Field(default=0, description="turns removed from episodes")
    journal_entries: int = Field(default=0, description="entries removed from write-ahead journals")
    audit_rows_removed: int = Field(
        default=0, description="audit rows of deleted records, replaced by content-free tombstones"
    )
    audit_rows_redacted: int = Field(
        default=0, description="audit rows of kept records rewritten without the forgotten text"
    )

    @classmethod
    def of(cls, receipt: ForgetReport) -> ForgetCounts:
        """The counts of an engine's receipt."""
        return cls(
            facts=receipt.facts_deleted,
            graph_items=receipt.graph_items_deleted,
            episodes=receipt.episodes_deleted,
            fact_records=receipt.facts,
            messages=receipt.messages,
            context_records=receipt.context_records,
            documents=receipt.documents,
            vectors=receipt.vectors,
            graph_entities=receipt.graph_entities,
            graph_relations=receipt.graph_relations,
            episodes_redacted=receipt.episodes_redacted,
            episodes_removed=receipt.episodes_removed,
            episode_messages=receipt.episode_messages,
            journal_entries=receipt.journal_entries,
            audit_rows_removed=receipt.audit_rows_removed,
            audit_rows_redacted=receipt.audit_rows_redacted,
        )


class ForgetResponse(BaseModel):
    """A forget's receipt; under ``dry_run`` what it would remove, with nothing changed."""

    dry_run: bool
    records: list[Fact] = Field(description="the records removed (or that would be)")
    counts: ForgetCounts
    note: str | None = None


class ProfileEntry(BaseModel):
    """One entry of a standing profile: its kind and the fact that holds it."""

    kind: Literal["instruction", "identity", "preference"]
    fact: Fact


class ProfileResponse(BaseModel):
    """A user's standing profile, as the agent shows it in every turn: the user's instructions,
    identity and preferences, then the project's team rules (``ContextEngine.profile``)."""

    user_id: str
    entries: list[ProfileEntry]


class ConsolidateRequest(_Request):
    """A consolidation run, started in the background."""

    scope: Literal["project", "user", "session", "all"] = "project"
    user_id: Identifier | None = None
    session_id: Identifier | None = None
    dry_run: bool = False
    incremental: bool = False
    strategy: Literal["keep_newer", "keep_higher_confidence", "flag"] = "keep_newer"


class ConsolidationRun(BaseModel):
    """A consolidation run the server started: its state and, once done, its report."""

    id: str
    project_id: str
    status: Literal["running", "done", "failed"]
    dry_run: bool
    started_at: datetime
    finished_at: datetime | None = None
    requested_by: str
    report: ConsolidationReport | None = None
    error: str | None = None


class ConsolidationRuns(BaseModel):
    """Consolidation runs, newest first."""

    runs: list[ConsolidationRun]


class ProjectInfo(BaseModel):
    """A project of the store and how many records it holds."""

    project_id: str
    records: int


class ProjectsResponse(BaseModel):
    """The projects a key may see."""

    projects: list[ProjectInfo]


class StatsResponse(BaseModel):
    """Memory health: counts by kind and status, repairs made, the last consolidation."""

    project_id: str
    counts: dict[FactKind, dict[FactStatus, int]]
    total: int
    duplicates_merged: int
    contradictions_flagged: int
    superseded: int
    archived: int
    last_consolidation: ConsolidationRun | None = None


class KeyView(BaseModel):
    """The calling key's binding."""

    id: str
    org_id: str | None
    project_id: str
    user_id: str | None
    role: Literal["read", "write", "admin"]
    name: str
    created_at: datetime


class Health(BaseModel):
    """Liveness or readiness."""

    status: Literal["ok", "unavailable"]
    version: str
    detail: str | None = None
