"""``sagewai consolidate``: run a consolidation of one project, from cron or by hand.

Why a command: consolidation is a maintenance job. It belongs in a scheduler (cron, a systemd
timer, a Kubernetes CronJob; see docs/consolidation.md), and schedulers speak exit codes and
JSON, not Python. Exit codes:

* 0: the run completed (also when it changed nothing);
* 1: the run failed while working (a store error); committed batches stay, the next run resumes;
* 2: the command line or the configuration is wrong (unknown scope, bad threshold, bad store);
* 3: another run holds this project's consolidation lock (nothing was done; try later).

Example:
    sagewai consolidate --project demo --store ./sagewai-data --dry-run --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from sagewai.cli._empty import allow_empty_option, require_records
from sagewai.cli._stores import DEFAULT_STORE, open_engine, store_arguments
from sagewai.core._scope import ContextScope
from sagewai.errors import ConfigurationError, LockedError, SagewaiError

if TYPE_CHECKING:
    from sagewai.intelligence import ConsolidationProgress, ConsolidationReport

__all__ = [
    "EXIT_LOCKED",
    "ProgressBar",
    "register",
    "render_report",
    "run_consolidate",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3
"""Another consolidation of the same project is running."""

_SCOPES = ("all", *(scope.value for scope in ContextScope))


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``consolidate`` command."""
    parser = subparsers.add_parser(
        "consolidate",
        help="merge duplicates, decay unused facts and resolve contradictions of a project",
        description=(
            "Consolidate one project's memory. Exit codes: 0 ok, 1 runtime failure, "
            "2 usage or configuration error, 3 another run holds the lock."
        ),
    )
    parser.add_argument("--project", required=True, help="project id")
    parser.add_argument(
        "--scope",
        choices=_SCOPES,
        default=ContextScope.PROJECT.value,
        help="scope level to consolidate, or 'all' (default: project)",
    )
    parser.add_argument("--user-id", default=None, help="with --scope user: only this user")
    parser.add_argument(
        "--session-id", default=None, help="with --scope session: only this session"
    )
    parser.add_argument(
        "--tag", dest="tags", action="append", default=None, help="only facts with this tag"
    )
    store_arguments(
        parser,
        vectors=(
            "with a postgresql:// store: the vector store, an http(s):// Qdrant URL, 'pgvector' "
            "(pgvector in the --store database) or pgvector:postgresql://..., or a Qdrant edge "
            "folder (default: $SAGEWAI_VECTORS, else the folder ./sagewai-vectors)"
        ),
    )
    parser.add_argument("--dry-run", action="store_true", help="change nothing, report the plan")
    parser.add_argument(
        "--incremental", action="store_true", help="only facts written since the last run"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--strategy",
        choices=("keep_newer", "keep_higher_confidence", "flag"),
        default="keep_newer",
        help="how contradictions are resolved (default: keep_newer)",
    )
    parser.add_argument("--threshold", type=float, default=0.92, help="duplicate cosine")
    parser.add_argument("--halflife-days", type=float, default=30.0, help="decay half-life")
    parser.add_argument("--batch-size", type=int, default=100, help="facts per transaction")
    parser.add_argument(
        "--reflect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write a synthesis per subject (default: the settings' default)",
    )
    parser.add_argument(
        "--reflection-model",
        default=None,
        help="a litellm model that writes the syntheses (default: the offline rules)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar even on a terminal"
    )
    allow_empty_option(parser)
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_consolidate(args))
    except LockedError as exc:
        print(f"sagewai: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    except ConfigurationError as exc:
        print(f"sagewai: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SagewaiError as exc:
        print(f"sagewai: consolidation failed: {exc}", file=sys.stderr)
        return EXIT_ERROR


class ProgressBar:
    """A one-line progress bar on a terminal's standard error; silent anywhere else.

    Example:
        >>> import io
        >>> from sagewai.intelligence import ConsolidationProgress
        >>> out = io.StringIO()
        >>> ProgressBar(out, enabled=True)(ConsolidationProgress(50, 100, 1, 3))
        >>> out.getvalue().strip()
        '[##########----------]  50% 50/100 facts, 3 changed'
    """

    def __init__(self, stream: TextIO, *, enabled: bool, width: int = 20) -> None:
        self._stream = stream
        self._enabled = enabled
        self._width = width
        self._drawn = False

    def __call__(self, progress: ConsolidationProgress) -> None:
        if not self._enabled:
            return
        total = max(progress.total, 1)
        done = min(self._width, self._width * progress.processed // total)
        bar = "#" * done + "-" * (self._width - done)
        percent = 100 * progress.processed // total
        self._stream.write(
            f"\r[{bar}] {percent:3d}% {progress.processed}/{progress.total} facts, "
            f"{progress.changed} changed"
        )
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the bar's line."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()


def render_report(report: ConsolidationReport) -> str:
    """The report in words, for a terminal (``--json`` prints the full report instead)."""
    mode = "dry run (nothing changed)" if report.dry_run else "run"
    lines = [
        f"consolidation {mode} {report.run_id} of project {report.project_id!r}:",
        f"  {report.total_processed} facts examined in {report.duration_ms / 1000:.1f} s "
        f"({report.batches} batches)",
        f"  {report.duplicates_removed} duplicates merged",
        f"  {report.contradictions_resolved} contradictions resolved "
        f"({report.facts_flagged} flagged for review)",
        f"  {report.facts_decayed} facts decayed ({report.facts_archived} archived)",
    ]
    if report.syntheses_written or report.syntheses_archived:
        lines.append(
            f"  {report.syntheses_written} syntheses written ({report.syntheses_archived} archived)"
        )
    if report.resumed_run_id:
        lines.append(f"  resumed the interrupted run {report.resumed_run_id}")
    for action in report.actions[:20]:
        target = f" -> {action.target_id}" if action.target_id else ""
        lines.append(
            f"  - {action.kind.value} {', '.join(action.fact_ids)}{target}: {action.reason}"
        )
    if len(report.actions) > 20 or report.actions_omitted:
        hidden = len(report.actions) - 20 + report.actions_omitted
        lines.append(f"  ... {max(hidden, 0)} more actions (use --json)")
    return "\n".join(lines)


async def run_consolidate(args: argparse.Namespace, *, stderr: TextIO | None = None) -> int:
    """Run the command for parsed ``args``; returns the exit code.

    Raises:
        LockedError: another run holds the lock (the handler turns it into exit code 3).
        ConfigurationError: bad arguments or store (exit code 2).
        SagewaiError: the run failed (exit code 1).
    """
    from sagewai.intelligence import ConsolidationOptions, MemoryConsolidator

    stderr = stderr or sys.stderr
    scope: str | None = None if args.scope == "all" else args.scope
    store = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    engine = open_engine(store, args.project, vectors=args.vectors)
    options: ConsolidationOptions = {
        "decay_halflife_days": args.halflife_days,
        "similarity_threshold": args.threshold,
        "contradiction_strategy": args.strategy,
        "batch_size": args.batch_size,
    }
    if args.reflect is not None:
        options["reflect"] = args.reflect
    if args.reflection_model is not None:
        options["reflection_model"] = args.reflection_model
    consolidator = MemoryConsolidator(engine, **options)
    bar = ProgressBar(stderr, enabled=not args.no_progress and stderr.isatty())
    tags: Sequence[str] | None = args.tags
    try:
        async with engine:
            await require_records(engine, args, store=store)
            report = await consolidator.consolidate(
                scope=scope,
                tags=tags,
                dry_run=args.dry_run,
                user_id=args.user_id,
                session_id=args.session_id,
                incremental=args.incremental,
                progress=bar,
            )
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        print(render_report(report))
    return EXIT_OK
