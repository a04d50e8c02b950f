"""21 inspect memory from the shell: what it holds, where a fact came from, undo, forget.

A conversation is bridged into an embedded folder, then the folder is inspected with the
`sagewai` commands an operator types: `facts` (tables for people, `--json` lines for scripts),
`search`, `history`, `revert` and `forget --dry-run`. Exit codes are those of `consolidate`:
0 ok, 1 runtime failure, 2 usage or configuration error.

Run: python examples/21_inspect_memory.py
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor

SAID = [
    ("2024-01-10T09:00:00+00:00", "I live in Paris."),
    ("2024-02-02T18:30:00+00:00", "I prefer window seats."),
    ("2024-06-20T12:00:00+00:00", "I moved to Berlin last week."),
]


def sagewai(folder: Path, *argv: str) -> str:
    """Run one `sagewai` command on the folder, as a shell would; print and return its output."""
    command = [*argv, "--project", "travel", "--store", str(folder)]
    print(f"\n$ sagewai {' '.join(command).replace(str(folder), 'DATA')}")
    done = subprocess.run(
        [sys.executable, "-m", "sagewai", *command],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in (done.stdout.rstrip() or done.stderr.rstrip()).splitlines():
        print(line if len(line) <= 140 else line[:139] + "…")
    print(f"(exit {done.returncode})")
    return done.stdout


async def remember(folder: Path) -> None:
    async with ContextEngine.local(folder, project_id="travel") as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), extract_every_n_turns=1
        )
        for when, text in SAID:
            await bridge.process_message(
                {"role": "user", "content": text, "timestamp": when},
                session_id=f"s-{when[:10]}",
                user_id="lea",
            )


def main() -> None:
    with example_folder("21_inspect_memory") as folder:
        asyncio.run(remember(folder))
        sagewai(folder, "facts", "--user-id", "lea", "--status", "all")
        sagewai(folder, "facts", "--as-of", "2024-03-01", "--user-id", "lea")
        sagewai(folder, "search", "where does Lea live?", "--user-id", "lea", "--top-k", "2")

        lines = sagewai(folder, "facts", "--status", "superseded", "--json")
        paris = json.loads(lines.splitlines()[0])
        changes = sagewai(folder, "history", paris["id"], "--json")
        history = [json.loads(line) for line in changes.splitlines()]
        superseded = [change for change in history if change["action"] == "superseded"]
        print(f"-> {paris['content']!r} was {superseded[0]['action']} by {superseded[0]['rule']}")

        sagewai(folder, "revert", superseded[0]["id"])
        sagewai(folder, "forget", "--session-id", "s-2024-02-02", "--dry-run")
        sagewai(folder, "forget", "--session-id", "s-2024-02-02")
        sagewai(folder, "facts", "--user-id", "lea")
        sagewai(folder, "history", "no-such-fact")


if __name__ == "__main__":
    main()
