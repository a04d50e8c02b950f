"""A restarted bridge stores exactly what an uninterrupted one stores (issue 39).

A context record holds the end of the turn before its message; the bridge kept that turn in
memory only, so the first turn after a restart (clean, or a SIGKILL and the journal's replay)
got no context record. Here a conversation is written through the bridge by child processes
killed at random points, each restart going on where the store says the last one stopped; the
records it leaves (messages, context records, facts) must be those of one uninterrupted run.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.context._ranking import is_context_record
from sagewai.core._records import FactKind
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder

ROOT = Path(__file__).resolve().parent.parent

_LINES = (
    ("user", "Do you want tea or coffee?"),
    ("assistant", "Which one is stronger?"),
    ("user", "Coffee, I think."),
    ("assistant", "Then coffee it is."),
    ("user", "I prefer green tea in the evening."),
    ("assistant", "Noted."),
    ("user", "We decided to migrate to Postgres next quarter."),
    ("assistant", "Which team owns it?"),
    ("user", "My name is Dana and I lead the platform team."),
    ("assistant", "Thanks, Dana."),
    ("user", "Yes, last Friday."),
    ("assistant", "Got it."),
)
TURNS = [
    (role, f"{text} ({number})" if role == "assistant" or number % 3 else text)
    for number, (role, text) in enumerate(
        (line for _ in range(3) for line in _LINES),
    )
]
"""36 turns: short replies (context records) and statements the rules read (facts); assistant
lines are numbered so every message is said once, some user statements are said again."""

Record = tuple[str, str, str, bool]


def _engine(folder: Path) -> ContextEngine:
    return ContextEngine.local(folder, project_id="p", embedder=FakeEmbedder())


def _bridge(engine: ContextEngine) -> MemoryBridge:
    return MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())


async def _records(engine: ContextEngine) -> list[Record]:
    """Every record, normalised: kind, content, session, whether it is a context record."""
    stored = await engine.list(limit=10_000, statuses=None)
    return sorted(
        (f.kind.value, " ".join(f.content.split()), f.session_id or "", is_context_record(f))
        for f in stored
    )


async def _said(engine: ContextEngine) -> int:
    """How many turns of the conversation are stored (the turns are recorded in order)."""
    stored = await engine.list(limit=10_000, statuses=None, session_id="s1")
    messages = {
        f.sources[0].message_id
        for f in stored
        if f.kind == FactKind.MESSAGE and not is_context_record(f)
    }
    return len(messages)


async def _write(folder: Path, *, announce: bool) -> None:
    """Go on with the conversation from where the store says it stopped (no close call)."""
    engine = _engine(folder)
    bridge = _bridge(engine)
    await bridge.start()  # the journal's leftovers replayed: stored, then counted
    start = await _said(engine)
    for number in range(start, len(TURNS)):
        role, text = TURNS[number]
        await bridge.process_message(text, role=role, session_id="s1")
        if announce:
            print(f"TURN {number}", flush=True)
    if announce:
        print("DONE", flush=True)
        await asyncio.sleep(3600)  # killed here too: the end is never closed either


def _child(folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.test_bridge_restarts", str(folder)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _uninterrupted(folder: Path) -> list[Record]:
    engine = _engine(folder)
    bridge = _bridge(engine)
    for role, text in TURNS:
        await bridge.process_message(text, role=role, session_id="s1")
    await bridge.aclose()
    records = await _records(engine)
    await engine.close()
    return records


async def _after_kills(folder: Path) -> list[Record]:
    engine = _engine(folder)
    await _bridge(engine).start()
    records = await _records(engine)
    await engine.close()
    return records


async def _in_turns(folder: Path, restarts: set[int], *, user_id: str | None = None) -> None:
    """The conversation through one bridge, a new bridge (and engine) before each of
    ``restarts``."""
    engine = _engine(folder)
    bridge = _bridge(engine)
    for number, (role, text) in enumerate(TURNS[:12]):
        if number in restarts:
            await bridge.aclose()
            await engine.close()
            engine = _engine(folder)
            bridge = _bridge(engine)
        await bridge.process_message(text, role=role, session_id="s1", user_id=user_id)
    await bridge.aclose()
    await engine.close()


async def _stored(folder: Path) -> list[Record]:
    engine = _engine(folder)
    records = await _records(engine)
    await engine.close()
    return records


async def test_a_clean_restart_between_any_two_turns_stores_the_same(tmp_path: Path) -> None:
    await _in_turns(tmp_path / "once", set())
    expected = await _stored(tmp_path / "once")
    # Restarts before a reply, before a question, twice in a row and before the last turn.
    await _in_turns(tmp_path / "restarted", {1, 4, 5, 11})
    assert await _stored(tmp_path / "restarted") == expected


async def test_a_restarted_session_never_borrows_another_users_turn(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    bridge = _bridge(engine)
    await bridge.process_message("Do you want tea or coffee?", session_id="s1", user_id="ann")
    await bridge.aclose()
    # Another user's session of the same name, in a restarted bridge: its first turn has no
    # turn before it (Ann's question is not Bob's).
    bridge = _bridge(engine)
    await bridge.process_message("Coffee, I think.", session_id="s1", user_id="bob")
    await bridge.aclose()
    bob = await engine.list(user_id="bob", session_id="s1", statuses=None)
    assert [f.content for f in bob if is_context_record(f)] == []
    assert [f.content for f in bob if f.kind == FactKind.MESSAGE] == ["Coffee, I think."]
    await engine.close()


@pytest.mark.slow
def test_killed_and_restarted_bridges_store_what_one_uninterrupted_bridge_stores(
    tmp_path: Path,
) -> None:
    seed = random.randrange(1_000_000)
    chance = random.Random(seed)
    killed = 0
    deadline = time.monotonic() + 120  # a guard for a loaded machine: ~30 s is typical
    while time.monotonic() < deadline:
        child = _child(tmp_path / "killed")
        try:
            assert child.stdout is not None
            # Kill after a random number of this child's turns, a random moment later: in the
            # middle of a write, between two turns, or before the journal's replay is done.
            # Now and then during start-up (the replay), else after a few turns (progress).
            wait_for = chance.choice([0, *range(3, 14)])
            line = ""
            for _ in range(wait_for):
                line = child.stdout.readline().strip()
                if not line or line == "DONE":
                    break
            done = line == "DONE"
            time.sleep(chance.uniform(0.0, 0.05))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
            _, err = child.communicate()
        assert "Traceback" not in err, f"seed {seed}: {err}"
        killed += 1
        if done:
            break
    else:
        pytest.fail(f"seed {seed}: the conversation did not finish in time")
    expected = asyncio.run(_uninterrupted(tmp_path / "uninterrupted"))
    got = asyncio.run(_after_kills(tmp_path / "killed"))
    assert killed >= 2, f"seed {seed}: the children were never killed mid-conversation"
    kinds = Counter((kind, context) for kind, _, _, context in expected)
    assert kinds[(FactKind.MESSAGE.value, True)] >= 15, "the conversation makes context records"
    assert kinds[(FactKind.FACT.value, False)] >= 4, "the conversation makes facts"
    missing = Counter(expected) - Counter(got)
    extra = Counter(got) - Counter(expected)
    assert not missing, f"seed {seed}, {killed} kills: records missing: {missing}"
    assert not extra, f"seed {seed}, {killed} kills: records stored twice or wrong: {extra}"


if __name__ == "__main__":
    asyncio.run(_write(Path(sys.argv[1]), announce=True))
