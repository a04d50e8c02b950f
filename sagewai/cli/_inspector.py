"""``sagewai facts | search | history | revert | forget``: look at what memory holds, and why.

Why commands: an operator debugging an agent asks what it remembers about a user, where a fact
came from, what changed it, and wants to undo a change or erase a subject, from a shell, without
writing Python. Each command prints a table for people and, with ``--json``, JSON for scripts
(one record per line for ``facts``, ``search`` and ``history``; one report for ``revert`` and
``forget``). The store is resolved as ``sagewai consolidate`` resolves it. Exit codes:

* 0: done (also when nothing matched);
* 1: the command failed while working (a store error, an unknown fact id);
* 2: the command line or the configuration is wrong (bad time, bad scope, bad store).

Example:
    sagewai facts --project demo --user-id alice --status all
    sagewai search "where does alice live" --project demo --user-id alice --json
    sagewai history 3f2c... --project demo
    sagewai forget --project demo --subject Tom --dry-run
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sagewai.cli._empty import allow_empty_option, require_records
from sagewai.cli._stores import DEFAULT_STORE, open_engine, store_arguments
from sagewai.core._records import FactChange, FactStatus, FactType
from sagewai.core._scope import ContextScope
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.core._records import Fact

__all__ = ["format_table", "parse_time", "register"]

EXIT_OK = 0
_PAGE = 500
_STATUSES = ("all", *(status.value for status in FactStatus))
_SCOPES = tuple(scope.value for scope in ContextScope if scope is not ContextScope.ORG)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``facts``, ``search``, ``history``, ``revert`` and ``forget``."""
    exits = "Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error."

    facts = subparsers.add_parser(
        "facts",
        help="list a project's facts, filtered by scope, user, session, type, status, subject",
        description=f"List the facts of a project, oldest first. {exits}",
    )
    _store_options(facts)
    facts.add_argument(
        "--scope", choices=_SCOPES, default=None, help="only facts stored at this scope"
    )
    _who_options(facts)
    facts.add_argument(
        "--type",
        dest="types",
        action="append",
        choices=[t.value for t in FactType],
        default=None,
        help="only facts of this type (repeatable)",
    )
    facts.add_argument(
        "--status",
        choices=_STATUSES,
        default=None,
        help="only facts of this status, or 'all' (default: active and flagged)",
    )
    facts.add_argument("--subject", default=None, help="only facts about this subject (exact)")
    facts.add_argument(
        "--as-of", default=None, metavar="TIME", help="ISO 8601 time: facts that held then"
    )
    facts.add_argument("--limit", type=int, default=100, help="most facts printed (default 100)")
    facts.add_argument("--json", action="store_true", help="one JSON object per fact and line")
    allow_empty_option(facts)
    facts.set_defaults(handler=lambda args: _run(_facts, args))

    search = subparsers.add_parser(
        "search",
        help="hybrid search, as an agent's recall sees it",
        description=f"Search a project's memory the way recall does. {exits}",
    )
    search.add_argument("query", help="what to look for, in words")
    _store_options(search)
    search.add_argument(
        "--scope", choices=_SCOPES, default=None, help="read this scope and those above it"
    )
    _who_options(search)
    search.add_argument("--top-k", type=int, default=5, help="how many results (default 5)")
    search.add_argument(
        "--as-of", default=None, metavar="TIME", help="ISO 8601 time: what was believed then"
    )
    search.add_argument("--json", action="store_true", help="one JSON object per result and line")
    allow_empty_option(search)
    search.set_defaults(handler=lambda args: _run(_search, args))

    history = subparsers.add_parser(
        "history",
        help="every recorded change of a fact: what, when, why, by which rule",
        description=f"Print the audit log of one fact, oldest first. {exits}",
    )
    history.add_argument("fact_id", metavar="FACT_ID", help="the fact's id")
    _store_options(history)
    history.add_argument("--json", action="store_true", help="one JSON object per change and line")
    history.set_defaults(handler=lambda args: _run(_history, args))

    revert = subparsers.add_parser(
        "revert",
        help="undo one recorded change (the fields it changed get their old values back)",
        description=f"Undo one change listed by 'sagewai history'. {exits}",
    )
    revert.add_argument("change_id", metavar="CHANGE_ID", help="the change's id")
    _store_options(revert)
    revert.add_argument("--json", action="store_true", help="print the restored fact as JSON")
    revert.set_defaults(handler=lambda args: _run(_revert, args))

    forget = subparsers.add_parser(
        "forget",
        help="erase a subject, a session, a user or one fact from every store",
        description=(
            "Forget completely: every record naming the subject as a word (facts, messages, "
            "documents; every status), its vectors, graph entities and relations, episode "
            "turns, journal entries and its text in the audit log (which keeps content-free "
            f"tombstones), with a receipt per store. --dry-run prints the same receipt and "
            f"changes nothing. {exits}"
        ),
    )
    _store_options(forget)
    forget.add_argument(
        "--subject", default=None, help="every record naming this subject as a word"
    )
    forget.add_argument("--session-id", default=None, help="facts of this session")
    forget.add_argument("--user-id", default=None, help="facts of this user")
    forget.add_argument("--fact-id", default=None, help="one fact")
    forget.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing; list what would be forgotten and the receipt a real run returns",
    )
    forget.add_argument("--json", action="store_true", help="print the report as JSON")
    forget.set_defaults(handler=lambda args: _run(_forget, args))


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", required=True, help="project id")
    store_arguments(parser)


def _who_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user-id", default=None, help="only this user's facts")
    parser.add_argument("--session-id", default=None, help="only this session's facts")


def _run(command: Callable[[ContextEngine, argparse.Namespace], Awaitable[int]], args: Any) -> int:
    store = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    engine = open_engine(store, args.project, vectors=args.vectors)

    async def run() -> int:
        async with engine:
            return await command(engine, args)

    try:
        return asyncio.run(run())
    except BrokenPipeError:  # the reader stopped early (``| head``): not a failure
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


# ---------------------------------------------------------------------- rendering


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time from the command line; a time without a zone is read as UTC.

    Raises:
        InvalidInputError: not an ISO 8601 time (exit code 2).

    Example:
        >>> parse_time("2024-03-01").isoformat()
        '2024-03-01T00:00:00+00:00'
    """
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInputError(f"--as-of wants an ISO 8601 time, got {value!r}") from exc
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # naive: UTC


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, width: int) -> str:
    """Rows in aligned columns; the last column is cut to fit ``width`` (keeping 10 characters).

    Example:
        >>> print(format_table(["ID", "TEXT"], [["a", "hello wide world"]], width=14))
        ID  TEXT
        a   hello wid…
    """
    columns = list(zip(*([list(headers)] + [list(r) for r in rows]), strict=True))
    sizes = [max(len(cell) for cell in column) for column in columns[:-1]]
    room = max(width - sum(sizes) - 2 * len(sizes), 10)
    lines = []
    for row in [headers, *rows]:
        cells = [cell.ljust(size) for cell, size in zip(row, sizes, strict=False)]
        last = row[-1].replace("\n", " ")
        cells.append(last if len(last) <= room else last[: room - 1] + "…")
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


_UNCUT = 1_000_000
"""The width of a table read by a program (piped or redirected): no column is cut."""


def _width() -> int:
    if not sys.stdout.isatty():
        return _UNCUT
    return shutil.get_terminal_size((120, 24)).columns


def _owner(fact: Fact) -> str:
    if fact.scope is ContextScope.USER:
        return f"user:{fact.user_id}"
    if fact.scope is ContextScope.SESSION:
        return f"session:{fact.session_id}"
    return fact.scope.value


def _fact_rows(facts: Sequence[Fact]) -> list[list[str]]:
    return [
        [f.id, f.status.value, f.fact_type.value, _owner(f), f.subject or "-", f.content]
        for f in facts
    ]


_FACT_HEADERS = ["ID", "STATUS", "TYPE", "SCOPE", "SUBJECT", "CONTENT"]


def _json_line(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False))


# ---------------------------------------------------------------------- commands


async def _facts(engine: ContextEngine, args: argparse.Namespace) -> int:
    from sagewai.core._queries import FactQuery

    if args.limit < 1:
        raise InvalidInputError("--limit must be at least 1")
    as_of = parse_time(args.as_of)
    await require_records(engine, args)
    statuses: tuple[FactStatus, ...] | None
    if args.status == "all":
        statuses = None
    elif args.status is not None:
        statuses = (FactStatus(args.status),)
    elif as_of is not None:
        statuses = (FactStatus.ACTIVE, FactStatus.FLAGGED, FactStatus.SUPERSEDED)
    else:
        statuses = (FactStatus.ACTIVE, FactStatus.FLAGGED)
    query = FactQuery(
        project_id=engine.project_id,
        subject=args.subject,
        user_id=args.user_id,
        session_id=args.session_id,
        statuses=statuses,
        fact_types=None if args.types is None else tuple(FactType(t) for t in args.types),
        valid_at=as_of,
        limit=_PAGE,
    )
    scope = None if args.scope is None else ContextScope(args.scope)
    found: list[Fact] = []
    cursor: tuple[datetime, str] | None = None
    while len(found) <= args.limit:  # one more than shown: whether more match
        page = await engine.port.find(dataclasses.replace(query, after=cursor))
        if not page:
            break
        cursor = (page[-1].created_at, page[-1].id)
        found.extend(f for f in page if scope is None or f.scope is scope)
    more = len(found) > args.limit
    found = found[: args.limit]
    if args.json:
        for fact in found:
            _json_line(fact.model_dump(mode="json"))
    elif found:
        print(format_table(_FACT_HEADERS, _fact_rows(found), width=_width()))
    else:
        print(f"no facts in project {engine.project_id!r} match")
    if more:  # on standard error: a script reading the rows is not disturbed
        print(
            f"sagewai: the first {args.limit} matching facts are shown; more match "
            "(raise --limit, or narrow the filters)",
            file=sys.stderr,
        )
    return EXIT_OK


async def _search(engine: ContextEngine, args: argparse.Namespace) -> int:
    await require_records(engine, args)
    results = await engine.search(
        args.query,
        args.top_k,
        scope=args.scope,
        user_id=args.user_id,
        session_id=args.session_id,
        as_of=parse_time(args.as_of),
        # An operator's look is not a use: it must not keep a fact from decaying.
        search_config=engine.search_config.model_copy(update={"track_access": False}),
    )
    if args.json:
        for result in results:
            _json_line(
                {
                    "score": result.score,
                    "standing": result.standing.value,
                    "fact": result.fact.model_dump(mode="json"),
                    "changes": [
                        {
                            "was": change.old.content,
                            "now": None if change.new is None else change.new.content,
                            "since": None if change.at is None else change.at.isoformat(),
                        }
                        for change in result.changes
                    ],
                }
            )
    elif results:
        rows = []
        for r in results:
            row = [f"{r.score:.3f}", *_fact_rows([r.fact])[0]]
            for change in r.changes:  # an old value is never shown unmarked
                now = "gone" if change.new is None else change.new.content
                row[-1] += f' [changed: "{change.old.content}" -> "{now}"]'
            rows.append(row)
        print(format_table(["SCORE", *_FACT_HEADERS], rows, width=_width()))
    else:
        print("nothing found")
    return EXIT_OK


def _change_rows(changes: Sequence[FactChange]) -> list[list[str]]:
    return [
        [
            c.at.isoformat(timespec="seconds"),
            c.action.value,
            c.id,
            f"{c.actor}/{c.rule}",
            c.reason or "-",
        ]
        for c in changes
    ]


async def _history(engine: ContextEngine, args: argparse.Namespace) -> int:
    from sagewai.errors import FactNotFoundError

    changes = await engine.history(args.fact_id)
    if not changes:
        raise FactNotFoundError(args.fact_id)
    if args.json:
        for change in changes:
            _json_line(change.model_dump(mode="json"))
        return EXIT_OK
    try:
        fact = await engine.get(args.fact_id)
        print(f"fact {fact.id} ({fact.status.value}): {fact.content}")
    except FactNotFoundError:
        print(f"fact {args.fact_id} was deleted; its history:")
    headers = ["AT", "ACTION", "CHANGE_ID", "BY", "REASON"]
    print(format_table(headers, _change_rows(changes), width=_width()))
    return EXIT_OK


async def _revert(engine: ContextEngine, args: argparse.Namespace) -> int:
    from sagewai.errors import FactNotFoundError

    change = next((c for c in await engine.changes() if c.id == args.change_id), None)
    recorded = len(await engine.history(change.fact_id)) if change is not None else 0
    fact = await engine.revert(args.change_id, reason="reverted with sagewai revert")
    if args.json:
        _json_line(fact.model_dump(mode="json"))
    elif len(await engine.history(fact.id)) == recorded:
        print(f"change {args.change_id} is undone already; fact {fact.id} is {fact.status.value}")
        print("nothing was changed or recorded")
    else:
        print(f"reverted change {args.change_id}; fact {fact.id} is {fact.status.value}:")
        print(f"  {fact.content}")
    successor = (change.after or {}).get("superseded_by") if change is not None else None
    if isinstance(successor, str) and fact.status is FactStatus.ACTIVE:
        # Undoing a supersession brings the old value back beside the new one: say so.
        try:
            newer = await engine.get(successor)
        except FactNotFoundError:
            return EXIT_OK
        if newer.status in (FactStatus.ACTIVE, FactStatus.FLAGGED):
            print(
                f"its successor {newer.id} is still {newer.status.value}: {newer.content!r}; "
                "both values now hold. To keep only the old one: "
                f"sagewai forget --project {engine.project_id} --fact-id {newer.id}",
                file=sys.stderr if args.json else sys.stdout,
            )
    return EXIT_OK


async def _forget(engine: ContextEngine, args: argparse.Namespace) -> int:
    from sagewai.context._forgetting import matching_facts

    criteria = (args.subject, args.session_id, args.user_id)
    if args.fact_id is not None:
        if any(value is not None for value in criteria):
            raise InvalidInputError("give --fact-id alone, or --subject/--session-id/--user-id")
        doomed = [await engine.get(args.fact_id)]
    elif all(value is None for value in criteria):
        raise InvalidInputError("forget needs --subject, --session-id, --user-id or --fact-id")
    else:
        doomed = await matching_facts(
            engine.port, subject=args.subject, session_id=args.session_id, user_id=args.user_id
        )
    report: dict[str, Any] = {"dry_run": args.dry_run, "fact_ids": [f.id for f in doomed]}
    if args.fact_id is not None:
        if not args.dry_run:
            await engine.delete(args.fact_id, reason="forgotten with sagewai forget")
        report.update(facts_deleted=1, graph_items_deleted=0, episodes_deleted=0)
    else:
        # The dry run is the engine's own: the same receipt, nothing changed.
        receipt = await engine.forget(
            subject=args.subject,
            session_id=args.session_id,
            user_id=args.user_id,
            reason="forgotten with sagewai forget",
            dry_run=args.dry_run,
        )
        report.update(receipt.as_dict())
    if args.json:
        _json_line(report)
        return EXIT_OK
    verb = "would forget" if args.dry_run else "forgot"
    print(f"{verb} {len(doomed)} facts of project {engine.project_id!r}")
    if doomed:
        print(format_table(_FACT_HEADERS, _fact_rows(doomed), width=_width()))
    if args.fact_id is None:
        print(
            ("receipt (dry run, nothing changed): " if args.dry_run else "receipt: ")
            + _receipt(report)
        )
    return EXIT_OK


_RECEIPT = (
    ("facts", "facts"),
    ("messages", "messages"),
    ("context_records", "context records"),
    ("documents", "document chunks"),
    ("vectors", "vectors"),
    ("graph_entities", "graph entities"),
    ("graph_relations", "graph relations"),
    ("episodes_redacted", "episodes redacted"),
    ("episodes_removed", "episodes deleted"),
    ("episode_messages", "episode turns"),
    ("journal_entries", "journal entries"),
    ("audit_rows_removed", "audit rows replaced by tombstones"),
    ("audit_rows_redacted", "audit rows redacted"),
    ("journals_locked", "journals locked by another process (not rewritten)"),
)


def _receipt(report: dict[str, Any]) -> str:
    """The receipt's counts, store by store, in one line."""
    return ", ".join(f"{label} {report[key]}" for key, label in _RECEIPT if key in report)
