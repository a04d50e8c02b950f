"""How SagewaiStore maps namespaces onto scopes, under real graphs and LangMem (no network).

The leak this guards: LangMem's ``create_memory_store_manager(..., namespace=("profile",
"{langgraph_user_id}"))`` stored Maya's memory at PROJECT scope (only namespaces starting with
"users"/"memories" were per user), so the recall for Leo showed it. Every namespace shape of
sagewai's docs and of LangMem's docs and examples is listed with the scope it must land at.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore
from pydantic import Field

from sagewai import ContextEngine
from sagewai.errors import InvalidInputError
from sagewai.integrations.langgraph import SagewaiStore, make_recall_hook
from sagewai.testing import FakeEmbedder


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]


class ScriptedToolModel(FakeMessagesListChatModel):
    """A scripted chat model that accepts tools (as LangMem's extractor binds them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@pytest.fixture
def engine() -> ContextEngine:
    return ContextEngine.in_memory(project_id="lg", embedder=FakeEmbedder())


def graph_of(*steps: Any, store: BaseStore) -> Any:
    builder = StateGraph(State)
    names = [f"step{i}" for i in range(len(steps))]
    for name, step in zip(names, steps, strict=True):
        builder.add_node(name, step)
    builder.add_edge(START, names[0])
    for first, second in itertools.pairwise(names):
        builder.add_edge(first, second)
    builder.add_edge(names[-1], END)
    return builder.compile(store=store)


def run_config(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"langgraph_user_id": user, "user_id": user, "thread_id": thread}}


async def test_langmem_profile_namespace_never_leaks_to_another_user(
    engine: ContextEngine,
) -> None:
    langmem = pytest.importorskip("langmem")
    store = SagewaiStore(engine)
    extractor = ScriptedToolModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "Memory", "args": {"content": "Maya has a cat named Miso"}, "id": "m"}
                ],
            )
        ]
    )
    manager = langmem.create_memory_store_manager(
        extractor, namespace=("profile", "{langgraph_user_id}")
    )

    async def learn(state: State, config: RunnableConfig) -> State:
        await manager.ainvoke({"messages": state["messages"]}, config=config)
        return {}

    await graph_of(learn, store=store).ainvoke(
        {"messages": [HumanMessage("Miso, my cat, knocked over my tea again.")]},
        run_config("maya", "t1"),
    )
    # Maya's memory is a USER fact of maya ...
    (fact,) = [r.fact for r in await engine.search("cat named Miso", user_id="maya")]
    assert (fact.scope.value, fact.user_id) == ("user", "maya")

    # ... and the recall hook for Leo does not show it.
    seen: list[Any] = []

    async def recall(state: State, config: RunnableConfig) -> State:
        out = await make_recall_hook(engine)(state, config)
        seen.append(out["llm_input_messages"])
        return {}

    await graph_of(recall, store=store).ainvoke(
        {"messages": [HumanMessage("Do I have a cat?")]}, run_config("leo", "t2")
    )
    assert not any(isinstance(m, SystemMessage) and "Miso" in m.content for m in seen[0])
    assert await engine.search("cat named Miso", user_id="leo") == []
    # Maya's own recall does show it.
    await graph_of(recall, store=store).ainvoke(
        {"messages": [HumanMessage("Do I have a cat?")]}, run_config("maya", "t3")
    )
    assert isinstance(seen[1][0], SystemMessage)
    assert "Maya has a cat named Miso" in seen[1][0].content


# Every namespace shape of docs/langgraph.md and of LangMem's docs and examples, written inside
# a run for user "u-1" of org "acme" (templates filled in as LangMem fills them), with the
# scope it must land at.
SHAPES: list[tuple[tuple[str, ...], str]] = [
    # sagewai's docs
    (("users", "u-1", "memories"), "user"),
    (("sessions", "s-9"), "session"),
    (("docs", "faq"), "project"),
    # LangMem's docs and examples
    (("memories", "u-1"), "user"),  # ("memories", "{langgraph_user_id}")
    (("memories", "u-1", "user_profile"), "user"),
    (("project_memories", "u-1"), "user"),
    (("project", "team_1", "u-1"), "user"),
    (("project", "team_1"), "project"),
    (("memories", "acme", "u-1"), "user"),  # ("memories", "{org_id}", "{user_id}")
    (("memories", "acme"), "project"),  # ("memories", "{org_id}"): the organisation's
    (("agent_smith", "memories", "u-1", "preferences"), "user"),
    (("chat", "u-1", "triples"), "user"),
    (("chat",), "project"),
    (("memories",), "project"),
    (("memories", "episodes"), "project"),
    (("memories", "team_a"), "project"),
    (("memories", "team_a", "agent_a"), "project"),
    (("memories", "team-product"), "project"),
    (("memories", "project-x"), "project"),
    (("profile", "u-1"), "user"),
]


@pytest.mark.parametrize(("namespace", "scope"), SHAPES)
async def test_every_documented_namespace_shape_lands_at_its_scope(
    engine: ContextEngine, namespace: tuple[str, ...], scope: str
) -> None:
    store = SagewaiStore(engine)

    async def write(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        await store.aput(namespace, "k", {"content": "the remembered text"})
        return {}

    config: RunnableConfig = {
        "configurable": {"langgraph_user_id": "u-1", "org_id": "acme", "thread_id": "t"}
    }
    await graph_of(write, store=store).ainvoke({"messages": []}, config)
    (fact,) = await engine.list(
        scope="session" if scope == "session" else None,
        user_id="u-1" if scope == "user" else None,
        session_id="s-9" if scope == "session" else None,
        tags=["langgraph"],
    )
    assert fact.scope.value == scope
    # Read back outside any run, the same namespace finds the same item.
    assert (await store.aget(namespace, "k")) is not None
    assert [i.key for i in await store.asearch(namespace, query="remembered text")] == ["k"]


async def test_a_namespace_keeps_its_scope_outside_a_run(engine: ContextEngine) -> None:
    store = SagewaiStore(engine)

    async def write(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        await store.aput(("profile", "maya"), "pet", {"content": "Maya has a cat"})
        return {}

    await graph_of(write, store=store).ainvoke({"messages": []}, run_config("maya", "t"))
    # A script (no run, no user) adds to the same namespace: it lands at Maya's scope too.
    await store.aput(("profile", "maya"), "city", {"content": "Maya lives in Porto"})
    facts = await engine.list(user_id="maya", scope="user")
    assert sorted((f.content, f.scope.value) for f in facts) == [
        ("Maya has a cat", "user"),
        ("Maya lives in Porto", "user"),
    ]
    assert await engine.search("Porto", user_id="leo") == []


async def test_a_run_never_reads_or_writes_another_users_memory(engine: ContextEngine) -> None:
    store = SagewaiStore(engine)
    await store.aput(("users", "maya", "notes"), "pin", {"content": "Maya's PIN hint is 'blue'"})

    async def mayas_run(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        await store.aput(("profile", "maya"), "pet", {"content": "Maya has a cat"})
        return {}

    await graph_of(mayas_run, store=store).ainvoke({"messages": []}, run_config("maya", "t"))
    found: list[Any] = []

    async def snoop(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        found.append(await store.aget(("users", "maya", "notes"), "pin"))
        found.append(await store.asearch(("users",), query="PIN hint"))
        found.append(await store.asearch(("profile", "maya"), query="cat"))
        found.append(await store.asearch((), query="Maya"))
        found.append(await store.alist_namespaces())
        return {}

    await graph_of(snoop, store=store).ainvoke({"messages": []}, run_config("leo", "t"))
    assert found == [None, [], [], [], []]

    async def write_into_maya(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        await store.aput(("users", "maya", "notes"), "x", {"content": "Leo was here"})
        return {}

    with pytest.raises(InvalidInputError, match="belongs to user 'maya'"):
        await graph_of(write_into_maya, store=store).ainvoke(
            {"messages": []}, run_config("leo", "t")
        )

    async def write_into_mayas_profile(
        state: State, config: RunnableConfig, *, store: BaseStore
    ) -> State:
        await store.aput(("profile", "maya"), "x", {"content": "Leo was here"})
        return {}

    with pytest.raises(InvalidInputError, match="belongs to user 'maya'"):
        await graph_of(write_into_mayas_profile, store=store).ainvoke(
            {"messages": []}, run_config("leo", "t")
        )
    found_now = await engine.search("Leo was here", user_id="maya")
    assert all("Leo" not in r.fact.content for r in found_now)


def test_a_sync_graph_follows_the_same_rule(engine: ContextEngine) -> None:
    store = SagewaiStore(engine)

    def write(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        store.put(("profile", "maya"), "pet", {"content": "Maya has a cat"})
        return {}

    graph_of(write, store=store).invoke({"messages": []}, run_config("maya", "t"))
    assert store.get(("profile", "maya"), "pet") is not None
    from sagewai.sync import run

    (fact,) = run(engine.list(user_id="maya", scope="user"))
    assert fact.user_id == "maya"


async def test_index_false_is_not_indexed(engine: ContextEngine) -> None:
    store = SagewaiStore(engine)
    await store.aput(("docs",), "secret", {"content": "The vault code is 7731"}, index=False)
    await store.aput(("docs",), "plain", {"content": "The vault is in the basement"})
    # Not found by a query (the store's or sagewai's own), found by key and by listing.
    assert [i.key for i in await store.asearch(("docs",), query="vault code")] == ["plain"]
    assert all("7731" not in r.fact.content for r in await engine.search("vault code 7731"))
    item = await store.aget(("docs",), "secret")
    assert item is not None
    assert item.value == {"content": "The vault code is 7731"}
    assert sorted(i.key for i in await store.asearch(("docs",))) == ["plain", "secret"]
    # Putting it again indexed makes it findable.
    await store.aput(("docs",), "secret", {"content": "The vault code is 7731"})
    assert "secret" in [i.key for i in await store.asearch(("docs",), query="vault code")]


class RecordingModel(FakeMessagesListChatModel):
    """A scripted chat model that keeps the messages of every call."""

    seen: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


async def test_create_agent_recalls_through_the_middleware(engine: ContextEngine) -> None:
    from langchain.agents import create_agent

    from sagewai.integrations.langgraph import SagewaiRecallMiddleware

    await engine.add("Maya is allergic to peanuts", user_id="maya")
    model = RecordingModel(responses=[AIMessage("No satay."), AIMessage("Enjoy.")])
    agent = create_agent(
        model,
        [],
        system_prompt="You are a cook.",
        middleware=[SagewaiRecallMiddleware(engine)],
        store=SagewaiStore(engine),
    )
    question = {"messages": [HumanMessage("Can I eat the peanut satay?")]}
    out = await agent.ainvoke(question, {"configurable": {"user_id": "maya", "thread_id": "a"}})
    assert out["messages"][-1].content == "No satay."
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You are a cook.")
    assert "- Maya is allergic to peanuts" in system.content
    assert all("peanuts" not in str(m.content) for m in out["messages"][:-1])  # state unchanged
    # Leo, named through the agent's context this time, is not shown Maya's allergy.
    await agent.ainvoke(question, {"configurable": {"thread_id": "b"}}, context={"user_id": "leo"})
    assert all("allergic" not in str(m.content) for m in model.seen[1])


def test_a_sync_create_agent_recalls_too(engine: ContextEngine) -> None:
    from langchain.agents import create_agent

    from sagewai.integrations.langgraph import SagewaiRecallMiddleware
    from sagewai.sync import wrap

    wrap(engine).add("Ravi's standup is at 9:30", user_id="ravi")
    model = RecordingModel(responses=[AIMessage("9:30.")])
    agent = create_agent(model, [], middleware=[SagewaiRecallMiddleware(engine)])
    agent.invoke(
        {"messages": [HumanMessage("When is my standup?")]}, {"configurable": {"user_id": "ravi"}}
    )
    assert "standup is at 9:30" in str(model.seen[0][0].content)
    wrap(engine).close()


async def test_recall_text_marks_an_old_value_and_puts_the_current_one_first() -> None:
    from sagewai import ContextEngine
    from sagewai.context import MemoryBridge
    from sagewai.integrations.langgraph import recall_text
    from sagewai.intelligence import RuleBasedFactExtractor

    ctx = ContextEngine.in_memory(project_id="p")
    async with ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), journal=False
        )
        await bridge.process_message("I live in Berlin.", session_id="s1", user_id="u")
        await bridge.process_message("I moved to Munich last week.", session_id="s2", user_id="u")
        text = await recall_text(ctx, "where do I live?", user_id="u")
    assert text is not None
    lines = text.splitlines()[1:]
    assert "Munich" in lines[0]
    for line in lines:
        if "Berlin" in line and "Munich" not in line.split("(")[0]:
            assert "changed:" in line, line  # never an old value unmarked
