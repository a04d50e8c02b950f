"""The memory endpoints: remember, add, list, get, history, provenance, revert, forget, search,
profile. Each one checks the caller's role and binding first, then reads or writes through the
project's engine; a record of another user is refused as if it did not exist."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from sagewai.core._profile import ProfileKind, profile_kind
from sagewai.core._records import Fact, FactKind, FactStatus, FactType, SearchResult
from sagewai.errors import FactNotFoundError, InvalidInputError, PermissionDeniedError
from sagewai.server._auth import Caller
from sagewai.server._keys import Role
from sagewai.server._models import (
    AddFactsRequest,
    AddFactsResponse,
    ExtractedView,
    FactList,
    ForgetCounts,
    ForgetRequest,
    ForgetResponse,
    HistoryResponse,
    Identifier,
    ProfileEntry,
    ProfileResponse,
    ProvenanceResponse,
    RememberRequest,
    RememberResponse,
    SearchHit,
    SearchRequest,
    SearchResponse,
    Standing,
    WritableScope,
)
from sagewai.server._reads import FactFilter, forget_preview, list_page, source_messages
from sagewai.server._runtime import CallerDep, respond, runtime_of

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["memory"])

_CURRENT = (FactStatus.ACTIVE, FactStatus.FLAGGED)


def _reason(caller: Caller, what: str) -> str:
    return f"{what} through the API (key {caller.key.id})"


async def _readable_fact(request: Request, caller: Caller, fact_id: str) -> Fact:
    engine = await runtime_of(request).engine(caller)
    fact = await engine.get(fact_id)
    caller.readable(fact_id, fact.user_id)
    return fact


async def _changeable_fact(request: Request, caller: Caller, fact_id: str) -> Fact:
    fact = await _readable_fact(request, caller, fact_id)
    engine = await runtime_of(request).engine(caller)
    if fact.project_id != engine.project_id:
        raise PermissionDeniedError(f"fact {fact_id} belongs to another project of the org")
    if not caller.may_change(fact.user_id):
        raise PermissionDeniedError(
            f"fact {fact_id} is project-wide; a user's key cannot change it"
        )
    return fact


# ---------------------------------------------------------------------- writing


@router.post("/memories", response_model=RememberResponse, summary="Remember messages")
async def remember(body: RememberRequest, caller: CallerDep, request: Request) -> Response:
    """Store messages through the memory bridge: each verbatim, with the facts drawn from it.

    Every message is durable and searchable when the call returns."""
    caller.require(Role.WRITE)
    caller.check_project(body.project)
    user = caller.user(body.user_id)
    runtime = runtime_of(request)
    bridge = await runtime.engines.bridge(caller.key.org_id, caller.project_id)
    extracted: list[ExtractedView] = []
    for message in body.messages:
        data: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.id is not None:
            data["id"] = message.id
        for fact in await bridge.process_message(
            data, session_id=body.session_id, tags=body.tags, user_id=user
        ):
            extracted.append(
                ExtractedView(
                    content=fact.content,
                    fact_type=fact.fact_type,
                    confidence=fact.confidence,
                    subject=fact.subject,
                )
            )
    return respond(
        RememberResponse(
            project_id=caller.project_id,
            user_id=user,
            session_id=body.session_id,
            messages=len(body.messages),
            extracted=extracted,
        )
    )


@router.post("/facts", response_model=AddFactsResponse, status_code=201, summary="Add facts")
async def add_facts(body: AddFactsRequest, caller: CallerDep, request: Request) -> Response:
    """Store facts as given (no extraction, no reconciliation)."""
    caller.require(Role.WRITE)
    caller.check_project(body.project)
    engine = await runtime_of(request).engine(caller)
    built = []
    for item in body.facts:
        user = caller.user(item.user_id)
        if caller.key.user_id is not None and item.scope == "project":
            raise PermissionDeniedError("a user's key writes the user's facts, not project-wide")
        built.append(
            engine.port.build_fact(
                item.content,
                fact_type=item.fact_type,
                scope=item.scope,
                user_id=user,
                session_id=item.session_id,
                subject=item.subject,
                predicate=item.predicate,
                object=item.object,
                confidence=item.confidence,
                tags=item.tags,
                exact_values=item.exact_values,
                metadata=item.metadata,
                valid_from=item.valid_from,
            )
        )
    stored = await engine.add_many(built, actor=f"api:{caller.key.id}")
    return respond(AddFactsResponse(facts=stored), status=201)


# ---------------------------------------------------------------------- reading


@router.get("/facts", response_model=FactList, summary="List facts")
async def list_facts(
    caller: CallerDep,
    request: Request,
    project: Identifier | None = None,
    scope: WritableScope | None = None,
    user_id: Identifier | None = None,
    session_id: Identifier | None = None,
    subject: Annotated[str | None, Query(max_length=256)] = None,
    status: Annotated[list[FactStatus] | None, Query()] = None,
    fact_type: Annotated[list[FactType] | None, Query()] = None,
    kind: Annotated[list[FactKind] | None, Query()] = None,
    tag: Annotated[list[Identifier] | None, Query()] = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    q: Annotated[str | None, Query(max_length=1000, description="content contains")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(max_length=2000)] = None,
) -> Response:
    """The project's records, oldest first, filtered; every status unless ``status`` is given.

    A user's key lists that user's own records; a project key any user's (``user_id``)."""
    caller.require(Role.READ)
    caller.check_project(project)
    engine = await runtime_of(request).engine(caller)
    where = FactFilter(
        user_id=caller.user(user_id),
        session_id=session_id,
        subject=subject,
        statuses=status,
        fact_types=fact_type,
        kinds=kind,
        tags=tag,
        created_after=created_after,
        created_before=created_before,
        scope=scope,
        text=q,
    )
    facts, next_cursor = await list_page(engine, where, limit=limit, cursor=cursor)
    facts = [f for f in facts if caller.may_read(f.user_id)]
    return respond(FactList(facts=facts, next_cursor=next_cursor))


@router.get("/facts/{fact_id}", response_model=Fact, summary="Get a fact")
async def get_fact(fact_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """One record by id."""
    caller.require(Role.READ)
    return respond(await _readable_fact(request, caller, fact_id))


@router.get("/facts/{fact_id}/history", response_model=HistoryResponse, summary="A fact's history")
async def history(fact_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """Every recorded change of a fact, oldest first (a deleted fact keeps a tombstone)."""
    caller.require(Role.READ)
    engine = await runtime_of(request).engine(caller)
    fact: Fact | None
    try:
        fact = await _readable_fact(request, caller, fact_id)
    except FactNotFoundError:
        if caller.key.user_id is not None:  # whose tombstone it is cannot be told
            raise
        fact = None
    changes = await engine.history(fact_id)
    if not changes:
        raise FactNotFoundError(fact_id)
    return respond(HistoryResponse(fact=fact, changes=changes))


@router.get(
    "/facts/{fact_id}/provenance", response_model=ProvenanceResponse, summary="Why memory holds it"
)
async def provenance(fact_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """Where a fact came from (the message, the extractor), its history and its successor."""
    caller.require(Role.READ)
    engine = await runtime_of(request).engine(caller)
    fact = await _readable_fact(request, caller, fact_id)
    messages = [m for m in await source_messages(engine, fact) if caller.may_read(m.user_id)]
    successor = None
    next_id = fact.superseded_by or fact.merged_into
    if next_id is not None:
        try:
            found = await engine.get(next_id)
            successor = found if caller.may_read(found.user_id) else None
        except FactNotFoundError:
            successor = None
    return respond(
        ProvenanceResponse(
            fact=fact,
            sources=list(fact.sources),
            messages=messages,
            changes=await engine.history(fact.id),
            successor=successor,
        )
    )


# ---------------------------------------------------------------------- changing


@router.post(
    "/facts/{fact_id}/changes/{change_id}/revert", response_model=Fact, summary="Undo a change"
)
async def revert(
    fact_id: Identifier, change_id: Identifier, caller: CallerDep, request: Request
) -> Response:
    """Undo one recorded change of a fact (the fields it changed get their old values back)."""
    caller.require(Role.WRITE)
    engine = await runtime_of(request).engine(caller)
    await _changeable_fact(request, caller, fact_id)
    if not any(change.id == change_id for change in await engine.history(fact_id)):
        raise InvalidInputError(f"fact {fact_id} has no change {change_id}")
    restored = await engine.revert(change_id, reason=_reason(caller, "reverted"))
    return respond(restored)


@router.delete("/facts/{fact_id}", response_model=ForgetResponse, summary="Delete a fact")
async def delete_fact(fact_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """Delete one record from every store (its history becomes a content-free tombstone)."""
    caller.require(Role.WRITE)
    engine = await runtime_of(request).engine(caller)
    fact = await _changeable_fact(request, caller, fact_id)
    await engine.delete(fact.id, reason=_reason(caller, "deleted"))
    return respond(ForgetResponse(dry_run=False, records=[fact], counts=ForgetCounts(facts=1)))


@router.post("/forget", response_model=ForgetResponse, summary="Forget")
async def forget(body: ForgetRequest, caller: CallerDep, request: Request) -> Response:
    """Forget one fact, or a subject, a session or a user, from every store; ``dry_run`` lists
    what would go and changes nothing. A user's key forgets within that user's records."""
    caller.require(Role.WRITE)
    caller.check_project(body.project)
    engine = await runtime_of(request).engine(caller)
    if body.fact_id is not None:
        if any(v is not None for v in (body.subject, body.session_id, body.user_id)):
            raise InvalidInputError("give fact_id alone, or subject/session_id/user_id")
        fact = await _changeable_fact(request, caller, body.fact_id)
        if not body.dry_run:
            await engine.delete(fact.id, reason=_reason(caller, "forgotten"))
        counts = ForgetCounts(facts=0 if body.dry_run else 1)
        return respond(ForgetResponse(dry_run=body.dry_run, records=[fact], counts=counts))
    if body.subject is None and body.session_id is None and body.user_id is None:
        # Named, never implied: a user's key with no criteria does not forget the whole user.
        raise InvalidInputError("forget needs fact_id, subject, session_id or user_id")
    user = caller.user(body.user_id)
    records, preview = await forget_preview(
        engine, subject=body.subject, session_id=body.session_id, user_id=user
    )
    if body.dry_run:
        # The engine's own dry run: the receipt the real run returns, nothing changed.
        return respond(
            ForgetResponse(dry_run=True, records=records, counts=ForgetCounts.of(preview))
        )
    report = await engine.forget(
        subject=body.subject,
        session_id=body.session_id,
        user_id=user,
        reason=_reason(caller, "forgotten"),
    )
    counts = ForgetCounts.of(report)
    return respond(ForgetResponse(dry_run=False, records=records, counts=counts))


# ---------------------------------------------------------------------- search and profile


def _standing(fact: Fact) -> Standing:
    if fact.status is FactStatus.FLAGGED:
        return "flagged"
    if fact.status is FactStatus.ARCHIVED:
        return "archived"
    if fact.status is FactStatus.ACTIVE and fact.valid_to is None:
        return "current"
    return "changed"


def _hit(result: SearchResult, caller: Caller) -> SearchHit:
    return SearchHit(
        fact=result.fact,
        score=result.score,
        parts=result.parts,
        related=[f for f in result.related if caller.may_read(f.user_id)],
        standing=_standing(result.fact),
        sources=list(result.fact.sources),
    )


@router.post("/search", response_model=SearchResponse, summary="Search")
async def search(body: SearchRequest, caller: CallerDep, request: Request) -> Response:
    """Hybrid search at a scope and those above it, optionally as memory stood at ``as_of``."""
    caller.require(Role.READ)
    caller.check_project(body.project)
    engine = await runtime_of(request).engine(caller)
    results = await engine.search(
        body.query,
        body.top_k,
        scope=body.scope,
        user_id=caller.user(body.user_id),
        session_id=body.session_id,
        fact_types=body.fact_types,
        kinds=body.kinds,
        tags=body.tags,
        statuses=body.statuses,
        as_of=body.as_of,
        graph_hops=body.graph_hops,
        min_score=body.min_score,
    )
    hits = [_hit(r, caller) for r in results if caller.may_read(r.fact.user_id)]
    return respond(SearchResponse(results=hits))


@router.get("/profile", response_model=ProfileResponse, summary="A user's profile")
async def profile(
    caller: CallerDep,
    request: Request,
    user_id: Identifier | None = None,
    project: Identifier | None = None,
) -> Response:
    """The user's standing profile: instructions, identity and preferences the user stated,
    then the project's team rules, in the order the agent shows them in every turn."""
    caller.require(Role.READ)
    caller.check_project(project)
    user = caller.user(user_id)
    if user is None:
        raise InvalidInputError("profile needs a user_id (or a key bound to a user)")
    engine = await runtime_of(request).engine(caller)
    found = await engine.profile(user_id=user).entries()
    entries = [
        ProfileEntry(kind=(profile_kind(f) or ProfileKind.PREFERENCE).value, fact=f) for f in found
    ]
    return respond(ProfileResponse(user_id=user, entries=entries))
