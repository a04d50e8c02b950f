"""One embedded folder, many real OS processes at once (DESIGN invariant 10).

Two agent processes write through ``MemoryBridge.process_message``, a third searches for the
newest writes it learns of, ``python -m sagewai consolidate`` runs again and again, and a
``sagewai mcp`` server answers the MCP SDK's real client over stdio, all on one folder: nothing
is refused, lost or stored twice, every consolidation exits 0. Then the documented Claude
Desktop + Cursor configuration: two ``sagewai mcp`` servers on one store beside the user's own
agent process.

The scenario is the one ``python -m benchmarks.multiprocess_bench`` measures for two minutes;
here it runs for a few seconds and its figures are not asserted (speed lives in the benchmark).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client

from benchmarks import multiprocess_bench as bench


async def test_writers_searcher_consolidation_and_mcp_share_one_folder(tmp_path: Path) -> None:
    report = await bench.conduct(
        tmp_path / "memory", seconds=10.0, writers=2, searchers=1, startup=8.0, at_least=5
    )
    assert report["child_exit_codes"] == [0, 0, 0]
    assert report["refused"] == 0, report["refused_examples"]
    assert report["writers_unfinished"] == []
    assert all(w["accepted"] > 0 for w in report["writers"].values()), report["writers"]
    check = report["check"]
    assert check["messages_checked"] == report["writes_total"] > 0
    assert (check["lost"], check["duplicated"], check["without_vector"]) == (0, 0, 0), check
    assert report["never_seen_by_a_searcher"] == 0
    assert report["searches_that_missed_a_returned_write"] == 0
    # Every write was either followed and found, or let go for newer ones (a slow searcher).
    assert report["staleness"]["count"] + report["not_followed"] == report["writes_total"]
    consolidation = report["consolidation"]
    assert consolidation["runs"] >= 1
    assert consolidation["exit_codes"] == [0], consolidation["failed"]
    mcp = report["mcp"]
    assert mcp["errors"] == 0, mcp["error_examples"]
    assert mcp["remembered"] >= 3
    assert mcp["recalled_at_once"] == mcp["remembered"]
    assert (check["mcp_lost"], check["mcp_duplicated"]) == (0, 0)


def _texts(result: Any) -> list[str]:
    assert not result.is_error, result.content
    return [r["content"] for r in result.structured_content["results"]]


async def test_claude_desktop_and_cursor_servers_beside_the_users_agent(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    from sagewai import ContextEngine

    async with ContextEngine.local(folder, project_id=bench.PROJECT) as ctx:
        await ctx.add("The folder exists before the clients start.")
    # The user's own agent writes its conversations through the bridge meanwhile.
    log = tmp_path / "agent.jsonl"
    start = time.time() + 3
    agent = await asyncio.create_subprocess_exec(
        sys.executable,
        *bench.ROLE_COMMAND,
        "--role", "writer", "--name", "agent", "--user", "me", "--log", str(log),
        "--folder", str(folder), "--start", str(start), "--until", str(start + 6),
        env=bench._child_env(),
    )  # fmt: skip
    desktop_config = bench.mcp_parameters(folder, user="me")
    cursor_config = bench.mcp_parameters(folder, user="me")
    async with (
        Client(desktop_config, read_timeout_seconds=120) as desktop,
        Client(cursor_config, read_timeout_seconds=120) as cursor,
    ):
        told = "I keep the spare house key under the blue flowerpot."
        stored = await desktop.call_tool("remember", {"text": told})  # through the bridge
        assert not stored.is_error, stored.content
        assert told in _texts(await cursor.call_tool("recall", {"query": "spare house key"}))
        fact = "The user's passport number ends in 4417."
        stored = await cursor.call_tool("remember", {"text": fact, "mode": "fact"})
        assert not stored.is_error, stored.content
        assert fact in _texts(await desktop.call_tool("recall", {"query": "passport number"}))
        assert await agent.wait() == 0
        lines = [bench.json.loads(raw) for raw in log.read_text().splitlines()]
        written = [line for line in lines if "text" in line]
        assert written
        assert all("refused" not in line for line in lines), lines
        # Both servers find what the agent said, in its sessions.
        last = written[-1]
        for client in (desktop, cursor):
            found = await client.call_tool(
                "recall",
                {"query": last["text"], "scope": "session", "session_id": last["session_id"]},
            )
            assert last["text"] in _texts(found)
    check = await bench.check_folder(folder, written, [fact], mcp_user="me")
    assert (check["lost"], check["duplicated"], check["without_vector"]) == (0, 0, 0), check
    assert (check["mcp_lost"], check["mcp_duplicated"]) == (0, 0)


async def test_more_bridges_than_before_write_one_folder_each_with_its_own_journal(
    tmp_path: Path,
) -> None:
    # Two writers, two MCP servers, the inspector and a notebook each run a bridge on the
    # folder: each takes a journal of its own (eight were the limit; the ninth was refused).
    from sagewai import ContextEngine
    from sagewai.context import MemoryBridge
    from sagewai.testing import FakeEmbedder

    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        bridges = [MemoryBridge(context_engine=ctx) for _ in range(12)]
        for n, bridge in enumerate(bridges):
            await bridge.process_message(f"Ticket {n} is about the printer.", session_id=f"s{n}")
        paths = {bridge.journal.path for bridge in bridges if bridge.journal is not None}
        assert len(paths) == 12
        for bridge in bridges:
            await bridge.aclose()
        for n in range(12):
            [found] = await ctx.search(f"Ticket {n} printer", session_id=f"s{n}", top_k=1)
            assert found.fact.content == f"Ticket {n} is about the printer."


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sagewai_mcp_on_a_folder_another_process_holds_prints_one_line(
    tmp_path: Path, transport: str
) -> None:
    # Only a folder of the earlier layout (vectors in Qdrant's engine) can be held.
    import subprocess

    folder = tmp_path / "old"
    (folder / "vectors").mkdir(parents=True)
    hold = (
        "import asyncio, sys, time\n"
        "from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore\n"
        "async def hold():\n"
        "    async with QdrantEdgeVectorStore(sys.argv[1], dimension=384):\n"
        "        print('holding', flush=True)\n"
        "        time.sleep(120)\n"
        "asyncio.run(hold())\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(folder / "vectors")],
        stdout=subprocess.PIPE,
        text=True,
        env=bench._child_env(),
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        hello = (
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        )
        command = ["-m", "sagewai", "mcp", "--store", str(folder), "--project", "p", "--user", "u"]
        if transport == "http":  # refused before it listens (uvicorn would log a traceback)
            command += ["--http", "127.0.0.1:1"]
        server = subprocess.run(
            [sys.executable, *command],
            input=hello,
            capture_output=True,
            text=True,
            env=bench._child_env(),
            timeout=120,
        )
    finally:
        holder.kill()
        holder.wait()
    assert server.returncode == 1
    assert server.stderr.count("\n") == 1, server.stderr
    assert f"in use by process {holder.pid}" in server.stderr
    assert "Traceback" not in server.stderr


_JOURNAL_CHILD = """
import asyncio, os, signal, sys
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder

async def main(folder, mode):
    ctx = ContextEngine.local(folder, project_id="p", embedder=FakeEmbedder())
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
    if mode == "hold":  # a live agent: holds its journal until told to stop
        await bridge.process_message("The live agent's note about the printer.", session_id="live")
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        await bridge.aclose()
        await ctx.close()
    elif mode == "die":  # accepts messages, then is killed before the workers store them all
        for n in range(20):
            await bridge.submit(f"Accepted message {n} about the garden.", session_id="dying")
        print(bridge.journal.path, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    else:  # a process started later: its bridge replays what the dead one left
        await bridge.process_message(f"A later note ({mode}).", session_id=mode)
        print(bridge.stats.messages_replayed, flush=True)
        await bridge.aclose()
        await ctx.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_a_killed_process_journal_is_replayed_once_beside_a_live_one(tmp_path: Path) -> None:
    # Each process writes its own journal; a process started after one was killed replays what
    # that one accepted, never what a live process holds, and a second replay stores nothing.
    import subprocess

    from sagewai import ContextEngine
    from sagewai.context._ranking import is_context_record
    from sagewai.testing import FakeEmbedder

    def start(mode: str, **options: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", _JOURNAL_CHILD, str(tmp_path), mode],
            text=True,
            env=bench._child_env(),
            **options,
        )

    live = start("hold", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert live.stdout is not None
        assert live.stdout.readline().strip() == "ready"
        dying = start("die", stdout=subprocess.PIPE)
        out, _ = dying.communicate(timeout=300)
        assert dying.returncode == -9
        assert out.strip().endswith(".journal")
        replayed = []
        for later in ("later-1", "later-2"):
            child = start(later, stdout=subprocess.PIPE)
            printed, _ = await asyncio.to_thread(child.communicate, timeout=300)
            assert child.returncode == 0
            replayed.append(int(printed.strip()))
        assert replayed[1] == 0  # the first later process replayed everything left; once
    finally:
        assert live.stdin is not None
        live.stdin.write("stop\n")
        live.stdin.close()
        assert live.wait(timeout=300) == 0
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as ctx:
        said = [
            f.content
            for f in await ctx.list(session_id="dying", kinds=["message"], statuses=None, limit=500)
            if f.content.startswith("Accepted message") and not is_context_record(f)
        ]
        assert sorted(said) == sorted(f"Accepted message {n} about the garden." for n in range(20))
        live_notes = await ctx.list(session_id="live", kinds=["message"], statuses=None)
        assert [f.content for f in live_notes].count(
            "The live agent's note about the printer."
        ) == 1
