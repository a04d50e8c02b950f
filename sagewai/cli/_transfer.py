"""``sagewai export``, ``sagewai import`` and ``sagewai migrate``: move a project's memory.

Why commands: backing up a project, moving it from the embedded folder to PostgreSQL + Qdrant,
or copying it into another project are operations jobs, run from a shell or a scheduler. The
archive format is described in :mod:`sagewai.context.archive`. Stores are named as for
``sagewai consolidate``: an embedded folder, or ``postgresql://...`` with ``--vectors``. Exit
codes: 0 done, 1 a store failed while working (re-running is safe: imports are idempotent),
2 the command line, the configuration or the archive is wrong.

Example:
    sagewai export --project demo --store ./sagewai-data --out demo.jsonl.gz
    sagewai import demo.jsonl.gz --store postgresql://localhost/app --vectors ./vectors
    sagewai migrate --project demo --from ./sagewai-data --to postgresql://localhost/app
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sagewai.cli._empty import allow_empty_option, require_records
from sagewai.errors import ConfigurationError, SagewaiError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.context.archive import ImportReport, TransferProgress

__all__ = ["TransferBar", "open_store", "register"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
_CONFLICT_HELP = (
    "what to do with a record the target already holds: skip (keep the target's; the default, "
    "so a re-run is a no-op), replace (overwrite it with the archive's), new-ids (import a copy "
    "under new ids derived from the old ones)"
)


def _store_arguments(parser: argparse.ArgumentParser, *, prefix: str = "", what: str) -> None:
    dash = f"--{prefix}-" if prefix else "--"
    parser.add_argument(
        f"{dash}vectors",
        default=None,
        help=(
            f"with a postgresql:// {what}: the vector store, an http(s):// Qdrant URL or a "
            "Qdrant edge folder (default: $SAGEWAI_VECTORS, else ./sagewai-vectors)"
        ),
    )
    parser.add_argument(
        f"{dash}graph",
        default=None,
        help=f"with a postgresql:// {what}: a SQLite file holding the knowledge graph",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embedder",
        default=None,
        help="embedder spec (minilm, fake:<dim>, sentence-transformers:..., litellm:...); "
        "default minilm, the embedded default",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export``, ``import`` and ``migrate`` commands."""
    export = subparsers.add_parser(
        "export",
        help="write a project (facts, history, vectors, graph, episodes) to a JSONL archive",
        description=(
            "Export one project to a versioned JSONL archive (gzip when OUT ends in .gz). "
            "Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error."
        ),
    )
    export.add_argument("--project", required=True, help="project id")
    export.add_argument(
        "--store", default=None, help="embedded folder or postgresql://... ($SAGEWAI_STORE)"
    )
    _store_arguments(export, what="store")
    export.add_argument("--out", required=True, help="archive file to write (.jsonl or .jsonl.gz)")
    _common(export)
    allow_empty_option(export)
    export.set_defaults(handler=lambda args: _run(_export(args)))

    imp = subparsers.add_parser(
        "import",
        help="read an archive into any backend (idempotent; re-embeds for another embedder)",
        description=(
            "Import an archive written by `sagewai export` into a project of any store. "
            "Exit codes: 0 ok, 1 runtime failure (re-run it), 2 usage, configuration or "
            "archive error (nothing was written)."
        ),
    )
    imp.add_argument("archive", help="archive file (.jsonl or .jsonl.gz)")
    imp.add_argument(
        "--project", default=None, help="target project id (default: the archive's project)"
    )
    imp.add_argument(
        "--store", default=None, help="embedded folder (created if missing) or postgresql://..."
    )
    _store_arguments(imp, what="store")
    imp.add_argument(
        "--on-conflict", choices=("skip", "replace", "new-ids"), default="skip", help=_CONFLICT_HELP
    )
    _common(imp)
    imp.set_defaults(handler=lambda args: _run(_import(args)))

    mig = subparsers.add_parser(
        "migrate",
        help="move a project from one store to another (export then import)",
        description=(
            "Copy one project from --from to --to, e.g. from the embedded folder to PostgreSQL "
            "+ Qdrant. Idempotent: an interrupted migration is completed by running it again. "
            "Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error."
        ),
    )
    mig.add_argument("--project", required=True, help="project id in the source")
    mig.add_argument("--to-project", default=None, help="project id in the target (default: same)")
    mig.add_argument("--from", dest="source", required=True, help="source store")
    mig.add_argument("--to", dest="target", required=True, help="target store")
    _store_arguments(mig, prefix="from", what="source")
    _store_arguments(mig, prefix="to", what="target")
    mig.add_argument(
        "--to-embedder",
        default=None,
        help="embedder of the target (default: --embedder); another one re-embeds every fact",
    )
    mig.add_argument(
        "--on-conflict", choices=("skip", "replace", "new-ids"), default="skip", help=_CONFLICT_HELP
    )
    mig.add_argument("--archive", default=None, help="also keep the archive at this path")
    _common(mig)
    allow_empty_option(mig)
    mig.set_defaults(handler=lambda args: _run(_migrate(args)))


def _run(work: Coroutine[Any, Any, int]) -> int:
    try:
        return asyncio.run(work)
    except ConfigurationError as exc:
        print(f"sagewai: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SagewaiError as exc:
        print(f"sagewai: transfer failed: {exc}", file=sys.stderr)
        return EXIT_ERROR


class TransferBar:
    """Plain progress on standard error: a redrawn line on a terminal, a line per stage else.

    Example:
        >>> import io
        >>> from sagewai.context.archive import TransferProgress
        >>> out = io.StringIO()
        >>> bar = TransferBar(out, enabled=True, terminal=True)
        >>> bar(TransferProgress("import facts", 50, 100))
        >>> out.getvalue().strip()
        '[##########----------]  50% import facts 50/100'
    """

    def __init__(
        self, stream: TextIO, *, enabled: bool, terminal: bool | None = None, width: int = 20
    ) -> None:
        self._stream = stream
        self._enabled = enabled
        self._terminal = stream.isatty() if terminal is None else terminal
        self._width = width
        self._stage: str | None = None
        self._started = time.perf_counter()

    def __call__(self, progress: TransferProgress) -> None:
        if not self._enabled:
            return
        total = max(progress.total, 1)
        percent = 100 * progress.done // total
        if self._terminal:
            done = min(self._width, self._width * progress.done // total)
            bar = "#" * done + "-" * (self._width - done)
            self._stream.write(
                f"\r[{bar}] {percent:3d}% {progress.stage} {progress.done}/{progress.total}"
            )
            if progress.done >= progress.total:
                self._stream.write("\n")
        elif progress.done >= progress.total or progress.stage != self._stage:
            rate = progress.done / max(time.perf_counter() - self._started, 1e-9)
            self._stream.write(
                f"{progress.stage}: {progress.done}/{progress.total} ({percent}%, {rate:,.0f}/s)\n"
            )
        self._stage = progress.stage
        self._stream.flush()


def open_store(
    store: str | None,
    project_id: str,
    *,
    vectors: str | None,
    graph: str | None,
    embedder_spec: str | None,
    create: bool,
) -> ContextEngine:
    """An engine on ``store`` as ``sagewai consolidate`` resolves it, with every store attached.

    A PostgreSQL store also gets its episode store (same database) and, with ``graph``, a SQLite
    knowledge graph file. With ``create`` a missing embedded folder is created (an import target).
    """
    from sagewai.cli._stores import DEFAULT_STORE, open_engine
    from sagewai.embeddings._resolve import resolve_embedder

    store = store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    embedder = resolve_embedder(embedder_spec)
    if create and "://" not in store:
        Path(store).mkdir(parents=True, exist_ok=True)
    engine = open_engine(store, project_id, vectors=vectors, embedder=embedder)
    if "://" not in store:
        if graph is not None:
            raise ConfigurationError("--graph is for a postgresql:// store; a folder has its graph")
        return engine
    from sagewai.context._engine import ContextEngine
    from sagewai.context.episodes import PersistentEpisodeStore

    stores = dataclasses.replace(
        engine.stores, episodes=PersistentEpisodeStore(store, embedder=engine.port.embedder)
    )
    if graph is not None:
        from sagewai.stores.sqlite._graph import SqliteGraphStore

        stores = dataclasses.replace(stores, graph=SqliteGraphStore(graph))
    return ContextEngine(stores=stores, project_id=project_id, org_id=engine.org_id)


async def _prepared(engine: ContextEngine) -> ContextEngine:
    """Open the engine; PostgreSQL stores get their tables created (idempotent, data untouched)."""
    await engine.migrate()
    return engine


def _bar(args: argparse.Namespace) -> TransferBar:
    return TransferBar(sys.stderr, enabled=not args.no_progress)


def _print_import(report: ImportReport, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
        return
    moved = ", ".join(f"{n} {kind}" for kind, n in report.imported.items())
    print(f"imported into project {report.project_id!r}: {moved} in {report.duration_s:.1f} s")
    skipped = {kind: n for kind, n in report.skipped.items() if n}
    if skipped:
        print("  skipped: " + ", ".join(f"{n} {kind}" for kind, n in skipped.items()))
    if report.indexed:
        print(f"  indexed {report.indexed} held facts whose vectors this vector store lacked")
    if report.re_embedded:
        print(f"  re-embedded {report.re_embedded} facts (another embedder or a missing vector)")
    for kind in report.unsupported:
        print(f"  the target has no {kind} store: its {kind} were not imported (see --graph)")


async def _export(args: argparse.Namespace) -> int:
    from sagewai.context.archive import export_archive

    engine = open_store(
        args.store,
        args.project,
        vectors=args.vectors,
        graph=args.graph,
        embedder_spec=args.embedder,
        create=False,
    )
    async with await _prepared(engine):
        await require_records(engine, args)
        header = await export_archive(engine, args.out, progress=_bar(args))
    if args.json:
        print(json.dumps(header.model_dump(mode="json"), indent=2))
    else:
        counts = header.counts
        print(
            f"exported project {header.project_id!r} to {args.out}: {counts.facts} facts "
            f"({counts.vectors} vectors, {header.embedder}), {counts.changes} changes, "
            f"{counts.entities} entities, {counts.relations} relations, {counts.episodes} episodes"
        )
    return EXIT_OK


def _require_vectors(store: str | None, vectors: str | None, option: str) -> None:
    """A PostgreSQL target names where its vectors go: they are never put somewhere unsaid.

    Without it the vectors would land in ``./sagewai-vectors`` of whatever folder the command
    ran in, and a later command naming another vector store would find none of them.
    """
    store = store or os.environ.get("SAGEWAI_STORE")
    if store is None or "://" not in store or vectors or os.environ.get("SAGEWAI_VECTORS"):
        return
    raise ConfigurationError(
        f"a postgresql:// target needs {option}: where the facts' vectors go (pgvector for "
        "the same database, an http(s):// Qdrant URL, or a Qdrant edge folder); give the one "
        "later commands will search, or set $SAGEWAI_VECTORS"
    )


def _missing_folder(store: str) -> bool:
    """Whether ``store`` is an embedded folder that does not exist yet (an import makes it)."""
    return "://" not in store and not Path(store).exists()


async def _import(args: argparse.Namespace) -> int:
    import shutil

    from sagewai.context.archive import import_archive, read_header

    # The archive is checked before anything is made: a malformed one leaves no folder behind.
    header = read_header(args.archive)
    project = args.project or header.project_id
    _require_vectors(args.store, args.vectors, "--vectors")
    from sagewai.cli._stores import DEFAULT_STORE

    folder = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    made = _missing_folder(folder)
    engine = open_store(
        args.store,
        project,
        vectors=args.vectors,
        graph=args.graph,
        embedder_spec=args.embedder,
        create=True,
    )
    try:
        async with await _prepared(engine):
            report = await import_archive(
                engine, args.archive, on_conflict=args.on_conflict, progress=_bar(args)
            )
    except ConfigurationError:
        # An archive error is found before any write: a folder made for it goes with it.
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    _print_import(report, args.json)
    return EXIT_OK


async def _migrate(args: argparse.Namespace) -> int:
    from sagewai.context.archive import migrate

    _require_vectors(args.target, args.to_vectors, "--to-vectors")
    source = open_store(
        args.source,
        args.project,
        vectors=args.from_vectors,
        graph=args.from_graph,
        embedder_spec=args.embedder,
        create=False,
    )
    target = open_store(
        args.target,
        args.to_project or args.project,
        vectors=args.to_vectors,
        graph=args.to_graph,
        embedder_spec=args.to_embedder or args.embedder,
        create=True,
    )
    async with await _prepared(source), await _prepared(target):
        await require_records(source, args, store=args.source)
        report = await migrate(
            source, target, on_conflict=args.on_conflict, archive=args.archive, progress=_bar(args)
        )
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
        return EXIT_OK
    total = report.export_s + report.import_s
    print(
        f"migrated {report.header.counts.facts} facts of project {args.project!r} in "
        f"{total:.1f} s ({report.facts_per_second:,.0f} facts/s; export {report.export_s:.1f} s, "
        f"import {report.import_s:.1f} s)"
    )
    _print_import(report.imported, False)
    return EXIT_OK
