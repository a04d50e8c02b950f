"""Shared fixtures. PostgreSQL tests skip on a laptop without a server, and fail under CI=true."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator

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
