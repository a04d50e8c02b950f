"""A real ``sagewai serve`` process on 127.0.0.1 for the server tests, and the keys it knows.

The server runs as users run it: ``python -m sagewai serve --store ... --port N`` in a child
process, on the embedded default (a temporary folder) or on PostgreSQL (a fresh schema, vectors
in a Qdrant edge folder). Keys are made before it starts, with the library's own calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from sagewai.server import new_key, open_state

_T = TypeVar("_T")


def run_async(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to its end from sync code, even where a loop runs (Playwright's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Store:
    """Where a served store lives: ``location`` and the ``serve`` options that go with it."""

    location: str
    options: list[str] = field(default_factory=list)
    schema: str = "sagewai"

    @classmethod
    def embedded(cls, folder: Path) -> Store:
        return cls(str(folder / "store"))

    @classmethod
    def postgres(cls, dsn: str, folder: Path) -> Store:
        schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
        vectors = str(folder / "vectors")
        return cls(dsn, ["--schema", schema, "--vectors", vectors], schema)

    def make_keys(self, specs: dict[str, dict[str, Any]]) -> dict[str, str]:
        """Make one key per spec (``new_key`` arguments); their tokens by name."""

        async def make() -> dict[str, str]:
            state = open_state(self.location, schema=self.schema, create=True)
            await state.open()
            try:
                tokens = {}
                for name, spec in specs.items():
                    made = new_key(**spec)
                    await state.add_key(made.key)
                    tokens[name] = made.token
                return tokens
            finally:
                await state.close()

        return run_async(make())

    def drop(self) -> None:
        """Drop a PostgreSQL test schema (a folder goes with its temporary directory)."""
        if not self.location.startswith("postgresql://"):
            return
        import asyncpg

        async def drop() -> None:
            connection = await asyncpg.connect(self.location)
            try:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
            finally:
                await connection.close()

        run_async(drop())


class ServerProcess:
    """``sagewai serve`` in a child process; ``url`` once it answers ``/v1/health``."""

    def __init__(self, store: Store, *args: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [
            sys.executable,
            "-m",
            "sagewai",
            "serve",
            "--store",
            store.location,
            *store.options,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *args,
        ]
        env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
        self._log = log.open("w")
        self.log_path = log
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        self._wait()

    def _wait(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sagewai serve exited: {self.log_path.read_text()}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"sagewai serve did not start: {self.log_path.read_text()}")

    def client(self, token: str | None = None, **headers: str) -> httpx.Client:
        """An HTTP client of this server, sending ``token`` as a bearer key."""
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)

    def stop(self) -> str:
        """Stop the server (SIGINT, as Ctrl-C) and return its log."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.log_path.read_text()
