"""The project endpoints: the key itself, projects, memory health, the graph, consolidation
runs and the export. What reads every user's records (the graph, health counts, an export)
needs a key that is not bound to one user."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Request
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, Response

from sagewai.core._records import FactKind, FactStatus
from sagewai.errors import InvalidInputError, LockedError
from sagewai.intelligence import ConsolidationReport
from sagewai.server._keys import Role
from sagewai.server._models import (
    ConsolidateRequest,
    ConsolidationRun,
    ConsolidationRuns,
    Identifier,
    KeyView,
    ProjectInfo,
    ProjectsResponse,
    StatsResponse,
)
from sagewai.server._runtime import CallerDep, respond, runtime_of

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["project"])


@router.get("/me", response_model=KeyView, summary="The calling key")
async def me(caller: CallerDep) -> Response:
    """The calling key's binding and role (never the key)."""
    return respond(KeyView.model_validate(caller.key.public()))


@router.get("/projects", response_model=ProjectsResponse, summary="Projects")
async def projects(caller: CallerDep, request: Request) -> Response:
    """The projects the key may see: its own; an admin key also the store's other projects of
    its org (those some key of the org is bound to)."""
    caller.require(Role.READ)
    runtime = runtime_of(request)
    visible = {caller.project_id}
    if caller.key.role is Role.ADMIN:
        await runtime.engines.open()
        in_store = set(await runtime.engines.stores.project_ids())
        org = {k.project_id for k in await runtime.state.keys() if k.org_id == caller.key.org_id}
        visible |= in_store & org
    infos = []
    for project_id in sorted(visible):
        engine = await runtime.engines.engine(caller.key.org_id, project_id)
        infos.append(ProjectInfo(project_id=project_id, records=await engine.count()))
    return respond(ProjectsResponse(projects=infos))


@router.get("/stats", response_model=StatsResponse, summary="Memory health")
async def stats(caller: CallerDep, request: Request) -> Response:
    """Counts by kind and status, duplicates merged, contradictions flagged, the last
    consolidation and its report."""
    caller.require(Role.READ)
    caller.project_wide("memory health")
    runtime = runtime_of(request)
    engine = await runtime.engine(caller)
    pairs = [(kind, status) for kind in FactKind for status in FactStatus]
    numbers = await asyncio.gather(
        *(engine.count(statuses=[status], kinds=[kind]) for kind, status in pairs)
    )
    counts: dict[FactKind, dict[FactStatus, int]] = {kind: {} for kind in FactKind}
    for (kind, status), number in zip(pairs, numbers, strict=True):
        counts[kind][status] = number

    def of(status: FactStatus) -> int:
        return sum(counts[kind][status] for kind in FactKind)

    latest = await runtime.jobs.latest(caller.project_id, limit=1)
    return respond(
        StatsResponse(
            project_id=caller.project_id,
            counts=counts,
            total=sum(numbers),
            duplicates_merged=of(FactStatus.MERGED),
            contradictions_flagged=of(FactStatus.FLAGGED),
            superseded=of(FactStatus.SUPERSEDED),
            archived=of(FactStatus.ARCHIVED),
            last_consolidation=latest[0] if latest else None,
        )
    )


_GRAPH_TYPES = {
    "html": "text/html; charset=utf-8",
    "json": "application/json",
    "graphml": "application/graphml+xml",
}


@router.get(
    "/graph",
    summary="The knowledge graph",
    responses={200: {"content": {t: {} for t in _GRAPH_TYPES.values()}}},
)
async def graph(
    caller: CallerDep, request: Request, format: Literal["html", "json", "graphml"] = "json"
) -> Response:
    """The project's knowledge graph as JSON, GraphML or a self-contained HTML page."""
    from sagewai.graph import export_graph

    caller.require(Role.READ)
    caller.project_wide("the knowledge graph")
    engine = await runtime_of(request).engine(caller)
    if engine.graph_store is None:
        raise HTTPException(404, "this store keeps no knowledge graph")
    body = await export_graph(engine.graph_store, format)
    return Response(body.encode("utf-8"), media_type=_GRAPH_TYPES[format])


@router.post(
    "/consolidations", response_model=ConsolidationRun, status_code=202, summary="Consolidate"
)
async def consolidate(body: ConsolidateRequest, caller: CallerDep, request: Request) -> Response:
    """Start a consolidation run in the background (merge duplicates, decay, contradictions);
    read its status and report at ``/v1/consolidations/{id}``."""
    caller.require(Role.ADMIN)
    caller.check_project(body.project)
    runtime = runtime_of(request)
    engine = await runtime.engine(caller)
    run = await runtime.jobs.start(engine, caller, body)
    return respond(run, status=202)


@router.get("/consolidations", response_model=ConsolidationRuns, summary="Consolidation runs")
async def consolidations(caller: CallerDep, request: Request) -> Response:
    """The project's latest consolidation runs, newest first."""
    caller.require(Role.READ)
    runs = await runtime_of(request).jobs.latest(caller.project_id)
    return respond(ConsolidationRuns(runs=runs))


async def _run(request: Request, project_id: str, run_id: Identifier) -> ConsolidationRun:
    run = await runtime_of(request).jobs.get(project_id, run_id)
    if run is None:
        raise InvalidInputError(f"no consolidation run {run_id!r} in this project")
    return run


@router.get("/consolidations/{run_id}", response_model=ConsolidationRun, summary="A run")
async def consolidation(run_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """A consolidation run: running, done (with its report) or failed (with the reason)."""
    caller.require(Role.READ)
    return respond(await _run(request, caller.project_id, run_id))


@router.get(
    "/consolidations/{run_id}/report", response_model=ConsolidationReport, summary="A run's report"
)
async def consolidation_report(run_id: Identifier, caller: CallerDep, request: Request) -> Response:
    """The report of a finished run (409 while it runs)."""
    caller.require(Role.READ)
    run = await _run(request, caller.project_id, run_id)
    if run.report is None:
        raise LockedError(f"consolidation {run_id} is {run.status}; it has no report")
    return respond(run.report)


@router.get(
    "/export",
    summary="Export the project",
    responses={200: {"content": {"application/gzip": {}}}},
)
async def export(caller: CallerDep, request: Request) -> Response:
    """The whole project as a gzipped JSONL archive (``sagewai export``'s format; read it back
    with ``sagewai import``)."""
    from sagewai.context.archive import export_archive

    caller.require(Role.ADMIN)
    caller.project_wide("an export")
    engine = await runtime_of(request).engine(caller)
    folder = Path(tempfile.mkdtemp(prefix="sagewai-export-"))
    path = folder / "project.jsonl.gz"
    await export_archive(engine, path)

    def cleanup() -> None:
        path.unlink(missing_ok=True)
        os.rmdir(folder)

    return FileResponse(
        path,
        media_type="application/gzip",
        filename="sagewai-export.jsonl.gz",
        background=BackgroundTask(cleanup),
    )
