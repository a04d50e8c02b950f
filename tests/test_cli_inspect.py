"""``sagewai facts | search | history | revert | forget`` on an embedded store folder."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from sagewai.cli._main import main
from sagewai.context._engine import ContextEngine
from sagewai.core._records import FactStatus

ROOT = Path(__file__).resolve().parents[1]


def seed(folder: Path) -> datetime:
    """Four facts of two users and the project; Alice moved (one supersession). Returns a
    time between the first writes and the move."""

    async def write() -> datetime:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await ctx.add("Alice lives in Oslo", user_id="alice", subject="Alice", fact_id="a1")
            await ctx.add(
                "Alice prefers green tea",
                user_id="alice",
                subject="Alice",
                fact_type="preference",
                fact_id="a2",
            )
            await ctx.add("Bob lives in Rome", user_id="bob", subject="Bob", fact_id="b1")
            await ctx.add("Deploys run at 10:00 UTC", fact_id="p1")
            between = datetime.now().astimezone()
            await asyncio.sleep(0.01)
            await ctx.supersede("a1", "Alice lives in Bergen", reason="moved", fact_id="a3")
            return between

    return asyncio.run(write())


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, datetime]:
    """A store the read-only tests share."""
    folder = tmp_path_factory.mktemp("inspect") / "data"
    return folder, seed(folder)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A fresh store for a test that changes it."""
    folder = tmp_path / "data"
    seed(folder)
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def status_of(folder: Path, fact_id: str) -> FactStatus | None:
    async def read() -> FactStatus | None:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            found = await ctx.list(statuses=None, limit=100, scope="user", user_id="alice")
            return next((f.status for f in found if f.id == fact_id), None)

    return asyncio.run(read())


def test_facts_lists_every_scope_as_a_table(
    shared: tuple[Path, datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "facts", "--project", "demo", "--store", str(shared[0]))
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["ID", "STATUS", "TYPE", "SCOPE", "SUBJECT", "CONTENT"]
    assert [row.split()[0] for row in rows] == ["a2", "b1", "p1", "a3"]
    assert "user:bob" in out
    assert "Alice lives in Oslo" not in out  # superseded: not listed by default


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (["--user-id", "alice"], ["a2", "a3"]),
        (["--user-id", "alice", "--status", "all"], ["a1", "a2", "a3"]),
        (["--status", "superseded"], ["a1"]),
        (["--scope", "project"], ["p1"]),
        (["--scope", "user"], ["a2", "b1", "a3"]),
        (["--type", "preference"], ["a2"]),
        (["--subject", "Bob"], ["b1"]),
        (["--limit", "2"], ["a2", "b1"]),
    ],
)
def test_facts_filters_as_json_lines(
    shared: tuple[Path, datetime],
    capsys: pytest.CaptureFixture[str],
    filters: list[str],
    expected: list[str],
) -> None:
    argv = ["facts", "--project", "demo", "--store", str(shared[0]), "--json", *filters]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    records = lines(out)
    assert [r["id"] for r in records] == expected
    assert all(r["project_id"] == "demo" for r in records)


def test_facts_as_of_shows_what_held_then(
    shared: tuple[Path, datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, between = shared
    argv = ["facts", "--project", "demo", "--store", str(folder), "--json", "--user-id", "alice"]
    _, out, _ = run(capsys, *argv, "--as-of", between.isoformat())
    assert [r["content"] for r in lines(out)] == ["Alice lives in Oslo", "Alice prefers green tea"]


def test_search_prints_scores_and_stays_in_the_users_scope(
    shared: tuple[Path, datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(shared[0])
    code, out, _ = run(
        capsys, "search", "where does she live", "--project", "demo", "--store", folder,
        "--user-id", "alice", "--json",
    )  # fmt: skip
    assert code == 0
    results = lines(out)
    facts = [r["fact"] for r in results]  # type: ignore[index]
    assert facts[0]["content"] == "Alice lives in Bergen"  # type: ignore[index]
    assert all(f["user_id"] in ("alice", None) for f in facts)  # type: ignore[index]
    assert all(0.0 <= float(r["score"]) <= 1.0 for r in results)  # type: ignore[arg-type]
    code, out, _ = run(capsys, "search", "Rome", "--project", "demo", "--store", folder)
    assert code == 0
    assert out.splitlines()[0].split()[:2] == ["SCORE", "ID"]


def test_history_shows_the_changes_of_a_fact(
    shared: tuple[Path, datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(shared[0])
    code, out, _ = run(capsys, "history", "a1", "--project", "demo", "--store", folder)
    assert code == 0
    assert "fact a1 (superseded): Alice lives in Oslo" in out
    assert "created" in out
    assert "moved" in out
    code, out, _ = run(capsys, "history", "a1", "--project", "demo", "--store", folder, "--json")
    assert [c["action"] for c in lines(out)] == ["created", "superseded"]
    code, _, err = run(capsys, "history", "nope", "--project", "demo", "--store", folder)
    assert code == 1
    assert "no fact with id 'nope'" in err


def test_revert_undoes_a_supersession(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "history", "a1", "--project", "demo", "--store", str(store), "--json")
    superseded = lines(out)[-1]["id"]
    code, out, _ = run(
        capsys, "revert", str(superseded), "--project", "demo", "--store", str(store)
    )
    assert code == 0
    assert "fact a1 is active" in out
    assert status_of(store, "a1") is FactStatus.ACTIVE
    code, _, err = run(capsys, "revert", "nope", "--project", "demo", "--store", str(store))
    assert code == 2
    assert "no change with id 'nope'" in err


def test_forget_dry_run_changes_nothing_and_lists_what_the_real_run_deletes(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["forget", "--project", "demo", "--store", str(store), "--subject", "alice", "--json"]
    code, out, _ = run(capsys, *base, "--dry-run")
    assert code == 0
    (plan,) = lines(out)
    assert plan["dry_run"] is True
    assert sorted(plan["fact_ids"]) == ["a1", "a2", "a3"]  # type: ignore[arg-type]
    assert plan["facts_deleted"] == 3  # the receipt a real run returns
    assert status_of(store, "a2") is FactStatus.ACTIVE
    code, out, _ = run(capsys, *base)
    (done,) = lines(out)
    assert done["fact_ids"] == plan["fact_ids"]
    assert done["facts_deleted"] == 3
    assert {**plan, "dry_run": False} == done  # the dry run's receipt is the run's
    assert status_of(store, "a2") is None
    _, out, _ = run(capsys, "facts", "--project", "demo", "--store", str(store), "--json")
    assert [r["id"] for r in lines(out)] == ["b1", "p1"]


def test_forget_one_fact_as_a_table(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["forget", "--project", "demo", "--store", str(store), "--fact-id", "b1"]
    code, out, _ = run(capsys, *argv, "--dry-run")
    assert code == 0
    assert "would forget 1 facts" in out
    assert "Bob lives in Rome" in out
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert "forgot 1 facts" in out
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert "no fact with id 'b1'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["forget", "--project", "demo"],
        ["forget", "--project", "demo", "--fact-id", "a2", "--subject", "x"],
        ["facts", "--project", "demo", "--as-of", "yesterday-ish"],
        ["facts", "--project", "demo", "--limit", "0"],
        ["search", "   ", "--project", "demo"],
        ["search", "x", "--project", "demo", "--scope", "session"],
    ],
)
def test_usage_errors_exit_2(
    shared: tuple[Path, datetime], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, _, err = run(capsys, *argv, "--store", str(shared[0]))
    assert code == 2
    assert err.startswith("sagewai: ")


def test_a_missing_store_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "facts", "--project", "demo", "--store", str(tmp_path / "none"))
    assert code == 2
    assert "no embedded store" in err


@pytest.mark.parametrize("command", ["facts", "search", "history", "revert", "forget", "mcp"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "--project" in out
    assert "Exit codes" in out


def test_facts_in_a_subprocess_pipes_json_lines(shared: tuple[Path, datetime]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("SAGEWAI_STORE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sagewai",
            "facts",
            "--project",
            "demo",
            "--json",
            "--status",
            "all",
        ],
        cwd=shared[0],
        env={**env, "SAGEWAI_STORE": "."},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert len(lines(done.stdout)) == 5
