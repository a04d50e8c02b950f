"""The server's key cache: a looked-up key is trusted for ``key_cache_seconds``, no longer.

A revoked key (``sagewai keys revoke`` in another process) is refused once the cached entry is
older than the setting; a wrong secret is refused even while its key id is cached; 0 reads the
key on every request. The clock is the test's, so no test sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from sagewai.errors import AuthenticationError
from sagewai.server import NewKey, SqliteServerState, new_key
from sagewai.server._auth import Authenticator
from sagewai.server._ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: float
) -> tuple[SqliteServerState, Authenticator, Clock]:
    clock = Clock()
    monkeypatch.setattr("sagewai.server._auth.time.monotonic", clock)
    state = SqliteServerState(str(tmp_path / "server.sqlite3"))
    auth = Authenticator(state, RateLimiter(rate=0, burst=1), cache_seconds=seconds)
    return state, auth, clock


@asynccontextmanager
async def _a_key(state: SqliteServerState) -> AsyncIterator[NewKey]:
    """The state open with one read key in it (its token and record), closed after."""
    await state.open()
    made = new_key(project_id="p", role="read")
    await state.add_key(made.key)
    try:
        yield made
    finally:
        await state.close()


def test_a_revoked_key_is_refused_once_its_cache_entry_is_older_than_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, auth, clock = _setup(tmp_path, monkeypatch, seconds=2.0)

    async def run() -> None:
        async with _a_key(state) as made:
            assert (await auth.caller(f"Bearer {made.token}", None)).key.id == made.key.id
            await state.revoke(made.key.id)
            clock.now += 1.9  # within the cache time: still the cached (active) key
            assert (await auth.caller(None, made.token)).key.id == made.key.id
            clock.now += 0.2  # 2.1 s after the lookup: read again, refused
            with pytest.raises(AuthenticationError, match="revoked"):
                await auth.caller(f"Bearer {made.token}", None)
            clock.now += 10.0  # and stays refused
            with pytest.raises(AuthenticationError, match="revoked"):
                await auth.caller(f"Bearer {made.token}", None)

    asyncio.run(run())


def test_a_wrong_secret_is_refused_while_the_key_id_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, auth, _ = _setup(tmp_path, monkeypatch, seconds=60.0)

    async def run() -> None:
        async with _a_key(state) as made:
            await auth.caller(None, made.token)
            forged = made.token[:-4] + ("aaaa" if not made.token.endswith("aaaa") else "bbbb")
            with pytest.raises(AuthenticationError, match="not valid"):
                await auth.caller(None, forged)

    asyncio.run(run())


def test_no_cache_reads_the_key_on_every_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, auth, _ = _setup(tmp_path, monkeypatch, seconds=0.0)

    async def run() -> None:
        async with _a_key(state) as made:
            await auth.caller(None, made.token)
            await state.revoke(made.key.id)  # the clock does not move at all
            with pytest.raises(AuthenticationError, match="revoked"):
                await auth.caller(None, made.token)

    asyncio.run(run())
