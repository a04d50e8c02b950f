"""MemoryConsolidator: the scheduled job that keeps a project's memory clean.

Why it exists: an agent that learns from every conversation restates the same facts, changes its
mind, and accumulates facts nobody uses. Left alone, search fills with near-copies and outdated
beliefs. A consolidation run walks the facts in batches and, for each one:

1. resolves contradictions in its (subject, predicate) group (see ``contradictions``),
2. merges its near-duplicates into one canonical fact (see ``dedup``),
3. decays its strength and archives it when unused for long (see ``decay``).

How it stays safe: every decision is a pure function; this module only reads the stores, asks the
rules, and writes each batch as ONE ``ContextEngine.commit`` with audited changes (actor
``consolidator``, a rule, a reason, before/after snapshots, the run id). Only one run per project
at a time (``MetadataStore.lock``). A checkpoint after every batch lets an interrupted run be
resumed to the state an uninterrupted run reaches. A dry run walks the same path over an in-memory
overlay of its own planned changes, so it reports exactly the actions the real run then takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Unpack

from pydantic import JsonValue

from sagewai.context._engine import ContextEngine
from sagewai.core import _lifecycle as lifecycle
from sagewai.core._arguments import aware_time, check_flag, string_list
from sagewai.core._embedder import Embedder
from sagewai.core._queries import WriteBatch
from sagewai.core._records import ChangeAction, Fact, FactChange, FactStatus, new_id, utcnow
from sagewai.core._scope import ContextScope
from sagewai.errors import InvalidInputError
from sagewai.intelligence.consolidation._annotations import keep_apart, with_annotations
from sagewai.intelligence.consolidation._candidates import build_candidates
from sagewai.intelligence.consolidation._config import (
    ConsolidationOptions,
    ConsolidationSettings,
)
from sagewai.intelligence.consolidation._reflection import Reflection, ReflectionOutcome
from sagewai.intelligence.consolidation._report import (
    ActionKind,
    ConsolidationAction,
    ConsolidationProgress,
    ConsolidationReport,
)
from sagewai.intelligence.consolidation._run import Lookahead, Run
from sagewai.intelligence.consolidation._selection import Selection
from sagewai.intelligence.consolidation._state import ConsolidationState, RunCheckpoint, state_key
from sagewai.llm._base import LLMClient

__all__ = ["LOCK_NAME", "MemoryConsolidator", "ProgressCallback"]

logger = logging.getLogger("sagewai.consolidation")

LOCK_NAME = "consolidation"
"""The name of the per-project lock a run holds (``MetadataStore.lock(project_id, LOCK_NAME)``)."""

ProgressCallback = Callable[[ConsolidationProgress], None]


class MemoryConsolidator:
    """Deduplicate, decay and reconcile a project's facts, safely and on a schedule.

    Args:
        context_engine: The engine of the project to consolidate; every change goes through its
            port's ``commit``.
        settings: Every tunable value (:class:`ConsolidationSettings`: ``decay_halflife_days``,
            ``similarity_threshold``, ``contradiction_strategy``, ``batch_size``, ...); the fields
            may also be given by name, which override ``settings``.
        embedder: Used only for a fact whose vector is missing from the index (stored facts are
            never re-embedded). Defaults to the engine's embedder.
        reflection_client: The chat model that writes syntheses when ``reflect`` is on (any
            :class:`~sagewai.llm.LLMClient`, such as the scripted one of ``sagewai.testing``);
            default a litellm client of ``reflection_model`` when that is set, else none (the
            offline rules write them).

    Raises:
        InvalidInputError: a setting is out of range or unknown, or the embedder's dimension
            differs from the vector store's.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> int:
        ...     async with ContextEngine.in_memory(project_id="demo",
        ...                                         embedder=FakeEmbedder()) as ctx:
        ...         await ctx.add("The staging database runs PostgreSQL 15")
        ...         await ctx.add("the staging database runs postgresql 15")
        ...         report = await MemoryConsolidator(context_engine=ctx).consolidate()
        ...         return report.duplicates_removed
        >>> asyncio.run(demo())
        1
    """

    def __init__(
        self,
        context_engine: ContextEngine,
        *,
        settings: ConsolidationSettings | None = None,
        embedder: Embedder | None = None,
        reflection_client: LLMClient | None = None,
        **options: Unpack[ConsolidationOptions],
    ) -> None:
        if not isinstance(context_engine, ContextEngine):
            raise InvalidInputError("context_engine must be a ContextEngine")
        if options:
            base = {} if settings is None else settings.model_dump(exclude_unset=True)
            settings = ConsolidationSettings(**{**base, **options})
        self.settings = settings or ConsolidationSettings()
        self.context_engine = context_engine
        self.embedder: Embedder = embedder or context_engine.port.embedder
        if self.embedder.dimension != context_engine.port.embedder.dimension:
            raise InvalidInputError(
                f"the embedder makes {self.embedder.dimension}-d vectors but the vector store "
                f"holds {context_engine.port.embedder.dimension}-d vectors"
            )
        if reflection_client is not None and not isinstance(reflection_client, LLMClient):
            raise InvalidInputError("reflection_client must be an LLMClient")
        model = self.settings.reflection_model
        if reflection_client is None and model is not None:
            from sagewai.llm._litellm_client import LiteLLMClient

            reflection_client = LiteLLMClient(model, max_retries=0)
        self.reflection_client = reflection_client

    def __repr__(self) -> str:
        return (
            f"MemoryConsolidator(project_id={self.context_engine.project_id!r}, {self.settings!r})"
        )

    async def consolidate(
        self,
        project_id: str | None = None,
        scope: ContextScope | str | None = ContextScope.PROJECT,
        tags: Sequence[str] | None = None,
        dry_run: bool = False,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        incremental: bool = False,
        now: datetime | None = None,
        progress: ProgressCallback | None = None,
    ) -> ConsolidationReport:
        """Run one consolidation over the selected facts and report what it did.

        Args:
            project_id: Must be the engine's project when given (an engine is bound to one).
            scope: The scope level to consolidate; ``None`` for every scope of the project.
                USER and SESSION cover every user (session) unless ``user_id``
                (``session_id``) pins one.
            tags: Only facts carrying at least one of these tags.
            dry_run: Change nothing; report exactly the actions a real run would take.
            user_id: With ``scope="user"``: only this user's facts.
            session_id: With ``scope="session"``: only this session's facts.
            incremental: Only examine facts written since the last completed run of the same
                selection (their neighbours and groups are still read in full). Run a full
                pass now and then: decay of untouched facts happens in full passes.
            now: The reference time of decay (default: now). A run that resumes an interrupted
                one keeps that run's reference time instead.
            progress: Called after each batch with a :class:`ConsolidationProgress`.

        Returns:
            The report: counts, duration and the actions taken (or planned).

        Raises:
            InvalidInputError: ``project_id`` is not the engine's, or a bad scope or tag.
            LockedError: another run holds this project's consolidation lock.
            BackendError: a store failed; the batches committed so far stay committed and the
                next run resumes after them.
        """
        engine = self.context_engine
        if project_id is not None and project_id != engine.project_id:
            raise InvalidInputError(
                f"this consolidator's engine is bound to project {engine.project_id!r}, not "
                f"{project_id!r}; build a ContextEngine for {project_id!r} to consolidate it"
            )
        if isinstance(now, datetime) and now.tzinfo is None:
            raise InvalidInputError(
                "now must be a timezone-aware datetime (a naive one is ambiguous)"
            )
        now = aware_time(now, "now")
        check_flag(dry_run, "dry_run")
        check_flag(incremental, "incremental")
        tags = string_list(tags, "tags")
        selection = Selection.build(
            project_id=engine.project_id,
            org_id=engine.org_id,
            scope=scope,
            user_id=user_id,
            session_id=session_id,
            tags=tags,
        )
        port = engine.port
        await port.flush_access()  # reads of this engine's searches count against decay
        started_clock = time.perf_counter()
        key = state_key(selection.describe)
        async with port.lock(LOCK_NAME):
            state = ConsolidationState.from_json(selection.describe, await port.get_state(key))
            checkpoint, resumed = self._checkpoint(state, incremental=incremental, now=now)
            run = Run(
                port,
                self.settings,
                self.embedder,
                selection,
                run_id=checkpoint.run_id,
                now=checkpoint.reference_time,
                dry_run=dry_run,
                incremental=incremental,
            )
            if not dry_run:
                checkpoint = replace(checkpoint, saved_at=utcnow())
                await port.set_state(key, state.started(checkpoint).to_json())
                if resumed is not None:
                    run.tally.index_repairs += await self._finish_interrupted_commit(
                        resumed, state.in_progress
                    )
            total = await port.count_matching(selection.count(updated_since=checkpoint.since))
            if not incremental:
                # A full pass: every candidate pair found exactly, before any decision.
                config = self.settings
                table_clock = time.perf_counter()
                run.table = await build_candidates(
                    port,
                    selection,
                    self.embedder,
                    floor=run.floor,
                    threshold=run.threshold,
                    neighbours=config.neighbours,
                    max_neighbours=config.max_neighbours,
                    search_ef=config.search_ef,
                    reading_process=config.reading_process_from is not None
                    and total >= config.reading_process_from,
                )
                logger.debug(
                    "consolidation %s: %d candidate pairs among %d facts in %.0f ms "
                    "(%d searched in the index)",
                    run.run_id,
                    run.table.pairs,
                    len(run.table.ids),
                    (time.perf_counter() - table_clock) * 1000.0,
                    run.table.index_searches,
                )

            async def read(after: tuple[datetime, str] | None) -> list[Fact]:
                return await port.find(
                    selection.scan(
                        after=after, limit=self.settings.batch_size, updated_since=checkpoint.since
                    )
                )

            cursor = checkpoint.cursor
            horizon = utcnow()
            page = await read(cursor)
            ahead: Lookahead | None = None
            writes = contextlib.AsyncExitStack()
            start = self.settings.writing_process_from
            if not dry_run and start is not None and total >= start:
                queue = await writes.enter_async_context(port.commit_queue())
                run.queue = queue if queue.background else None
            async with writes:
                while page:
                    # Changes of this batch are made from now on: a checkpoint written after it
                    # covers them only once their payloads are written too (see
                    # ``_finish_interrupted_commit``), which with a writer process is one batch
                    # later.
                    begun = utcnow()
                    # The next page is read now and its neighbours searched while this page is
                    # decided and committed: the index works in its own thread meanwhile.
                    following = await read((page[-1].created_at, page[-1].id))
                    search = (
                        asyncio.create_task(
                            run.search_ahead([f for f in following if selection.contains(f)])
                        )
                        if following
                        else None
                    )
                    cursor = (page[-1].created_at, page[-1].id)
                    saved: tuple[str, JsonValue] | None = None
                    if not dry_run:
                        checkpoint = checkpoint.advanced(cursor, begun)
                        saved = (key, state.started(checkpoint).to_json())
                    try:
                        await run.process([f for f in page if selection.contains(f)], ahead)
                        await run.flush(saved)
                        ahead = None if search is None else await search
                    except BaseException:
                        if search is not None:
                            search.cancel()
                            await asyncio.gather(search, return_exceptions=True)
                        with contextlib.suppress(Exception):
                            await run.finish()  # what landed gets its payloads
                        raise
                    if progress is not None:
                        tally = run.tally
                        progress(
                            ConsolidationProgress(
                                processed=tally.total_processed,
                                total=max(total, tally.total_processed),
                                batches=tally.batches,
                                changed=tally.changed,
                            )
                        )
                    if following:
                        # Read before this page's commit: take the versions that commit wrote.
                        page = [run.just_committed.get(f.id, f) for f in following]
                    else:
                        # Stop on a page read after every commit of this run: its time is the
                        # horizon the next incremental run starts from.
                        await run.finish()
                        horizon = utcnow()
                        page = await read(cursor)
                await run.finish()
            reflected = ReflectionOutcome()
            if self.settings.reflect:
                # After every other step: syntheses rest on the facts as this run left them.
                reflected = await Reflection(
                    port,
                    self.settings,
                    selection,
                    client=self.reflection_client,
                    model_name=self.settings.reflection_model,
                    run_id=run.run_id,
                    dry_run=dry_run,
                    overlay=run.overlay,
                ).run()
                limit = self.settings.max_report_actions
                for action in reflected.actions:
                    if limit is None or len(run.tally.actions) < limit:
                        run.tally.actions.append(action)
                    else:
                        run.tally.actions_omitted += 1
                run.tally.changed += len(reflected.actions)
            if not dry_run:
                finished = state.finished(checkpoint, horizon=horizon, at=utcnow())
                await port.set_state(key, finished.to_json())
        tally = run.tally
        report = ConsolidationReport(
            duplicates_removed=tally.duplicates_removed,
            facts_decayed=tally.facts_decayed,
            contradictions_resolved=tally.contradictions_resolved,
            total_processed=tally.total_processed,
            duration_ms=round((time.perf_counter() - started_clock) * 1000.0, 3),
            facts_archived=tally.facts_archived,
            facts_flagged=tally.facts_flagged,
            run_id=run.run_id,
            project_id=engine.project_id,
            dry_run=dry_run,
            incremental=incremental,
            resumed_run_id=resumed,
            reference_time=run.now,
            batches=tally.batches,
            index_repairs=tally.index_repairs,
            actions=tally.actions,
            actions_omitted=tally.actions_omitted,
            syntheses_written=reflected.written,
            syntheses_archived=reflected.archived,
        )
        logger.info(
            "consolidation %s of %s: %d processed, %d merged, %d decayed, %d contradictions "
            "in %.0f ms%s",
            report.run_id,
            selection.describe,
            report.total_processed,
            report.duplicates_removed,
            report.facts_decayed,
            report.contradictions_resolved,
            report.duration_ms,
            " (dry run)" if dry_run else "",
        )
        return report

    def _checkpoint(
        self, state: ConsolidationState, *, incremental: bool, now: datetime | None
    ) -> tuple[RunCheckpoint, str | None]:
        """The checkpoint of this run, and the id of the run it resumes (if it resumes one).

        An unfinished run under the same deciding settings and mode is resumed: after its last
        committed batch, at its reference time. Anything else starts afresh.
        """
        fingerprint = self.settings.fingerprint()
        pending = state.in_progress
        if (
            pending is not None
            and pending.fingerprint == fingerprint
            and pending.incremental == incremental
        ):
            return replace(pending, run_id=new_id()), pending.run_id
        since = state.last_horizon if incremental else None
        started = utcnow()
        return (
            RunCheckpoint(
                run_id=new_id(),
                started_at=started,
                reference_time=started if now is None else now,
                fingerprint=fingerprint,
                incremental=incremental,
                since=since,
            ),
            None,
        )

    async def _finish_interrupted_commit(
        self, run_id: str, checkpoint: RunCheckpoint | None
    ) -> int:
        """Bring the vector index in step with what an interrupted run committed last.

        A run killed between a batch's metadata commit and its payload update (or its
        checkpoint) leaves that batch committed but maybe not indexed: the index still calls a
        merged fact active. The changes it made after its last checkpoint are read back from
        the audit log and their facts' payloads rewritten. Returns how many were.
        """
        engine = self.context_engine
        since = None if checkpoint is None else checkpoint.saved_at
        changes = await engine.changes(since=since, run_id=run_id)
        ids = list(dict.fromkeys(change.fact_id for change in changes))
        if not ids:
            return 0
        facts = await engine.port.get_many(ids)
        return await engine.port.refresh_index(
            f for f in facts if f.project_id == engine.project_id
        )

    async def revert_action(
        self, action: ConsolidationAction, *, reason: str = "consolidation reverted by user"
    ) -> list[Fact]:
        """Undo one action of a real run in one commit, and keep its facts apart from now on.

        ``ContextEngine.revert`` undoes one audit row; an action may have several (a merge has
        one per absorbed fact and one for the canonical). This restores every fact the action
        changed to its state before the action and records, in each, that the facts involved
        must not be merged or resolved against each other again, so the next run respects the
        user's decision.

        Returns:
            The restored facts.

        Raises:
            InvalidInputError: the action comes from a dry run (it changed nothing).
        """
        if not action.change_ids:
            raise InvalidInputError("a dry-run action changed nothing and cannot be reverted")
        engine = self.context_engine
        if action.kind is ActionKind.REFLECT:
            return await self._revert_reflection(action, reason)
        wanted = set(action.change_ids)
        involved = [*action.fact_ids, *([action.target_id] if action.target_id else [])]
        rows = [
            c for i in dict.fromkeys(involved) for c in await engine.history(i) if c.id in wanted
        ]
        if len(rows) != len(wanted):
            raise InvalidInputError("some changes of this action are no longer in the audit log")
        restored: dict[str, Fact] = {}
        undo: list[FactChange] = []
        for change in reversed(rows):
            assert change.before is not None
            fact = restored.get(change.fact_id) or await engine.get(change.fact_id)
            others = sorted(set(involved) - {fact.id} | keep_apart(fact))
            back = fact.evolve(**change.before)
            back = back.evolve(metadata=with_annotations(back, keep_apart=others or None))
            fields = tuple(dict.fromkeys([*change.before.keys(), "metadata"]))
            undo.append(
                lifecycle.revise(
                    fact,
                    back,
                    fields,
                    ChangeAction.RESTORED,
                    lifecycle.Cause("consolidator", "consolidation.revert", reason),
                    related=change.related_fact_ids,
                )
            )
            restored[fact.id] = back
        await engine.port.commit(
            WriteBatch(engine.project_id, upserts=list(restored.values()), changes=undo)
        )
        return list(restored.values())

    async def _revert_reflection(self, action: ConsolidationAction, reason: str) -> list[Fact]:
        """Undo a reflection action: a rewrite gets its previous text back, a new synthesis
        is archived. The next run leaves it so until its facts change again."""
        engine = self.context_engine
        wanted = set(action.change_ids)
        restored: list[Fact] = []
        undo: list[FactChange] = []
        rewritten: set[str] = set()
        cause = lifecycle.Cause("consolidator", "consolidation.revert", reason)
        for fact_id in action.fact_ids:
            rows = [c for c in await engine.history(fact_id) if c.id in wanted]
            if not rows:
                raise InvalidInputError("the changes of this action are no longer in the audit log")
            fact = await engine.get(fact_id)
            for change in reversed(rows):
                if change.before is None:  # the synthesis was new: it goes out of search
                    step = lifecycle.set_status(fact, FactStatus.ARCHIVED, cause)
                else:
                    step = lifecycle.restore(fact, change.before, cause)
                    if "content" in change.before:
                        rewritten.add(fact.id)
                undo.append(step.change)
                fact = step.fact
            restored.append(fact)
        await engine.port.commit(
            WriteBatch(engine.project_id, upserts=restored, changes=undo),
            new=[f for f in restored if f.id in rewritten],
        )
        return restored
