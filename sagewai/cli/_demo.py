"""``sagewai demo``: the embedded pipeline end to end, offline, in one folder.

It stores a few facts, searches them, closes the engine, reopens the folder as a new engine would
after a restart, and searches again, so a new user sees in seconds that memory persists.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

__all__ = ["register", "run_demo"]

DEFAULT_FOLDER = "./sagewai-demo"

FACTS: tuple[dict[str, Any], ...] = (
    {
        "content": "Alice prefers green tea over coffee",
        "fact_type": "preference",
        "subject": "Alice",
    },
    {"content": "Alice moved to Lisbon in March 2024", "fact_type": "event", "subject": "Alice"},
    {"content": "The team decided to deploy on Tuesdays", "fact_type": "decision"},
    {"content": "Bob's staging database is postgresql://staging-db:5432/app", "subject": "Bob"},
)
QUESTIONS = ("What does Alice like to drink?", "Where does Alice live?", "staging database URL")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo", help="store, search, restart and search again on the embedded default"
    )
    parser.add_argument("--path", default=DEFAULT_FOLDER, help="folder for the embedded stores")
    parser.add_argument("--project", default="demo", help="project id")
    parser.set_defaults(handler=lambda args: asyncio.run(run_demo(Path(args.path), args.project)))


async def _ask(path: Path, project: str, label: str) -> None:
    from sagewai.context._engine import ContextEngine

    async with ContextEngine.local(path, project_id=project) as ctx:
        print(f"\n{label}: {await ctx.count()} facts in {path}")
        started = time.perf_counter()
        await ctx.port.embedder.embed_query("warm up")
        print(f"  (embedding model loaded in {time.perf_counter() - started:.2f} s)")
        for question in QUESTIONS:
            started = time.perf_counter()
            results = await ctx.search(question, top_k=1)
            elapsed = (time.perf_counter() - started) * 1000
            answer = results[0].fact.content if results else "(nothing found)"
            print(f"  {question!r:40} -> {answer}  [{elapsed:.1f} ms]")


async def run_demo(path: Path, project: str) -> int:
    """Run the demo in ``path``; returns the exit code."""
    from sagewai.context._engine import ContextEngine

    async with ContextEngine.local(path, project_id=project) as ctx:
        await ctx.forget(everything=True)
        started = time.perf_counter()
        stored = await ctx.add_many(FACTS)
        elapsed = time.perf_counter() - started
        # A folder made before vectors.sqlite3 keeps its Qdrant edge index (docs/backends.md).
        vectors = "SQLite" if (path / "vectors.sqlite3").exists() else "Qdrant edge"
        print(
            f"stored {len(stored)} facts in {elapsed:.2f} s (embedded: SQLite, vectors: {vectors})"
        )
    await _ask(path, project, "after a restart")
    return 0
