"""The command line never fails in silence (issue 39): each test failed before its fix.

An empty project is named as such, vectors never land somewhere unsaid, a malformed archive
leaves nothing behind, a missing database is called missing, a cut listing says so, piped
tables keep whole columns, the inspector's reads leave decay alone, and revert says what it did.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from sagewai.cli._main import main
from sagewai.context._engine import ContextEngine
from sagewai.core._records import FactStatus

ROOT = Path(__file__).resolve().parents[1]
LONG_REASON = "the user said so in the meeting of the platform team " * 3


def _seed(folder: Path) -> None:
    async def write() -> None:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await ctx.add("Alice lives in Oslo", subject="Alice", fact_id="a1")
            await ctx.add("Bob lives in Rome", subject="Bob", fact_id="b1")
            await ctx.add("Deploys run at 10:00 UTC", fact_id="p1")
            await ctx.supersede("a1", "Alice lives in Bergen", reason=LONG_REASON, fact_id="a2")

    asyncio.run(write())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    _seed(folder)
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _fact(folder: Path, fact_id: str) -> object:
    async def read() -> object:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            return await ctx.get(fact_id)

    return asyncio.run(read())


def _history(folder: Path, fact_id: str) -> list[dict[str, object]]:
    async def read() -> list[dict[str, object]]:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            return [c.model_dump(mode="json") for c in await ctx.history(fact_id)]

    return asyncio.run(read())


# ---------------------------------------------------------------- a project that holds nothing


@pytest.mark.parametrize(
    "command",
    [
        ["facts"],
        ["search", "tea"],
        ["consolidate", "--no-progress"],
        ["export", "--out", "{out}", "--no-progress"],
    ],
)
def test_a_project_that_holds_nothing_is_named_and_exits_2(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    out_file = tmp_path / "nope.jsonl"
    argv = [part.replace("{out}", str(out_file)) for part in command]
    code, out, err = run(capsys, *argv, "--project", "nope", "--store", str(store))
    assert code == 2, (out, err)
    assert "project 'nope' holds nothing" in err
    assert "sagewai projects --store" in err  # how to see the projects the store does hold
    assert "--allow-empty" in err
    assert not out_file.exists(), "an empty archive was written"
    code, out, err = run(capsys, *argv, "--project", "nope", "--store", str(store), "--allow-empty")
    assert code == 0, err


def test_a_project_with_records_is_not_refused(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "facts", "--project", "demo", "--store", str(store))
    assert code == 0
    assert "Bob lives in Rome" in out


# ---------------------------------------------------------------- import and export


def _archive(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    archive = tmp_path / "demo.jsonl"
    code, _, err = run(
        capsys,
        "export",
        "--project",
        "demo",
        "--store",
        str(store),
        "--out",
        str(archive),
        "--no-progress",
    )
    assert code == 0, err
    return archive


def test_an_import_into_postgresql_without_vectors_fails_and_says_why(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _archive(store, tmp_path, capsys)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("SAGEWAI_VECTORS", raising=False)
    target = "postgresql://127.0.0.1:5432/test"
    code, _, err = run(capsys, "import", str(archive), "--store", target, "--no-progress")
    assert code == 2
    assert "needs --vectors" in err
    code, _, err = run(capsys, "migrate", "--project", "demo", "--from", str(store), "--to", target)
    assert code == 2
    assert "needs --to-vectors" in err
    assert list(work.iterdir()) == [], "vectors were put in the working folder"


@pytest.mark.parametrize("body", ["not an archive at all\n", "header"])
def test_a_malformed_archive_creates_no_target_folder(
    store: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
) -> None:
    bad = tmp_path / "bad.jsonl"
    if body == "header":  # a good header, then a broken line
        good = _archive(store, tmp_path, capsys).read_text().splitlines()
        bad.write_text(good[0] + "\n" + '{"type": "fact", "data": {"broken\n')
    else:
        bad.write_text(body)
    target = tmp_path / "target"
    for extra in ([], ["--project", "elsewhere"]):
        code, _, err = run(
            capsys, "import", str(bad), "--store", str(target), "--no-progress", *extra
        )
        assert code == 2, err
        assert not target.exists(), "the target folder was made for a malformed archive"


def test_a_database_that_does_not_exist_is_called_missing(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = urlsplit(postgres_dsn)
    missing = urlunsplit(parts._replace(path=f"/sagewai_missing_{uuid.uuid4().hex[:8]}"))
    code, _, err = run(
        capsys, "facts", "--project", "demo", "--store", missing, "--vectors", "pgvector"
    )
    assert code == 2, err
    assert "does not exist" in err
    assert "not reachable" not in err


# ---------------------------------------------------------------- listings


def test_facts_says_when_more_match_than_it_shows(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "facts", "--project", "demo", "--store", str(store), "--limit", "2"
    )
    assert code == 0
    assert len(out.strip().splitlines()) == 3  # the header and two rows
    assert "more match" in err
    code, out, err = run(
        capsys, "facts", "--project", "demo", "--store", str(store), "--limit", "3"
    )
    assert "more match" not in err
    code, out, err = run(capsys, "facts", "--project", "demo", "--store", str(store), "--json")
    assert len(out.strip().splitlines()) == 3
    assert "more match" not in err


def test_piped_tables_keep_whole_columns(store: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "sagewai",
            "history",
            "a1",
            "--project",
            "demo",
            "--store",
            str(store),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert LONG_REASON.strip() in shown.stdout, shown.stdout
    assert "…" not in shown.stdout


def test_the_inspectors_reads_leave_last_accessed_at_alone(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _fact(store, "b1")
    for argv in (["search", "Bob lives in Rome"], ["facts"], ["history", "b1"]):
        code, _, err = run(capsys, *argv, "--project", "demo", "--store", str(store))
        assert code == 0, err
    assert _fact(store, "b1") == before


# ---------------------------------------------------------------- revert


def test_reverting_a_change_twice_records_one_restore(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    superseded = _history(store, "a1")[-1]["id"]
    code, out, _ = run(
        capsys, "revert", str(superseded), "--project", "demo", "--store", str(store)
    )
    assert code == 0
    assert "reverted change" in out
    after_first = _history(store, "a1")
    code, out, _ = run(
        capsys, "revert", str(superseded), "--project", "demo", "--store", str(store)
    )
    assert code == 0
    assert "undone already" in out
    assert _history(store, "a1") == after_first


def test_reverting_a_supersession_says_both_values_now_hold(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    superseded = _history(store, "a1")[-1]["id"]
    code, out, _ = run(
        capsys, "revert", str(superseded), "--project", "demo", "--store", str(store)
    )
    assert code == 0
    assert "successor a2 is still active" in out
    assert "both values now hold" in out
    assert "sagewai forget --project demo --fact-id a2" in out
    code, out, err = run(
        capsys,
        "revert",
        str(superseded),
        "--project",
        "demo",
        "--store",
        str(store),
        "--json",
    )
    assert json.loads(out)["status"] == FactStatus.ACTIVE.value
    assert "successor a2" in err
