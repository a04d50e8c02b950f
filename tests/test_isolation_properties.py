"""Property-based isolation: random writes, reads and forgets across projects, users, sessions.

No read ever returns, and no delete or forget ever touches, a row of another project, user or
session. Runs on shared in-memory stores (200 generated cases per run).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagewai.context.engine import ContextEngine
from sagewai.context.scope import ContextScope
from sagewai.errors import FactNotFoundError
from sagewai.stores.memory_metadata import InMemoryMetadataStore
from sagewai.stores.memory_vector import InMemoryVectorStore
from tests.helpers import memory_engine

PROJECTS = ("p1", "p2", "p3")
USERS = ("u1", "u2")
SESSIONS = ("s1", "s2")
WORDS = ("apple", "river", "guitar", "orbit", "lantern", "maple")


@dataclass(frozen=True)
class Add:
    project: str
    scope: ContextScope
    user: str | None
    session: str | None
    words: tuple[str, ...]


@dataclass(frozen=True)
class Search:
    project: str
    user: str | None
    session: str | None
    word: str


@dataclass(frozen=True)
class Forget:
    project: str
    user: str | None
    session: str | None
    subject: str | None


@dataclass(frozen=True)
class DeleteAny:
    project: str
    index: int


def _add() -> st.SearchStrategy[Add]:
    def build(project: str, scope: ContextScope, user: str, session: str, words: list[str]) -> Add:
        return Add(
            project,
            scope,
            user if scope in (ContextScope.USER, ContextScope.SESSION) else None,
            session if scope is ContextScope.SESSION else None,
            tuple(words),
        )

    return st.builds(
        build,
        st.sampled_from(PROJECTS),
        st.sampled_from([ContextScope.PROJECT, ContextScope.USER, ContextScope.SESSION]),
        st.sampled_from(USERS),
        st.sampled_from(SESSIONS),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    )


OPERATIONS = st.one_of(
    _add(),
    st.builds(
        Search,
        st.sampled_from(PROJECTS),
        st.none() | st.sampled_from(USERS),
        st.none() | st.sampled_from(SESSIONS),
        st.sampled_from(WORDS),
    ),
    st.builds(
        Forget,
        st.sampled_from(PROJECTS),
        st.none() | st.sampled_from(USERS),
        st.none() | st.sampled_from(SESSIONS),
        st.none() | st.sampled_from(WORDS),
    ),
    st.builds(DeleteAny, st.sampled_from(PROJECTS), st.integers(0, 50)),
)


async def _run(engines: dict[str, ContextEngine], operations: list[object]) -> None:
    # The model: every fact we believe exists, with where it lives.
    alive: dict[str, Add] = {}
    written: list[tuple[str, str]] = []  # (fact id, project) ever written
    for op in operations:
        if isinstance(op, Add):
            fact = await engines[op.project].add(
                " ".join(op.words),
                scope=op.scope,
                user_id=op.user,
                session_id=op.session,
                subject=op.words[0],
            )
            alive[fact.id] = op
            written.append((fact.id, op.project))
        elif isinstance(op, Search):
            results = await engines[op.project].search(
                op.word, top_k=50, user_id=op.user, session_id=op.session
            )
            for result in results:
                origin = alive[result.fact.id]
                assert origin.project == op.project, "read a foreign project's fact"
                if origin.scope is ContextScope.USER:
                    assert origin.user == op.user, "read a sibling user's fact"
                if origin.scope is ContextScope.SESSION:
                    assert origin.session == op.session, "read a sibling session's fact"
        elif isinstance(op, Forget):
            if op.user is None and op.session is None and op.subject is None:
                continue
            before = {p: await engines[p].count() for p in PROJECTS}
            report = await engines[op.project].forget(
                user_id=op.user, session_id=op.session, subject=op.subject
            )
            for project in PROJECTS:
                if project != op.project:
                    assert await engines[project].count() == before[project]
            expected = {
                fact_id
                for fact_id, origin in alive.items()
                if origin.project == op.project
                and (op.user is None or origin.user == op.user)
                and (op.session is None or origin.session == op.session)
                and (op.subject is None or origin.words[0] == op.subject)
            }
            assert report.facts_deleted == len(expected)
            for fact_id in expected:
                del alive[fact_id]
        elif isinstance(op, DeleteAny) and written:
            fact_id, owner = written[op.index % len(written)]
            engine = engines[op.project]
            if owner != op.project or fact_id not in alive:
                before = await engines[owner].count()
                try:
                    await engine.delete(fact_id)
                except FactNotFoundError:
                    pass
                else:
                    raise AssertionError("deleted a fact that is foreign or already gone")
                assert await engines[owner].count() == before
            else:
                await engine.delete(fact_id)
                del alive[fact_id]
    for project in PROJECTS:
        assert await engines[project].count() == sum(
            1 for origin in alive.values() if origin.project == project
        )


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(OPERATIONS, min_size=1, max_size=25))
def test_isolation_on_shared_in_memory_stores(operations: list[object]) -> None:
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(64)
    engines = {p: memory_engine(p, metadata=metadata, vectors=vectors) for p in PROJECTS}
    asyncio.run(_run(engines, operations))
