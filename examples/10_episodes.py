"""10 episodes: whole sessions kept as they happened, found again by what was discussed.

Facts are what a conversation concluded; an episode is the conversation itself, with a summary
to find it by ("what did we say about the launch?"). ``ContextEngine.local`` keeps them in one
SQLite file of its folder (``ctx.episodes.store``), and ``forget`` reaches them.

Run: python examples/10_episodes.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine

SESSIONS = {
    "launch-planning": [
        {"role": "user", "content": "The launch moves to 12 May because QA needs another week."},
        {"role": "assistant", "content": "Updated the plan: launch on 12 May, QA until 9 May."},
    ],
    "hiring": [
        {"role": "user", "content": "We are hiring two backend engineers in Porto."},
        {"role": "assistant", "content": "I drafted the job ad for the Porto backend roles."},
    ],
}


async def main() -> None:
    with example_folder("10_episodes") as folder:
        async with ContextEngine.local(folder, project_id="team") as ctx:
            store = ctx.episodes.store  # episodes.sqlite3 in the engine's folder
            assert store is not None
            for session_id, messages in SESSIONS.items():
                episode_id = await store.save_episode(
                    session_id,
                    messages,
                    project_id="team",
                    user_id="ana",
                    metadata={"channel": "slack"},
                )
                print(f"saved {session_id} as episode {episode_id[:8]}")
            for query in ("when is the launch?", "which roles are we hiring for?"):
                best = (await store.search_episodes(query, project_id="team", limit=1))[0]
                print(f"\n{query!r} -> session {best.session_id} (score {best.score:.2f})")
                print(f"   summary: {best.summary}")
            report = await ctx.forget(session_id="hiring")
            left = [e.session_id for e in await store.list_episodes(project_id="team")]
            print(f"\nforgot session 'hiring' ({report.episodes_deleted} episode); left: {left}")


if __name__ == "__main__":
    asyncio.run(main())
