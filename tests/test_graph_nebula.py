"""The NebulaGraph store's statements: exact text, escaping of hostile names, retries, errors.

The recording stand-in (:class:`FakeNebulaSession`) keeps every statement; these tests pin the
exact text sent for hostile names and check that each literal reads back, through a decoder that
follows NebulaGraph's lexer, to exactly the original text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagewai.core._records import Provenance
from sagewai.errors import BackendError, BackendUnavailableError, InvalidInputError
from sagewai.graph import Entity, Relation
from sagewai.stores import NebulaGraphStore
from sagewai.stores.nebula import _ngql as ngql
from sagewai.testing._nebula import FakeNebulaSession, _read_string

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
HOSTILE = "Bob\"); DROP SPACE sagewai; --\\\n\tYIELD 1 '北京' 🚀"


def read_back(literal: str) -> str:
    text, end = _read_string(literal.encode("utf-8"), 0)
    assert end == len(literal.encode("utf-8")), "the literal must end where quote() ended it"
    return text


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("two\nlines", '"two\\nlines"'),
        ("tab\there\r", '"tab\\there\\r"'),
        ("it's", '"it\'s"'),
        ("bell\x07 esc\x1b del\x7f", '"bell\\007 esc\\033 del\\177"'),
        ("\\1 not octal", '"\\\\1 not octal"'),
        ("北京 🚀", '"北京 🚀"'),
        ("", '""'),
    ],
)
def test_quote_writes_exact_literals_that_read_back(value: str, literal: str) -> None:
    assert ngql.quote(value) == literal
    assert read_back(literal) == value


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=80))
def test_every_string_round_trips_through_the_lexer(value: str) -> None:
    assert read_back(ngql.quote(value)) == value


def test_an_unescaped_newline_is_refused_like_nebula_does() -> None:
    session = FakeNebulaSession()
    session.execute("CREATE SPACE IF NOT EXISTS `sagewai`(vid_type = FIXED_STRING(32))")
    result = session.execute('FETCH PROP ON `t` "a\nb" YIELD properties(vertex).`x` AS `x`')
    assert not result.is_succeeded()
    assert result.error_code() == -1004


@pytest.mark.parametrize("space", ["bad space", "x`; DROP SPACE y", "1abc", "", "a" * 65, "é"])
def test_space_names_are_checked(space: str) -> None:
    with pytest.raises(InvalidInputError):
        NebulaGraphStore(session=FakeNebulaSession(), space=space)


def test_vertex_ids_are_fixed_length_hex_and_scoped_by_project() -> None:
    a = ngql.vertex_id("p1", "e1")
    assert re.fullmatch(r"[0-9a-f]{32}", a)
    assert a != ngql.vertex_id("p2", "e1")
    assert ngql.vertex_id("p1\x1fe", "1") != ngql.vertex_id("p1", "e\x1f1")
    assert 0 <= ngql.edge_rank("r1") < 2**63


async def _store(**kwargs: Any) -> tuple[NebulaGraphStore, FakeNebulaSession]:
    session = FakeNebulaSession()
    store = NebulaGraphStore(session=session, retry_delay=0.0, **kwargs)
    await store.setup(wait_seconds=0)
    session.statements.clear()
    return store, session


async def test_setup_sends_the_schema_statements() -> None:
    session = FakeNebulaSession(space="mem")
    store = NebulaGraphStore(session=session, space="mem", retry_delay=0.0)
    await store.setup(partition_num=3, wait_seconds=0)
    assert session.statements[:5] == [
        "CREATE SPACE IF NOT EXISTS `mem`(partition_num = 3, replica_factor = 1, "
        "vid_type = FIXED_STRING(32))",
        "CREATE TAG IF NOT EXISTS `sagewai_entity`(`project_key` string, `project_id` string, "
        "`entity_id` string, `name` string, `label` string, `aliases` string, "
        "`session_ids` string, `created_at` string, `metadata` string)",
        "CREATE EDGE IF NOT EXISTS `sagewai_relation`(`project_key` string, `project_id` string, "
        "`relation_id` string, `subject_id` string, `predicate` string, `object_id` string, "
        "`valid_from` string, `valid_to` string, `confidence` double, `sources` string, "
        "`created_at` string, `superseded_by` string)",
        "CREATE TAG INDEX IF NOT EXISTS `sagewai_entity_by_project` ON "
        "`sagewai_entity`(`project_key`(32))",
        "CREATE EDGE INDEX IF NOT EXISTS `sagewai_relation_by_project` ON "
        "`sagewai_relation`(`project_key`(32))",
    ]
    # Then a probe write and its removal confirm the schema is live.
    assert session.statements[5].startswith("INSERT VERTEX `sagewai_entity`(")
    assert session.statements[6] == f'DELETE VERTEX "{"0" * 32}" WITH EDGE'
    assert session.vertex_count == 0


async def test_insert_vertex_statement_for_a_hostile_name_is_exact() -> None:
    store, session = await _store()
    hostile = Entity(
        id="e1",
        project_id="p'1",
        name=HOSTILE,
        label="person",
        aliases=("O'Brien",),
        created_at=T0,
    )
    await store.upsert_entity("p'1", hostile)
    vid = ngql.vertex_id("p'1", "e1")
    key = ngql.project_key("p'1")
    assert session.statements == [
        "INSERT VERTEX `sagewai_entity`(`project_key`, `project_id`, `entity_id`, `name`, "
        "`label`, `aliases`, `session_ids`, `created_at`, `metadata`) VALUES "
        f'"{vid}":("{key}", "p\'1", "e1", '
        '"Bob\\"); DROP SPACE sagewai; --\\\\\\n\\tYIELD 1 \'北京\' 🚀", "person", '
        '"[\\"O\'Brien\\"]", "[]", "2024-03-01T12:00:00+00:00", "{}")'
    ]
    assert await store.get_entity("p'1", "e1") == hostile
    assert session.statements[-1] == (
        f'FETCH PROP ON `sagewai_entity` "{vid}" YIELD '
        + ", ".join(f"properties(vertex).`{n}` AS `{n}`" for n, _ in ngql.ENTITY_PROPS)
    )


async def test_edge_statements_address_edges_by_hashed_ends_and_rank() -> None:
    store, session = await _store()
    a = Entity(id="a", project_id="p", name="A\\", created_at=T0)
    b = Entity(id="b", project_id="p", name='"B"', created_at=T0)
    await store.upsert_entities("p", [a, b])
    rel = Relation(
        id="r1",
        project_id="p",
        subject_id="a",
        predicate='likes"; --',
        object_id="b",
        valid_from=T0,
        created_at=T0,
        sources=(Provenance(session_id="s\n1", message_id="D1:3"),),
    )
    session.statements.clear()
    await store.upsert_relation("p", rel)
    src, dst, rank = ngql.vertex_id("p", "a"), ngql.vertex_id("p", "b"), ngql.edge_rank("r1")
    insert = session.statements[-1]
    assert insert.startswith(
        "INSERT EDGE `sagewai_relation`(`project_key`, `project_id`, `relation_id`, `subject_id`, "
        "`predicate`, `object_id`, `valid_from`, `valid_to`, `confidence`, `sources`, "
        f'`created_at`, `superseded_by`) VALUES "{src}"->"{dst}"@{rank}:('
    )
    assert '"likes\\"; --"' in insert
    assert '"[{\\"message_id\\":\\"D1:3\\",\\"session_id\\":\\"s\\\\n1\\"}]"' in insert
    assert "\n" not in insert
    session.statements.clear()
    await store.delete_subject("p", '"b"')
    assert session.statements[-2:] == [
        f'DELETE EDGE `sagewai_relation` "{src}"->"{dst}"@{rank}',
        f'DELETE VERTEX "{dst}" WITH EDGE',
    ]
    assert session.edge_count == 0
    assert session.vertex_count == 1


async def test_reads_filter_on_the_hashed_project_key() -> None:
    store, session = await _store()
    await store.entities('p"; DELETE VERTEX *')
    key = ngql.project_key('p"; DELETE VERTEX *')
    assert session.statements == [
        f'LOOKUP ON `sagewai_entity` WHERE `sagewai_entity`.`project_key` == "{key}" YIELD '
        + ", ".join(f"properties(vertex).`{n}` AS `{n}`" for n, _ in ngql.ENTITY_PROPS)
    ]
    session.statements.clear()
    await store.relations("p", subject_id="a")
    assert session.statements == [
        f'GO FROM "{ngql.vertex_id("p", "a")}" OVER `sagewai_relation` BIDIRECT WHERE '
        f'properties(edge).`project_key` == "{ngql.project_key("p")}" YIELD '
        + ", ".join(f"properties(edge).`{n}` AS `{n}`" for n, _ in ngql.EDGE_PROPS)
    ]


async def test_batches_are_split_by_batch_size() -> None:
    store, session = await _store(batch_size=2)
    await store.upsert_entities("p", [Entity(project_id="p", name=f"n{i}") for i in range(5)])
    assert [s.split(" VALUES ")[0][:13] for s in session.statements] == ["INSERT VERTEX"] * 3
    assert len(await store.get_entities("p", [e.id for e in await store.entities("p")])) == 5


async def test_transient_failures_are_retried() -> None:
    store, session = await _store(max_retries=3)
    session.fail_next(-3, -1002)  # RPC failure, then an invalid session
    await store.upsert_entity("p", Entity(project_id="p", name="Ana"))
    assert len(session.statements) == 3
    assert [e.name for e in await store.entities("p")] == ["Ana"]


async def test_retries_give_up_with_backend_unavailable() -> None:
    store, session = await _store(max_retries=2)
    session.fail_next(-3, -3, -3)
    with pytest.raises(BackendUnavailableError, match="kept failing"):
        await store.entities("p")
    assert len(session.statements) == 3


async def test_a_rejected_statement_is_a_backend_error_without_retry() -> None:
    store, session = await _store(max_retries=3)
    session.fail_next(-1009)
    with pytest.raises(BackendError, match="code -1009"):
        await store.entities("p")
    assert len(session.statements) == 1


async def test_driver_exceptions_are_translated() -> None:
    class BrokenSession:
        calls = 0

        def execute(self, stmt: str) -> Any:
            BrokenSession.calls += 1
            raise OSError("connection reset by peer")

    store = NebulaGraphStore(session=BrokenSession(), max_retries=1, retry_delay=0.0)
    with pytest.raises(BackendUnavailableError, match="connection reset"):
        await store.entities("p")
    assert BrokenSession.calls == 2


async def test_data_statements_fail_before_setup() -> None:
    store = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
    with pytest.raises(BackendError, match="not found"):
        await store.entities("p")


async def test_unknown_address_format_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        NebulaGraphStore(addresses=["no-port"])


async def test_close_leaves_an_injected_session_open() -> None:
    store, session = await _store()
    await store.close()
    assert not session.closed
