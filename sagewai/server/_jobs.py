"""Consolidation runs started through the API: in the background, one at a time per project.

A run is started by ``POST /v1/consolidations`` and answered at once (202) with its id; its
status and, once done, its report are read back by id. Every run is recorded in the server
state at its start and at its end, so the dashboard shows the last run and its report after a
restart too. Two runs of one project never overlap: the consolidator's own lock refuses a
second one across processes (409), and the server refuses one it already runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from sagewai.core import new_id, utcnow
from sagewai.errors import LockedError, SagewaiError
from sagewai.server._models import ConsolidateRequest, ConsolidationRun

if TYPE_CHECKING:
    from sagewai.context import ContextEngine
    from sagewai.server._auth import Caller
    from sagewai.server._state import ServerState

__all__ = ["ConsolidationJobs"]

logger = logging.getLogger("sagewai.server")


class ConsolidationJobs:
    """The runs of this server, by id; finished ones are read from the server state."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._runs: dict[str, ConsolidationRun] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def _save(self, run: ConsolidationRun) -> None:
        self._runs[run.id] = run
        record: dict[str, JsonValue] = run.model_dump(mode="json")
        await self.state.save_run(run.id, run.project_id, record)

    async def start(
        self, engine: ContextEngine, caller: Caller, request: ConsolidateRequest
    ) -> ConsolidationRun:
        """Start a run in the background and return it (status ``running``).

        Raises:
            LockedError: this server already runs a consolidation of the project.
        """
        for run in self._runs.values():
            if run.project_id == engine.project_id and run.status == "running":
                raise LockedError(f"consolidation {run.id} is already running on this project")
        scope: str | None = None if request.scope == "all" else request.scope
        user_id = caller.user(request.user_id)
        if caller.key.user_id is not None:
            scope = "user"  # a user's key consolidates that user's facts, nothing else
        run = ConsolidationRun(
            id=new_id(),
            project_id=engine.project_id,
            status="running",
            dry_run=request.dry_run,
            started_at=utcnow(),
            requested_by=caller.key.id,
        )
        await self._save(run)
        options: dict[str, Any] = {
            "scope": scope,
            "dry_run": request.dry_run,
            "user_id": user_id,
            "session_id": request.session_id,
            "incremental": request.incremental,
        }
        task = asyncio.create_task(self._run(engine, run, request.strategy, options))
        self._tasks[run.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(run.id, None))
        return run

    async def _run(
        self, engine: ContextEngine, run: ConsolidationRun, strategy: Any, options: dict[str, Any]
    ) -> None:
        from sagewai.intelligence import MemoryConsolidator

        try:
            consolidator = MemoryConsolidator(engine, contradiction_strategy=strategy)
            report = await consolidator.consolidate(**options)
            done = run.model_copy(update={"status": "done", "report": report})
        except SagewaiError as exc:
            done = run.model_copy(update={"status": "failed", "error": str(exc)})
        except Exception as exc:  # a bug: recorded as a failed run, logged in full
            logger.exception("consolidation %s failed", run.id)
            done = run.model_copy(update={"status": "failed", "error": type(exc).__name__})
        done = done.model_copy(update={"finished_at": utcnow()})
        try:
            await self._save(done)
        except SagewaiError:
            logger.exception("consolidation %s: its record could not be saved", run.id)

    async def get(self, project_id: str, run_id: str) -> ConsolidationRun | None:
        """A run of ``project_id`` by id (this server's, or one recorded before a restart)."""
        run = self._runs.get(run_id)
        if run is not None:
            return run if run.project_id == project_id else None
        for record in await self.state.runs(project_id, limit=1000):
            if record.get("id") == run_id:
                return ConsolidationRun.model_validate(record)
        return None

    async def latest(self, project_id: str, *, limit: int = 20) -> list[ConsolidationRun]:
        """The project's latest runs, newest first."""
        records = await self.state.runs(project_id, limit=limit)
        runs = [ConsolidationRun.model_validate(r) for r in records]
        return [self._runs.get(run.id, run) for run in runs]

    async def close(self) -> None:
        """Stop the runs still going (a stopped run resumes at its next start)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
