"""``sagewai consolidate`` end to end on an embedded store folder: output and exit codes."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagewai.cli._consolidate import EXIT_LOCKED, ProgressBar, run_consolidate
from sagewai.cli._main import build_parser, main
from sagewai.context._engine import ContextEngine
from sagewai.core._records import FactStatus
from sagewai.intelligence import ConsolidationProgress
from sagewai.stores import SqliteMetadataStore


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embedded folder written by an engine with the default embedder (MiniLM)."""
    folder = tmp_path_factory.mktemp("cli") / "data"

    async def seed() -> None:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await ctx.add("The staging database runs PostgreSQL 15", fact_id="a")
            await ctx.add("The staging database runs PostgreSQL 15.", fact_id="b")
            await ctx.add("Deploy the billing API to 10.0.0.1", fact_id="c")
            await ctx.add("Deploy the billing API to 10.0.0.2", fact_id="d")

    asyncio.run(seed())
    return folder


def run_cli(*args: str) -> int:
    return main(["consolidate", *args])


def statuses(folder: Path) -> dict[str, FactStatus]:
    async def read() -> dict[str, FactStatus]:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            facts = await ctx.list(statuses=None, limit=100)
            return {f.id: f.status for f in facts}

    return asyncio.run(read())


def test_dry_run_prints_the_plan_as_json_and_changes_nothing(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli("--project", "demo", "--store", str(store), "--dry-run", "--json")
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True
    assert report["duplicates_removed"] == 1
    assert [a["kind"] for a in report["actions"]] == ["merge"]
    assert set(statuses(store).values()) == {FactStatus.ACTIVE}


def test_real_run_merges_and_prints_a_summary(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--project", "demo", "--store", str(store)) == 0
    out = capsys.readouterr().out
    assert "1 duplicates merged" in out
    assert statuses(store) == {
        "a": FactStatus.ACTIVE,
        "b": FactStatus.MERGED,
        "c": FactStatus.ACTIVE,
        "d": FactStatus.ACTIVE,
    }


def test_incremental_run_in_a_new_process_examines_nothing_new(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--project", "demo", "--store", str(store), "--json") == 0
    capsys.readouterr()
    assert run_cli("--project", "demo", "--store", str(store), "--incremental", "--json") == 0
    assert json.loads(capsys.readouterr().out)["total_processed"] == 0


def test_another_run_holding_the_lock_exits_3(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def hold_and_run() -> int:
        other = SqliteMetadataStore(store / "metadata.sqlite3")
        async with other, other.lock("demo", "consolidation"):
            return await asyncio.to_thread(run_cli, "--project", "demo", "--store", str(store))

    assert asyncio.run(hold_and_run()) == EXIT_LOCKED
    assert "already running" in capsys.readouterr().err


def test_usage_and_configuration_errors_exit_2(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--project", "demo", "--store", str(tmp_path / "missing")) == 2
    assert "no embedded store" in capsys.readouterr().err
    assert run_cli("--project", "demo", "--store", str(store), "--threshold", "1.5") == 2
    assert run_cli("--project", "demo", "--store", "mysql://db/x") == 2
    assert run_cli("--project", "demo", "--store", str(store), "--user-id", "u") == 2
    with pytest.raises(SystemExit) as exited:
        run_cli("--project", "demo", "--scope", "galaxy")
    assert exited.value.code == 2


def test_a_folder_held_by_another_process_exits_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder of the earlier layout keeps its vectors in Qdrant's engine, which one process at
    # a time opens; a new folder's SQLite vectors are shared (tests/test_multiprocess.py).
    folder = tmp_path / "old"
    (folder / "vectors").mkdir(parents=True)

    async def seed() -> None:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await ctx.add("The staging database runs PostgreSQL 15", fact_id="a")

    asyncio.run(seed())
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_VECTORS, str(folder / "vectors")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        assert run_cli("--project", "demo", "--store", str(folder)) == 1
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "consolidation failed" in err
    assert f"in use by process {holder.pid}" in err  # what holds it
    assert "Stop that process" in err  # and what to do
    assert "Traceback" not in err


_HOLD_VECTORS = """
import asyncio, sys, time
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
async def hold():
    async with QdrantEdgeVectorStore(sys.argv[1], dimension=384):
        print("holding", flush=True)
        time.sleep(120)
asyncio.run(hold())
"""


def test_progress_bar_only_on_a_terminal(store: Path) -> None:
    args = build_parser().parse_args(
        ["consolidate", "--project", "demo", "--store", str(store), "--dry-run"]
    )
    piped = io.StringIO()
    assert asyncio.run(run_consolidate(args, stderr=piped)) == 0
    assert piped.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    assert asyncio.run(run_consolidate(args, stderr=terminal)) == 0
    assert "facts" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")


def test_progress_bar_rendering() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, enabled=True, width=10)
    bar(ConsolidationProgress(processed=3, total=4, batches=1, changed=2))
    bar.close()
    assert out.getvalue() == "\r[#######---]  75% 3/4 facts, 2 changed\n"
    silent = io.StringIO()
    ProgressBar(silent, enabled=False)(ConsolidationProgress(1, 1, 1, 0))
    assert silent.getvalue() == ""


def test_the_command_is_registered() -> None:
    args = build_parser().parse_args(["consolidate", "--project", "p"])
    assert isinstance(args, argparse.Namespace)
    assert args.scope == "project"
    assert callable(args.handler)
