"""sagewai.sync: the blocking facade over the engine, the bridge and the agent.

Held to the README's quickstart, DESIGN.md §1's seed wiring (with the scripted model), calls
made inside a running event loop, and a real Jupyter kernel running a cell of blocking calls.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from sagewai import ContextEngine, UniversalAgent
from sagewai._background import BackgroundLoop
from sagewai.context import MemoryBridge
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.intelligence import MemoryConsolidator, RuleBasedFactExtractor
from sagewai.sync import SyncContextEngine, SyncMemoryBridge, SyncUniversalAgent, run, wrap
from sagewai.testing import FakeEmbedder, ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_quickstart_without_await(tmp_path: Path) -> None:
    # The README's quickstart, line for line, with the awaits gone.
    with SyncContextEngine.local(tmp_path / "memory", project_id="my-app") as ctx:
        ctx.add(
            "Alice prefers green tea over coffee",
            fact_type="preference",
            subject="Alice",
            user_id="alice",
        )
        found = ctx.search("what does Alice drink?", user_id="alice")
    assert found[0].fact.content == "Alice prefers green tea over coffee"
    assert 0.0 <= found[0].score <= 1.0
    # Reopened (a new process would do the same): the fact is on disk.
    with wrap(ContextEngine.local(tmp_path / "memory", project_id="my-app")) as again:
        assert again.count() >= 1
        assert all(r.fact.user_id != "alice" for r in again.search("tea", user_id="bob"))


def test_the_seed_wiring_without_await(tmp_path: Path) -> None:
    # DESIGN.md §1, as written, then wrapped; the model is the scripted one.
    ctx = ContextEngine.local(tmp_path / "memory", project_id="my-app")
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
    llm = ScriptedLLM(["You live in Berlin now."])
    agent = UniversalAgent(
        name="helper", model="gpt-4o", context=ctx, memory_bridge=bridge, llm=llm
    )
    sync_ctx, sync_bridge, sync_agent = wrap(ctx), wrap(bridge), wrap(agent)
    assert isinstance(sync_bridge, SyncMemoryBridge)
    assert isinstance(sync_agent, SyncUniversalAgent)

    sync_bridge.process_message("I moved to Berlin last month", session_id="s1")
    assert sync_agent.chat("Where do I live now?", session_id="s2") == "You live in Berlin now."
    assert "Berlin" in llm.calls[0].prompt  # recalled from session s1 before answering
    report = run(MemoryConsolidator(context_engine=ctx).consolidate(dry_run=True))
    assert report.total_processed >= 1
    sync_agent.close()
    sync_bridge.close()
    sync_ctx.close()
    with SyncContextEngine.local(tmp_path / "memory", project_id="my-app") as reopened:
        assert any("Berlin" in r.fact.content for r in reopened.search("Berlin"))


async def test_blocking_calls_work_inside_a_running_loop() -> None:
    # A notebook cell runs inside the kernel's loop: asyncio.run refuses there, wrap() works.
    pending = asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(pending)
    pending.close()
    with SyncContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        ctx.add("Ravi's build server is ci-7", user_id="ravi")
        assert [r.fact.content for r in ctx.search("build server", user_id="ravi")] == [
            "Ravi's build server is ci-7"
        ]


def test_errors_arrive_as_they_are_and_the_loop_stays_usable() -> None:
    with SyncContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        with pytest.raises(InvalidInputError):
            ctx.search("")
        assert ctx.add("still works").content == "still works"


def test_a_blocking_call_from_the_loop_itself_is_refused() -> None:
    loop = BackgroundLoop(name="test-refusal")
    ctx = wrap(ContextEngine.in_memory(embedder=FakeEmbedder()), loop=loop)

    async def nested() -> None:
        ctx.count()  # would wait for itself forever

    try:
        with pytest.raises(ConfigurationError, match="await the async method"):
            loop.run(nested())
    finally:
        loop.stop()


def test_wrap_refuses_what_it_cannot_wrap() -> None:
    with pytest.raises(InvalidInputError, match="ContextEngine"):
        wrap("not an engine")  # type: ignore[call-overload]


def test_blocking_methods_keep_the_async_documentation() -> None:
    ctx = SyncContextEngine.in_memory(embedder=FakeEmbedder())
    assert ctx.search.__doc__ == ContextEngine.search.__doc__
    assert ctx.search.__name__ == "search"


def test_a_real_jupyter_kernel_runs_blocking_calls_in_a_cell(tmp_path: Path) -> None:
    jupyter_client = pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "HF_HUB_OFFLINE": "1",
    }
    manager = jupyter_client.KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable  # this interpreter, with sagewai installed
    manager.start_kernel(env=env, cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        cell = textwrap.dedent(
            f"""
            import asyncio
            from sagewai import ContextEngine
            from sagewai.sync import wrap
            print("loop running in the cell:", asyncio.get_running_loop().is_running())
            ctx = wrap(ContextEngine.local({str(tmp_path / "nb")!r}, project_id="notebook"))
            ctx.add("Mina's favourite editor is Helix", user_id="mina")
            print("found:", [r.fact.content for r in ctx.search("editor", user_id="mina")])
            print("other user:", [r.fact.content for r in ctx.search("editor", user_id="li")])
            ctx.close()
            """
        )
        outputs: list[str] = []
        reply = client.execute_interactive(
            cell,
            timeout=120,
            output_hook=lambda msg: outputs.append(
                msg["content"].get("text", "") + str(msg["content"].get("traceback", ""))
            ),
        )
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    printed = "".join(outputs)
    assert reply["content"]["status"] == "ok", printed
    assert "loop running in the cell: True" in printed
    assert 'found: ["Mina\'s favourite editor is Helix"]' in printed
    assert "other user: []" in printed
