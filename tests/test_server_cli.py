"""``sagewai keys``, ``sagewai projects``, ``sagewai serve``'s refusal to expose a store with no
key, and ``sagewai mcp``'s warning on a non-loopback address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagewai.cli._main import main
from sagewai.cli._mcp import exposure_warning
from sagewai.cli._serve import is_loopback
from tests.server_support import run_async


def test_serve_refuses_a_non_loopback_address_while_no_key_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    assert main(["serve", "--store", store, "--host", "0.0.0.0", "--port", "8799"]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error
    assert error.startswith("sagewai: refusing to serve on 0.0.0.0 with no API key")
    assert "sagewai keys create" in error
    assert main(["serve", "--store", store, "--port", "0"]) == 2
    assert "--port" in capsys.readouterr().err


def test_loopback_is_told_from_other_addresses() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.com", ""))
    assert exposure_warning("localhost") is None
    warning = exposure_warning("0.0.0.0")
    assert warning is not None
    assert "NO authentication" in warning


def test_keys_are_created_once_listed_without_secrets_and_revoked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    assert main(["keys", "create", "--store", store, "--project", "demo", "--role", "read"]) == 0
    shown = capsys.readouterr().out
    token = next(line.strip() for line in shown.splitlines() if line.strip().startswith("sgw_"))
    assert "cannot be shown again" in shown
    argv = ["keys", "create", "--store", store, "--project", "demo", "--role", "write"]
    assert main([*argv, "--user", "alice", "--name", "alice's app", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["key"].startswith("sgw_")
    assert made["user_id"] == "alice"
    assert made["role"] == "write"

    assert main(["keys", "list", "--store", store]) == 0
    listing = capsys.readouterr().out
    assert token not in listing
    assert made["key"] not in listing
    assert made["id"] in listing
    assert main(["keys", "revoke", made["id"], "--store", store]) == 0
    capsys.readouterr()
    assert main(["keys", "list", "--store", store, "--json"]) == 0
    active = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [k["id"] for k in active] == [token.split("_")[1]]
    assert main(["keys", "list", "--store", store, "--json", "--all"]) == 0
    every = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {k["id"]: k["revoked_at"] is not None for k in every}[made["id"]]
    assert all("hash" not in json.dumps(k) for k in every)
    stored = (tmp_path / "store" / "server.sqlite3").read_bytes()
    assert token.split("_", 2)[2].encode() not in stored

    assert main(["keys", "revoke", "000000000000", "--store", store]) == 1
    assert main(["keys", "create", "--store", store, "--project", "", "--role", "read"]) == 2
    org = ["--org", "other-org"]
    assert (
        main(["keys", "create", "--store", store, "--project", "demo", "--role", "read", *org]) == 2
    )
    assert "belongs to org" in capsys.readouterr().err


def test_projects_lists_every_project_of_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagewai import ContextEngine
    from sagewai.testing import FakeEmbedder

    folder = tmp_path / "store"

    async def fill() -> None:
        for project, count in (("beta", 2), ("alpha", 1)):
            async with ContextEngine.local(
                folder, project_id=project, embedder=FakeEmbedder()
            ) as ctx:
                for i in range(count):
                    await ctx.add(f"note {i} of {project}")

    run_async(fill())
    assert main(["projects", "--store", str(folder), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"project_id": "alpha", "records": 1}, {"project_id": "beta", "records": 2}]
    assert main(["projects", "--store", str(tmp_path / "missing")]) == 2
