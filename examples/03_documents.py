"""03 documents: ingest plain text as sentence-aligned chunks and search them beside facts.

Each chunk points back into its document (document id and chunk index), so an answer can cite
where it came from.

Run: python examples/03_documents.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine

RUNBOOK = """\
Deploying the billing service. Deploys happen on Tuesdays after the 10:00 stand-up.
Run the migrations first with `make migrate`; they are idempotent.
If a deploy fails, roll back with `make rollback VERSION=<previous>` and page the on-call.
The on-call rotation lives in PagerDuty under the schedule "billing-primary".
Database backups run nightly at 02:00 UTC and are kept for 35 days.
"""


async def main() -> None:
    with example_folder("03_documents") as folder:
        async with ContextEngine.local(folder, project_id="ops") as ctx:
            chunks = await ctx.add_document(RUNBOOK, document_id="billing-runbook", max_chars=160)
            await ctx.add("Maria is the billing team lead", subject="Maria")
            print(f"ingested billing-runbook as {len(chunks)} chunks")
            for question in ("how do I roll back a failed deploy?", "how long are backups kept?"):
                best = (await ctx.search(question, top_k=1))[0]
                source = best.fact.sources[0]
                print(f"{question!r}\n  -> {best.fact.content}")
                print(f"     ({best.fact.kind.value} {source.document_id}#{source.chunk_index})")
            only_facts = await ctx.search("who leads billing?", top_k=1, kinds=["fact"])
            print(f"facts only: {only_facts[0].fact.content}")


if __name__ == "__main__":
    asyncio.run(main())
