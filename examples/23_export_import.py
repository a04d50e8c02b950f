"""23 export / import / migrate: move a project's memory between backends, nothing lost.

``export_archive`` writes a project to a versioned JSONL archive: every fact with every field,
the audit history (tombstones included), the vectors with the embedder's name, the knowledge
graph and the episodes. ``import_archive`` reads it into any backend, idempotently; the
``sagewai migrate`` command does both at once (here between two embedded folders; point
``--to`` at ``postgresql://...`` for PostgreSQL + Qdrant).

Run: python examples/23_export_import.py
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context.archive import export_archive, import_archive, read_header
from sagewai.graph import Entity, Relation


async def fill(ctx: ContextEngine) -> None:
    await ctx.add("Invoices are archived for 10 years", subject="invoices", tags=["policy"])
    old = await ctx.add("Priya leads the billing team", subject="Priya", user_id="priya")
    await ctx.supersede(old.id, "Priya leads the payments team", reason="reorganisation")
    assert ctx.graph_store is not None
    priya = Entity(project_id=ctx.project_id, name="Priya", label="person")
    team = Entity(project_id=ctx.project_id, name="payments team", label="team")
    await ctx.graph_store.upsert_entities([priya, team])
    await ctx.graph_store.upsert_relation(
        Relation(
            project_id=ctx.project_id, subject_id=priya.id, predicate="leads", object_id=team.id
        )
    )
    assert ctx.episodes.store is not None
    await ctx.episodes.store.save_episode(
        "kickoff",
        [{"role": "user", "content": "Priya will lead payments from May."}],
        project_id=ctx.project_id,
    )


async def main() -> None:
    with example_folder("23_export_import") as folder:
        source = folder / "memory"
        archive = folder / "billing.jsonl.gz"
        async with ContextEngine.local(source, project_id="billing") as ctx:
            await fill(ctx)
            header = await export_archive(ctx, archive)
            before = [
                r.fact.content for r in await ctx.search("who leads payments?", user_id="priya")
            ]
        counts = header.counts
        print(
            f"exported: {counts.facts} facts, {counts.changes} changes, {counts.entities} "
            f"entities, {counts.relations} relations, {counts.episodes} episodes "
            f"(vectors by {read_header(archive).embedder})"
        )

        # Into another backend: the in-memory engine (any engine works the same way).
        async with ContextEngine.in_memory(project_id="billing") as copy:
            report = await import_archive(copy, archive)
            print(f"imported: {report.imported}, re-embedded {report.re_embedded}")
            missing = " or ".join(report.unsupported)
            print(f"  (counted, not imported: this engine has no {missing} store)")
            again = await import_archive(copy, archive)
            print(f"imported again: {sum(again.imported.values())} new, skipped {again.skipped}")
            after = [
                r.fact.content for r in await copy.search("who leads payments?", user_id="priya")
            ]
            print(f"same search results after the move: {after == before} -> {after[0]}")
            history = await copy.changes()
            print(f"history came along: {[c.action.value for c in history]}")

        # The command line does both at once, with a progress line per stage on stderr.
        target = folder / "moved"
        command = [
            sys.executable,
            "-m",
            "sagewai.cli._main",
            "migrate",
            "--project",
            "billing",
            "--from",
            str(source),
            "--to",
            str(target),
        ]
        done = await asyncio.to_thread(
            subprocess.run, command, capture_output=True, text=True, check=True
        )
        print(f"$ sagewai migrate --project billing --from {source.name} --to {target.name}")
        print("  " + done.stdout.strip().replace("\n", "\n  "))


if __name__ == "__main__":
    asyncio.run(main())
