"""02 scopes: ORG ⊃ PROJECT ⊃ USER ⊃ SESSION; a search reads its scope and those above it.

A user's facts are recalled in every session of that user and never for another user; a session
fact stays in its session; project facts are shared by everyone in the project.

Run: python examples/02_scopes.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine


async def main() -> None:
    with example_folder("02_scopes") as folder:
        async with ContextEngine.local(folder, project_id="support", org_id="acme") as ctx:
            await ctx.add("Acme's support hours are 9:00-17:00 CET", scope="org")
            await ctx.add("Refunds need an order number", scope="project")
            await ctx.add("Alice is on the premium plan", user_id="alice")
            await ctx.add("Bob is on the free plan", user_id="bob")
            await ctx.add(
                "Alice is asking about invoice INV-2291",
                user_id="alice",
                session_id="s1",
                scope="session",
            )

            async def show(label: str, user_id: str, session_id: str | None = None) -> None:
                found = await ctx.search(
                    "plan, invoice, refunds and support hours",
                    top_k=10,
                    user_id=user_id,
                    session_id=session_id,
                )
                print(f"{label}:")
                for result in found:
                    print(f"  [{result.fact.scope.value:7}] {result.fact.content}")

            await show("alice in session s1", user_id="alice", session_id="s1")
            await show("alice in session s2", user_id="alice", session_id="s2")
            await show("bob", user_id="bob")


if __name__ == "__main__":
    asyncio.run(main())
