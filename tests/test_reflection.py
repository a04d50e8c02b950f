"""Reflection: consolidation writes one synthesis per subject, linked to its facts.

Through the public API only: facts are added to an engine, ``MemoryConsolidator(reflect=True)``
runs, and the synthesis is read back by search, ``get``, ``history`` and ``revert``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sagewai import ContextEngine, Fact, FactKind, FactStatus
from sagewai.errors import InvalidInputError
from sagewai.intelligence import ActionKind, MemoryConsolidator
from sagewai.llm import ModelUnreachableError
from sagewai.testing import FakeEmbedder, ScriptedLLM

BACKENDS = ("memory", "local", "postgres")
Factory = Callable[[str], Awaitable[ContextEngine]]

DANA = [
    ("Dana lives in Munich.", {"valid_from": datetime(2026, 3, 9, tzinfo=UTC)}),
    ("Dana works at Siemens.", {}),
    ("Dana prefers short answers.", {}),
]


@pytest.fixture
def postgres_place(request: pytest.FixtureRequest) -> tuple[str, str] | None:
    """The DSN and a fresh schema when the test runs on PostgreSQL, else None."""
    params = getattr(request.node, "callspec", None)
    if params is None or "postgres" not in params.params.values():
        return None
    return request.getfixturevalue("postgres_dsn"), request.getfixturevalue("postgres_schema")


@pytest.fixture
async def make_engine(
    tmp_path: Path, postgres_place: tuple[str, str] | None
) -> AsyncIterator[Factory]:
    """Engines on a named backend (PostgreSQL in a fresh schema), closed afterwards."""
    made: list[ContextEngine] = []

    async def build(backend: str) -> ContextEngine:
        embedder = FakeEmbedder()
        if backend == "memory":
            engine = ContextEngine.in_memory(project_id="proj", embedder=embedder)
        elif backend == "local":
            engine = ContextEngine.local(tmp_path / "local", project_id="proj", embedder=embedder)
        else:
            from sagewai.stores import PostgresMetadataStore
            from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore

            assert postgres_place is not None
            dsn, schema = postgres_place
            engine = ContextEngine(
                metadata_store=PostgresMetadataStore(dsn, schema=schema),
                vector_store=QdrantEdgeVectorStore(
                    tmp_path / "vectors", dimension=embedder.dimension
                ),
                project_id="proj",
                embedder=embedder,
            )
            await engine.stores.metadata.migrate()
        await engine.open()
        made.append(engine)
        return engine

    yield build
    for engine in made:
        await engine.close()


async def add_dana(ctx: ContextEngine, user: str = "u1") -> list[Fact]:
    return [
        await ctx.add(text, subject="Dana", user_id=user, **fields)  # type: ignore[arg-type]
        for text, fields in DANA
    ]


async def syntheses(ctx: ContextEngine, *, user: str = "u1") -> list[Fact]:
    return await ctx.get_all(user_id=user, statuses=list(FactStatus), kinds=[FactKind.SYNTHESIS])


def reflecting(ctx: ContextEngine, **options: object) -> MemoryConsolidator:
    return MemoryConsolidator(ctx, reflect=True, **options)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the synthesis


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_subject_with_three_facts_gets_one_plain_synthesis_linked_to_them(
    make_engine: Factory, backend: str
) -> None:
    ctx = await make_engine(backend)
    facts = await add_dana(ctx)
    await ctx.add("Bob likes tea.", subject="Bob", user_id="u1")
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 1
    (synthesis,) = await syntheses(ctx)
    assert synthesis.content == (
        "Dana (summary): lives in Munich (since 2026-03-09); works at Siemens; "
        "prefers short answers."
    )
    assert synthesis.kind is FactKind.SYNTHESIS
    assert synthesis.subject == "Dana"
    assert synthesis.user_id == "u1"
    assert synthesis.sources == ()  # nobody said it
    about = synthesis.metadata["reflection"]
    assert isinstance(about, dict)
    assert about["rests_on"] == [f.id for f in facts]
    assert about["writer"] == "rules"
    (action,) = [a for a in report.actions if a.kind is ActionKind.REFLECT]
    assert action.fact_ids == (synthesis.id,)
    history = await ctx.history(synthesis.id)
    assert [c.action.value for c in history] == ["created"]
    assert "3 of its 3 current facts" in history[0].reason
    # Searchable, and shown when its subject comes up, beside the facts themselves.
    found = await ctx.search("Dana", top_k=5, user_id="u1", scope="user")
    assert synthesis.id in [r.fact.id for r in found]
    assert {f.id for f in facts} <= {r.fact.id for r in found}


async def test_a_search_naming_only_the_subject_shows_its_synthesis_first(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    facts = await add_dana(ctx)
    for i in range(30):  # many records name Dana: the synthesis is not first on its own merit
        await ctx.add(f"Dana mentioned topic number {i} in passing.", user_id="u1")
    await reflecting(ctx).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    for query in ("What do you know about Dana?", "Dana", "tell me about dana", "Dana's profile"):
        found = await ctx.search(query, top_k=5, user_id="u1")
        assert found[0].fact.id == synthesis.id, query
        assert len(found) == 5
        assert [r.fact.id for r in found].count(synthesis.id) == 1
    # Not when the search leaves syntheses out, or asks about the past.
    found = await ctx.search("What do you know about Dana?", top_k=5, user_id="u1", kinds=["fact"])
    assert synthesis.id not in [r.fact.id for r in found]
    found = await ctx.search(
        "What do you know about Dana?", top_k=5, user_id="u1", as_of=facts[0].created_at
    )
    assert synthesis.id not in [r.fact.id for r in found]
    # Nor when the question asks about more than the subject.
    found = await ctx.search("Which topic number did Dana mention?", top_k=5, user_id="u1")
    assert synthesis.id not in [r.fact.id for r in found[:1]]


async def test_a_second_run_over_unchanged_facts_writes_nothing(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    await reflecting(ctx).consolidate(scope="user")
    (first,) = await syntheses(ctx)
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 0
    assert not report.actions
    assert await syntheses(ctx) == [first]
    assert len(await ctx.history(first.id)) == 1


async def test_fewer_facts_than_the_minimum_give_no_synthesis(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    report = await reflecting(ctx, reflection_min_facts=4).consolidate(scope="user")
    assert report.syntheses_written == 0
    assert await syntheses(ctx) == []


async def test_reflection_is_off_by_default(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    report = await MemoryConsolidator(ctx).consolidate(scope="user")
    assert report.syntheses_written == 0
    assert await syntheses(ctx) == []


@pytest.mark.parametrize("bad", [{"reflection_min_facts": 0}, {"reflection_max_facts": 0}])
async def test_bad_reflection_settings_are_refused(
    make_engine: Factory, bad: dict[str, int]
) -> None:
    ctx = await make_engine("memory")
    with pytest.raises(InvalidInputError):
        MemoryConsolidator(ctx, reflect=True, **bad)  # type: ignore[arg-type]


async def test_exact_values_are_kept_verbatim(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await ctx.add(
        "billing-api runs on Postgres 15.4 at db-7.internal:5432.",
        subject="billing-api",
        exact_values=["15.4", "db-7.internal:5432"],
    )
    await ctx.add("billing-api is owned by the Payments team.", subject="billing-api")
    await ctx.add("billing-api deploys every Tuesday at 09:30.", subject="billing-api")
    await reflecting(ctx).consolidate()
    (synthesis,) = [
        f for f in await ctx.get_all(statuses=list(FactStatus)) if f.kind is FactKind.SYNTHESIS
    ]
    for value in ("15.4", "db-7.internal:5432", "Payments", "Tuesday", "09:30", "Postgres"):
        assert value in synthesis.content
    assert set(synthesis.exact_values) == {"15.4", "db-7.internal:5432"}


# ----------------------------------------------------------------------------- refresh, revert


async def test_a_changed_fact_rewrites_the_synthesis_and_revert_restores_the_previous_one(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("local")
    await add_dana(ctx)
    await reflecting(ctx).consolidate(scope="user")
    (first,) = await syntheses(ctx)
    await ctx.add("Dana drives a Tesla Model 3.", subject="Dana", user_id="u1")
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 1
    (second,) = await syntheses(ctx)
    assert second.id == first.id  # the same record, rewritten
    assert "drives a Tesla Model 3" in second.content
    rows = await ctx.history(second.id)
    assert [c.action.value for c in rows] == ["created", "updated"]
    assert "1 facts new to it" in rows[-1].reason
    found = await ctx.search("Tesla Model 3", top_k=3, user_id="u1", scope="user")
    assert second.id in [r.fact.id for r in found]

    restored = await ctx.revert(rows[-1].id)
    assert restored.content == first.content
    assert (await ctx.get(first.id)).content == first.content
    # Re-embedded with its text: the vector of the undone text is gone.
    found = await ctx.search("Dana lives in Munich", top_k=5, user_id="u1", scope="user")
    assert first.id in [r.fact.id for r in found]
    # The user's undo holds: the next run does not rewrite it to the version they undid...
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 0
    assert (await ctx.get(first.id)).content == first.content
    # ... until its facts change again.
    await ctx.add("Dana speaks German.", subject="Dana", user_id="u1")
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 1
    assert "speaks German" in (await ctx.get(first.id)).content


async def test_revert_action_of_a_new_synthesis_archives_it_for_good(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    consolidator = reflecting(ctx)
    report = await consolidator.consolidate(scope="user")
    (action,) = report.actions
    (back,) = await consolidator.revert_action(action)
    assert back.status is FactStatus.ARCHIVED
    found = await ctx.search("Dana", top_k=10, user_id="u1", scope="user")
    assert back.id not in [r.fact.id for r in found]
    again = await consolidator.consolidate(scope="user")
    assert again.syntheses_written == 0
    assert (await ctx.get(back.id)).status is FactStatus.ARCHIVED


async def test_a_subject_below_the_minimum_has_its_synthesis_archived(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    facts = await add_dana(ctx)
    await reflecting(ctx).consolidate(scope="user")
    await ctx.delete(facts[0].id)
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_archived == 1
    (synthesis,) = await syntheses(ctx)
    assert synthesis.status is FactStatus.ARCHIVED
    rows = await ctx.history(synthesis.id)
    assert rows[-1].action.value == "archived"
    assert "fewer than 3" in rows[-1].reason
    await ctx.add("Dana plays chess.", subject="Dana", user_id="u1")
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 1
    (synthesis,) = await syntheses(ctx)
    assert synthesis.status is FactStatus.ACTIVE
    assert "plays chess" in synthesis.content
    assert "lives in Munich" not in synthesis.content


async def test_a_synthesis_the_user_brought_back_from_the_archive_stays(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    facts = await add_dana(ctx)
    await reflecting(ctx).consolidate(scope="user")
    await ctx.delete(facts[0].id)
    await reflecting(ctx).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    archived = (await ctx.history(synthesis.id))[-1]
    assert (await ctx.revert(archived.id)).status is FactStatus.ACTIVE
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_archived == 0
    assert (await ctx.get(synthesis.id)).status is FactStatus.ACTIVE


async def test_a_dry_run_reports_exactly_what_the_real_run_does(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    planned = await reflecting(ctx).consolidate(scope="user", dry_run=True)
    assert await syntheses(ctx) == []
    done = await reflecting(ctx).consolidate(scope="user")
    assert [a.comparable() for a in planned.actions] == [a.comparable() for a in done.actions]
    assert planned.syntheses_written == done.syntheses_written == 1


async def test_consolidation_never_merges_or_resolves_a_synthesis_against_a_fact(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    await reflecting(ctx).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    # A fact that says word for word what the synthesis says, and one that contradicts a fact.
    copy = await ctx.add(synthesis.content, subject="Dana", user_id="u1")
    await ctx.add(
        "Dana lives in Berlin.", subject="Dana", predicate="lives_in", object="Berlin", user_id="u1"
    )
    report = await reflecting(ctx).consolidate(scope="user")
    assert synthesis.id not in {
        i for a in report.actions for i in a.fact_ids if a.kind is not ActionKind.REFLECT
    }
    assert all(a.target_id != synthesis.id for a in report.actions)
    after = await ctx.get(synthesis.id)
    assert after.status is FactStatus.ACTIVE
    assert after.merged_into is None
    assert after.superseded_by is None
    assert (await ctx.get(copy.id)).merged_into != synthesis.id


# ----------------------------------------------------------------------------- isolation


@pytest.mark.parametrize("backend", BACKENDS)
async def test_syntheses_never_mix_users(make_engine: Factory, backend: str) -> None:
    ctx = await make_engine(backend)
    await add_dana(ctx, "u1")
    await ctx.add("Dana lives in Oslo.", subject="Dana", user_id="u2")
    await ctx.add("Dana works at Equinor.", subject="Dana", user_id="u2")
    await ctx.add("Dana prefers long answers.", subject="Dana", user_id="u2")
    await ctx.add("Dana likes jazz.", subject="Dana", user_id="u3")  # too few for u3
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 2
    (mine,) = await syntheses(ctx, user="u1")
    (theirs,) = await syntheses(ctx, user="u2")
    assert await syntheses(ctx, user="u3") == []
    assert mine.id != theirs.id
    assert "Munich" in mine.content
    assert "Oslo" not in mine.content
    assert "Oslo" in theirs.content
    assert "Munich" not in theirs.content
    for user, other in (("u1", theirs.id), ("u2", mine.id), ("u3", mine.id)):
        found = await ctx.search("Dana", top_k=20, user_id=user, scope="user")
        assert other not in [r.fact.id for r in found]
        if user == "u3":
            assert theirs.id not in [r.fact.id for r in found]
    # A search that names only the subject shows the asker's own synthesis first.
    for user, own in (("u1", mine.id), ("u2", theirs.id)):
        found = await ctx.search("What do you know about Dana?", top_k=3, user_id=user)
        assert found[0].fact.id == own
        assert {r.fact.id for r in found} & {mine.id, theirs.id} == {own}
    found = await ctx.search("What do you know about Dana?", top_k=3, user_id="u3")
    assert found[0].fact.kind is not FactKind.SYNTHESIS
    # One user pinned: only that user's synthesis is rewritten.
    await ctx.add("Dana speaks Norwegian.", subject="Dana", user_id="u2")
    pinned = await reflecting(ctx).consolidate(scope="user", user_id="u1")
    assert pinned.syntheses_written == 0
    assert "Norwegian" not in (await ctx.get(theirs.id)).content


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hostile_subject_gets_its_synthesis_and_is_forgotten_with_it(
    make_engine: Factory, backend: str
) -> None:
    ctx = await make_engine(backend)
    hostile = "Ro'bert\"); DROP TABLE facts;-- %s \\ .*"
    for text in ("likes tea", "lives in Oslo", "works at Equinor"):
        await ctx.add(f"{hostile} {text}.", subject=hostile, user_id="u1")
    report = await reflecting(ctx).consolidate(scope="user")
    assert report.syntheses_written == 1
    (synthesis,) = await syntheses(ctx)
    assert synthesis.subject == hostile
    assert synthesis.content.startswith(f"{hostile} (summary): likes tea; lives in Oslo")
    await ctx.forget(subject=hostile)
    assert await syntheses(ctx) == []
    assert await ctx.get_all(user_id="u1") == []


async def test_syntheses_never_cross_projects(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    async with (
        ContextEngine.local(tmp_path / "a", project_id="a", embedder=embedder) as a,
        ContextEngine.local(tmp_path / "b", project_id="b", embedder=embedder) as b,
    ):
        await add_dana(a)
        await reflecting(b).consolidate(scope="user")
        assert await syntheses(b) == []
        await reflecting(a).consolidate(scope="user")
        assert len(await syntheses(a)) == 1
        assert await syntheses(b) == []


# ----------------------------------------------------------------------------- forgetting


@pytest.mark.parametrize(
    ("what", "gone"),
    [
        ({"subject": "Dana"}, True),  # the synthesis's own subject
        ({"subject": "Siemens"}, True),  # a name it quotes
        ({"subject": "Bob"}, False),
    ],
)
async def test_forgetting_a_subject_removes_the_syntheses_that_name_it(
    make_engine: Factory, what: dict[str, str], gone: bool
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    await ctx.add("Bob likes tea.", subject="Bob", user_id="u1")
    await reflecting(ctx).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    await ctx.forget(**what)  # type: ignore[arg-type]
    left = await ctx.get_all(user_id="u1", statuses=list(FactStatus))
    assert (synthesis.id not in [f.id for f in left]) is gone


async def test_forgetting_a_session_removes_the_syntheses_resting_on_its_facts(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    for text, fields in DANA:
        await ctx.add(text, subject="Dana", user_id="u1", session_id="s1", **fields)  # type: ignore[arg-type]
    await reflecting(ctx).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    assert synthesis.session_id is None
    await ctx.forget(session_id="s1")
    assert await syntheses(ctx) == []


# ----------------------------------------------------------------------------- with a model


async def test_a_model_writes_the_synthesis_when_it_keeps_every_exact_value(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    written = (
        "Dana has lived in Munich since 2026-03-09 and works at Siemens. She prefers short answers."
    )
    llm = ScriptedLLM([written])
    report = await reflecting(ctx, reflection_client=llm, reflection_model="scripted").consolidate(
        scope="user"
    )
    assert report.syntheses_written == 1
    (synthesis,) = await syntheses(ctx)
    assert synthesis.content == written
    about = synthesis.metadata["reflection"]
    assert isinstance(about, dict)
    assert about["writer"] == "model:scripted"
    (call,) = llm.calls
    for text, _ in DANA:
        assert text in call.prompt


@pytest.mark.parametrize(
    "answer",
    [
        # "15" paraphrased away as "fifteen"
        "Dana has lived in Munich for fifteen days, works at Siemens and likes brevity.",
        # a name altered
        "Dana has lived in München since 2026-03-09, works at Siemens; short answers.",
        "",
        "Dana lives in Munich (since 2026-03-09) at Siemens. " * 40,  # far too long
    ],
)
async def test_a_model_that_loses_an_exact_value_is_replaced_by_the_plain_version(
    make_engine: Factory, answer: str
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    await ctx.add("Dana has a 15 minute commute.", subject="Dana", user_id="u1")
    llm = ScriptedLLM([answer])
    await reflecting(ctx, reflection_client=llm).consolidate(scope="user")
    (synthesis,) = await syntheses(ctx)
    assert synthesis.content.startswith("Dana (summary): ")
    assert "15 minute commute" in synthesis.content
    about = synthesis.metadata["reflection"]
    assert isinstance(about, dict)
    assert about["writer"] == "rules"


async def test_an_unreachable_model_falls_back_once_for_the_whole_run(
    make_engine: Factory,
) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    for text in ("Eli plays chess.", "Eli lives in Lyon.", "Eli works at Airbus."):
        await ctx.add(text, subject="Eli", user_id="u1")
    llm = ScriptedLLM([ModelUnreachableError("no route")])
    report = await reflecting(ctx, reflection_client=llm).consolidate(scope="user")
    assert report.syntheses_written == 2
    assert len(llm.calls) == 1  # not asked again in this run
    assert all(s.content.endswith(".") and "(summary)" in s.content for s in await syntheses(ctx))


async def test_a_dry_run_calls_no_model(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    await add_dana(ctx)
    llm = ScriptedLLM([])
    report = await reflecting(ctx, reflection_client=llm).consolidate(scope="user", dry_run=True)
    assert report.syntheses_written == 1
    assert llm.calls == []


async def test_a_bad_reflection_client_is_refused(make_engine: Factory) -> None:
    ctx = await make_engine("memory")
    with pytest.raises(InvalidInputError):
        MemoryConsolidator(ctx, reflect=True, reflection_client=object())  # type: ignore[arg-type]


def test_synthesis_ids_differ_per_scope_and_subject() -> None:
    from sagewai.intelligence.consolidation._reflection import synthesis_id

    ids = {synthesis_id("p", key, subject) for key in ("u1", "u2") for subject in ("dana", "bob")}
    assert len(ids) == 4
    assert all(uuid.UUID(i) for i in ids)


def test_the_command_line_reflects_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio
    import json

    from sagewai.cli._main import main

    folder = tmp_path / "data"

    async def seed() -> None:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await add_dana(ctx)

    asyncio.run(seed())
    args = ["consolidate", "--project", "demo", "--store", str(folder), "--scope", "all"]
    assert main([*args, "--no-reflect", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["syntheses_written"] == 0
    assert main([*args, "--reflect"]) == 0
    assert "1 syntheses written (0 archived)" in capsys.readouterr().out
