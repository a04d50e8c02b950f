"""``sagewai graph export``: write one project's knowledge graph as HTML, GraphML or JSON.

The store is the embedded SQLite graph of a folder (``--store ./sagewai-data`` reads
``./sagewai-data/graph.sqlite3``) or a graph file named directly. The HTML page is
self-contained: open it in a browser with no network to drag, zoom and inspect the graph.

Example:
    sagewai graph export --project demo --format html --store ./sagewai-data --out graph.html
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from sagewai.cli._stores import DEFAULT_STORE
from sagewai.errors import ConfigurationError
from sagewai.graph._export import EXPORT_FORMATS, export_graph
from sagewai.stores.sqlite._graph import GRAPH_FILENAME, SqliteGraphStore, graph_file

__all__ = ["register", "run_export"]


"""The embedded store folder read when ``--store`` is not given."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``graph`` command and its ``export`` subcommand."""
    parser = subparsers.add_parser("graph", help="inspect and export the knowledge graph")
    commands = parser.add_subparsers(dest="graph_command", metavar="SUBCOMMAND", required=True)
    export = commands.add_parser(
        "export", help="write a project's graph as html (interactive, offline), graphml or json"
    )
    export.add_argument("--project", required=True, help="project id")
    export.add_argument(
        "--format", dest="fmt", choices=EXPORT_FORMATS, default="html", help="output format"
    )
    export.add_argument(
        "--store",
        default=DEFAULT_STORE,
        help=f"embedded store folder (reads FOLDER/{GRAPH_FILENAME}) or a graph file",
    )
    export.add_argument("--out", default=None, help="output file (default: standard output)")
    export.set_defaults(
        handler=lambda args: asyncio.run(
            run_export(Path(args.store), args.project, args.fmt, args.out)
        )
    )


def _resolve_store(store: Path) -> Path:
    path = graph_file(store) if store.is_dir() else store
    if not path.is_file():
        raise ConfigurationError(
            f"no graph database at {path}: give --store the folder of an embedded store "
            f"(holding {GRAPH_FILENAME}) or the graph file itself"
        )
    return path


async def run_export(store: Path, project_id: str, fmt: str, out: str | None) -> int:
    """Export ``project_id``'s graph from ``store`` to ``out`` (or standard output)."""
    path = _resolve_store(store)
    async with SqliteGraphStore(path) as graph_store:
        graph = graph_store.for_project(project_id)
        counts = await graph.counts()
        document = await export_graph(graph, fmt)
    if out is None:
        sys.stdout.write(document)
    else:
        await asyncio.to_thread(Path(out).write_text, document, encoding="utf-8")
        print(
            f"wrote {counts.entities} entities and {counts.relations} relations of project "
            f"{project_id!r} to {out} ({fmt})",
            file=sys.stderr,
        )
    return 0
