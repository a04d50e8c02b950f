"""SagewaiStore under real compiled LangGraph graphs, with scripted chat models (no network)."""

from __future__ import annotations

import asyncio
import itertools
import json
import operator
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp

from sagewai import ContextEngine, ContextScope, FactStatus
from sagewai.errors import InvalidInputError
from sagewai.integrations.langgraph import (
    SagewaiStore,
    item_text,
    make_memory_tools,
    make_recall_hook,
    make_recall_node,
    matches_filter,
)
from sagewai.testing import FakeEmbedder


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    log: Annotated[list[Any], operator.add]
    memories: list[str]


@pytest.fixture
def engine() -> ContextEngine:
    return ContextEngine.in_memory(project_id="lg", embedder=FakeEmbedder())


@pytest.fixture
def store(engine: ContextEngine) -> SagewaiStore:
    return SagewaiStore(engine, user_namespaces=("users", "memories"))


def graph_of(*steps: Any, store: BaseStore) -> Any:
    """A straight-line graph of the given node functions, compiled with ``store``."""
    builder = StateGraph(State)
    names = []
    for index, step in enumerate(steps):
        name = f"step{index}"
        builder.add_node(name, step)
        names.append(name)
    builder.add_edge(START, names[0])
    for first, second in itertools.pairwise(names):
        builder.add_edge(first, second)
    builder.add_edge(names[-1], END)
    return builder.compile(store=store)


async def test_put_get_search_delete_list_through_a_graph(
    store: SagewaiStore, engine: ContextEngine
) -> None:
    alice = ("users", "alice", "prefs")

    async def write(state: State, *, store: BaseStore) -> State:
        await store.aput(alice, "drink", {"content": "Alice prefers green tea", "kind": "pref"})
        await store.aput(alice, "city", {"content": "Alice lives in Lisbon", "kind": "fact"})
        await store.aput(("users", "bob", "prefs"), "drink", {"content": "Bob drinks coffee"})
        await store.aput(("docs", "faq"), "hours", {"text": "The office opens at 9", "n": 3})
        return {"log": ["written"]}

    async def read(state: State, *, store: BaseStore) -> State:
        item = await store.aget(alice, "drink")
        assert item is not None
        found = await store.asearch(("users", "alice"), query="which tea does she like?")
        filtered = await store.asearch(("users",), filter={"kind": "fact"})
        docs = await store.asearch(
            ("docs",), query="office opening hours", filter={"n": {"$gt": 2}}
        )
        return {
            "log": [
                item.value["content"],
                [(i.key, i.namespace) for i in found],
                found[0].score is not None,
                [i.key for i in filtered],
                [i.key for i in docs],
                await store.alist_namespaces(),
                await store.alist_namespaces(prefix=("users",), max_depth=2),
                await store.alist_namespaces(suffix=("faq",)),
            ]
        }

    async def remove(state: State, *, store: BaseStore) -> State:
        await store.adelete(alice, "drink")
        return {"log": [await store.aget(alice, "drink"), await store.alist_namespaces()]}

    graph = graph_of(write, read, remove, store=store)
    out = await graph.ainvoke({"log": []})
    log = out["log"]
    assert log[0] == "written"
    assert log[1] == "Alice prefers green tea"
    assert log[2][0] == ("drink", alice)  # best first, and only Alice's items
    assert {ns for _, ns in log[2]} == {alice}
    assert log[3] is True
    assert log[4] == ["city"]
    assert log[5] == ["hours"]
    assert log[6] == [("docs", "faq"), ("users", "alice", "prefs"), ("users", "bob", "prefs")]
    assert log[7] == [("users", "alice"), ("users", "bob")]
    assert log[8] == [("docs", "faq")]
    assert log[9] is None
    assert ("users", "alice", "prefs") in log[10]  # "city" is still there

    # The namespace chose the scope: Alice's items are USER facts, recalled by sagewai itself.
    recalled = await engine.search("Lisbon", user_id="alice")
    assert recalled[0].fact.scope is ContextScope.USER
    assert recalled[0].fact.user_id == "alice"
    assert all("Lisbon" not in r.fact.content for r in await engine.search("Lisbon", user_id="bob"))
    # A deletion leaves a tombstone in the audit log.
    assert any(c.action == "deleted" for c in await engine.changes())


async def test_put_over_a_key_supersedes_and_keeps_history(
    store: SagewaiStore, engine: ContextEngine
) -> None:
    namespace = ("users", "carol", "profile")
    await store.aput(namespace, "city", {"content": "Carol lives in Bergen"})
    first = await store.aget(namespace, "city")
    await asyncio.sleep(0.01)
    await store.aput(namespace, "city", {"content": "Carol lives in Oslo"})
    second = await store.aget(namespace, "city")
    assert first is not None
    assert second is not None
    assert second.value == {"content": "Carol lives in Oslo"}
    assert second.created_at == first.created_at < second.updated_at
    old = await engine.list(user_id="carol", statuses=[FactStatus.SUPERSEDED])
    assert [f.content for f in old] == ["Carol lives in Bergen"]
    assert old[0].superseded_by is not None
    results = await store.asearch(namespace, query="where does Carol live")
    assert [r.value["content"] for r in results] == ["Carol lives in Oslo"]
    # the same value again is not a new version
    await store.aput(namespace, "city", {"content": "Carol lives in Oslo"})
    assert await engine.count() == 2


async def test_ttl_is_decay_expired_items_are_archived(engine: ContextEngine) -> None:
    store = SagewaiStore(engine, ttl={"refresh_on_read": False})
    await store.aput(("cache",), "short", {"content": "expires soon"}, ttl=0.0005)  # 30 ms
    await store.aput(("cache",), "long", {"content": "stays"})
    assert await store.aget(("cache",), "short") is not None
    await asyncio.sleep(0.1)
    assert await store.aget(("cache",), "short") is None
    assert [i.key for i in await store.asearch(("cache",))] == ["long"]
    assert await store.sweep_expired() == 1
    assert await store.sweep_expired() == 0  # archived once
    # Archived as decay archives a faded fact: kept with its history, restorable.
    (archived,) = await engine.list(statuses=["archived"])
    assert archived.content == "expires soon"
    change = (await engine.history(archived.id))[-1]
    assert (change.action.value, change.rule) == ("archived", "langgraph.ttl_decay")
    assert all(r.fact.id != archived.id for r in await engine.search("expires soon"))
    await engine.revert(change.id)
    assert (await engine.get(archived.id)).status is FactStatus.ACTIVE


async def test_ttl_fades_an_items_weight_in_search(engine: ContextEngine) -> None:
    store = SagewaiStore(engine, ttl={"refresh_on_read": False})
    await store.aput(("notes",), "old", {"content": "the deploy window is Friday"}, ttl=0.01)
    await store.aput(("notes",), "new", {"content": "the deploy window is Friday noon"})
    await asyncio.sleep(0.3)  # half of the 0.6 s TTL gone: the weight fell to about 0.22
    (first, second) = await store.asearch(("notes",), query="deploy window")
    assert (first.key, second.key) == ("new", "old")
    assert second.score is not None
    assert first.score is not None
    assert second.score < 0.5 * first.score


def test_a_sync_graph_uses_the_sync_methods(store: SagewaiStore) -> None:
    def write(state: State, *, store: BaseStore) -> State:
        store.put(("users", "dan", "notes"), "n1", {"content": "Dan plays the cello"})
        return {}

    def read(state: State, *, store: BaseStore) -> State:
        found = store.search(("users", "dan"), query="instrument cello")
        return {"log": [i.value["content"] for i in found]}

    out = graph_of(write, read, store=store).invoke({"log": []})
    assert out["log"] == ["Dan plays the cello"]


async def test_sync_methods_inside_a_loop_and_bad_input_are_refused(store: SagewaiStore) -> None:
    with pytest.raises(InvalidInputError, match="inside an event loop"):
        store.get(("users", "x"), "k")
    with pytest.raises(InvalidNamespaceError):
        await store.aput(("bad.label",), "k", {"content": "x"})
    with pytest.raises(InvalidInputError, match="namespace label"):
        await store.abatch([GetOp(("a.b",), "k")])
    with pytest.raises(InvalidInputError, match="JSON"):
        await store.abatch([PutOp(("docs",), "k", {"content": "x", "when": object()})])
    with pytest.raises(InvalidInputError, match="operator"):
        await store.asearch(("docs",), filter={"n": {"$regex": "x"}})


def test_pure_helpers() -> None:
    assert item_text({"content": {"content": "nested memory"}}) == "nested memory"
    assert item_text({"a": 1}) == '{"a": 1}'
    assert item_text({"title": "T", "body": "B"}, ["title", "body"]) == "T\nB"
    assert matches_filter({"a": {"b": 2}}, {"a": {"b": 2}})
    assert not matches_filter({"a": 1}, {"a": {"$ne": 1}})
    assert not matches_filter({}, {"a": {"$gt": 1}})


# ------------------------------------------------------------------------------ agents


def agent_graph(model: Any, tools: list[Any], hook: Any, store: BaseStore, seen: list[Any]) -> Any:
    """recall (pre-model hook) -> model -> tools -> model ..., as create_react_agent wires it."""

    async def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(state["llm_input_messages"])
        return {"messages": [await model.ainvoke(state["llm_input_messages"])]}

    class AgentState(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        llm_input_messages: list[AnyMessage]

    builder = StateGraph(AgentState)
    builder.add_node("recall", hook)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "recall")
    return builder.compile(store=store)


def tool_call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


async def test_langmem_tools_round_trip(store: SagewaiStore, engine: ContextEngine) -> None:
    """LangMem's own memory tools on SagewaiStore: stored in one thread, recalled in another."""
    langmem = pytest.importorskip("langmem")
    namespace = ("memories", "{langgraph_user_id}")
    tools = [
        langmem.create_manage_memory_tool(namespace=namespace),
        langmem.create_search_memory_tool(namespace=namespace),
    ]
    model = FakeMessagesListChatModel(
        responses=[
            tool_call("manage_memory", {"content": "The user is allergic to peanuts"}, "c1"),
            AIMessage(content="Noted."),
            tool_call("search_memory", {"query": "allergies"}, "c2"),
            AIMessage(content="You are allergic to peanuts."),
        ]
    )
    seen: list[Any] = []
    graph = agent_graph(model, tools, make_recall_hook(engine), store, seen)
    config: RunnableConfig = {"configurable": {"langgraph_user_id": "erin", "thread_id": "t1"}}
    await graph.ainvoke({"messages": [HumanMessage("I'm allergic to peanuts")]}, config)
    stored = await store.asearch(("memories", "erin"), query="peanuts")
    assert stored[0].value == {"content": "The user is allergic to peanuts"}

    config2: RunnableConfig = {"configurable": {"langgraph_user_id": "erin", "thread_id": "t2"}}
    out = await graph.ainvoke({"messages": [HumanMessage("What am I allergic to?")]}, config2)
    assert out["messages"][-1].content == "You are allergic to peanuts."
    search_result = json.loads(out["messages"][-2].content)
    assert search_result[0]["value"]["content"] == "The user is allergic to peanuts"
    # The pre-model hook recalled it before the model ran in the new thread.
    first_input = seen[2]
    assert isinstance(first_input[0], SystemMessage)
    assert "allergic to peanuts" in first_input[0].content
    # Another user recalls nothing of Erin's.
    other = await store.asearch(("memories", "frank"), query="peanuts")
    assert other == []


async def test_langmem_style_memory_manager_round_trip(
    store: SagewaiStore, engine: ContextEngine
) -> None:
    """The shape of LangMem's memory manager: a model extracts memories from a conversation,
    they are written through the store, and a later conversation recalls them."""
    extractor = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                content=json.dumps(
                    [
                        {"key": "job", "content": "Gina works as a nurse in Denver"},
                        {"key": "pet", "content": "Gina has a dog named Rex"},
                    ]
                )
            )
        ]
    )

    async def manage(state: State, config: RunnableConfig, *, store: BaseStore) -> State:
        user = config["configurable"]["user_id"]
        reply = await extractor.ainvoke(state["messages"])
        for memory in json.loads(str(reply.content)):
            await store.aput(("memories", user), memory["key"], {"content": memory["content"]})
        return {}

    conversation = [
        HumanMessage("I just finished another night shift at the hospital in Denver."),
        AIMessage("That sounds tiring! Do you have anyone waiting at home?"),
        HumanMessage("Just Rex, my dog."),
    ]
    manager = graph_of(manage, store=store)
    await manager.ainvoke({"messages": conversation}, {"configurable": {"user_id": "gina"}})
    assert sorted(await store.alist_namespaces()) == [("memories", "gina")]

    recall = graph_of(make_recall_node(engine, top_k=2), store=store)
    out = await recall.ainvoke(
        {"messages": [HumanMessage("What is the name of Gina's dog?")]},
        {"configurable": {"user_id": "gina"}},
    )
    assert out["memories"][0] == "Gina has a dog named Rex"
    out = await recall.ainvoke(
        {"messages": [HumanMessage("What is the name of Gina's dog?")]},
        {"configurable": {"user_id": "hank"}},
    )
    assert out["memories"] == []


async def test_sagewai_memory_tools_in_an_agent(engine: ContextEngine) -> None:
    store = SagewaiStore(engine)
    model = FakeMessagesListChatModel(
        responses=[
            tool_call("remember", {"content": "Ivan's deadline is 2024-06-30"}, "c1"),
            AIMessage(content="Saved."),
            tool_call("recall_memories", {"query": "deadline"}, "c2"),
            AIMessage(content="June 30."),
        ]
    )
    seen: list[Any] = []
    graph = agent_graph(model, make_memory_tools(engine), make_recall_hook(engine), store, seen)
    config: RunnableConfig = {"configurable": {"user_id": "ivan", "thread_id": "a"}}
    await graph.ainvoke({"messages": [HumanMessage("My deadline is 2024-06-30")]}, config)
    out = await graph.ainvoke({"messages": [HumanMessage("When is my deadline?")]}, config)
    assert "Ivan's deadline is 2024-06-30" in out["messages"][-2].content
    fact = (await engine.search("deadline", user_id="ivan"))[0].fact
    assert (fact.scope, fact.user_id) == (ContextScope.USER, "ivan")


class ScriptedToolModel(FakeMessagesListChatModel):
    """A scripted chat model that accepts tools (as LangMem's extractor binds them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


async def test_langmem_memory_store_manager_round_trip(
    store: SagewaiStore, engine: ContextEngine
) -> None:
    """LangMem's own memory manager (create_memory_store_manager) inside a graph on
    SagewaiStore: the scripted model extracts a memory, the manager writes it through the store,
    and the next conversation recalls it before the model runs."""
    langmem = pytest.importorskip("langmem")
    extractor = ScriptedToolModel(
        responses=[
            tool_call("Memory", {"content": "Gina has a dog named Rex"}, "m1"),
        ]
    )
    manager = langmem.create_memory_store_manager(
        extractor, namespace=("memories", "{langgraph_user_id}")
    )

    async def learn(state: State, config: RunnableConfig) -> State:
        await manager.ainvoke({"messages": state["messages"]}, config=config)
        return {}

    config: RunnableConfig = {"configurable": {"langgraph_user_id": "gina", "thread_id": "t1"}}
    await graph_of(learn, store=store).ainvoke(
        {"messages": [HumanMessage("Rex, my dog, waited for me all night.")]}, config
    )
    (item,) = await store.asearch(("memories", "gina"))
    assert item.value == {"kind": "Memory", "content": {"content": "Gina has a dog named Rex"}}

    answer = FakeMessagesListChatModel(responses=[AIMessage(content="Your dog is Rex.")])
    seen: list[Any] = []
    graph = agent_graph(answer, [], make_recall_hook(engine), store, seen)
    config2: RunnableConfig = {"configurable": {"langgraph_user_id": "gina", "thread_id": "t2"}}
    await graph.ainvoke({"messages": [HumanMessage("What's my dog called?")]}, config2)
    assert isinstance(seen[0][0], SystemMessage)
    assert "- Gina has a dog named Rex" in seen[0][0].content


async def test_a_query_under_a_prefix_spanning_users_merges_their_scopes(
    store: SagewaiStore,
) -> None:
    await store.aput(("users", "amy", "prefs"), "drink", {"content": "Amy drinks oolong tea"})
    await store.aput(("users", "ben", "prefs"), "drink", {"content": "Ben drinks black tea"})
    await store.aput(("docs",), "tea", {"content": "The kitchen stocks green tea"})
    found = await store.asearch(("users",), query="who drinks tea?", limit=10)
    assert sorted(i.namespace[1] for i in found) == ["amy", "ben"]
    everything = await store.asearch((), query="tea", limit=10)
    assert len(everything) == 3
    assert [i.key for i in await store.asearch((), query="tea", limit=1, offset=2)] == [
        everything[2].key
    ]


async def test_a_message_like_value_also_goes_through_the_bridge(engine: ContextEngine) -> None:
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import RuleBasedFactExtractor

    bridge = MemoryBridge(
        context_engine=engine, fact_extractor=RuleBasedFactExtractor(), extract_every_n_turns=1
    )
    store = SagewaiStore(engine, bridge=bridge)
    message = {"role": "user", "content": "I prefer window seats on long flights."}
    await store.aput(("users", "olga", "chat"), "turn-1", message)
    assert (await store.aget(("users", "olga", "chat"), "turn-1")).value == message  # type: ignore[union-attr]
    learned = [f for f in await engine.list(user_id="olga") if "langgraph" not in f.tags]
    assert learned, "the bridge stored what it learned from the message"
    assert all(f.user_id == "olga" for f in learned)


async def test_the_standing_profile_is_the_standing_namespace() -> None:
    """Issue 42: the user's standing profile is read and edited as ("standing", user) items;
    the user's own words enter it through the bridge, a graph's put is an operator's call."""
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import RuleBasedFactExtractor

    engine = ContextEngine.in_memory(project_id="demo", embedder=FakeEmbedder())
    async with engine:
        bridge = MemoryBridge(
            context_engine=engine, fact_extractor=RuleBasedFactExtractor(), journal=False
        )
        await bridge.process_message("Always answer in French.", session_id="s", user_id="dana")
        store = SagewaiStore(engine)
        found = await store.asearch(("standing", "dana"))
        assert [i.value["content"] for i in found] == [
            "The user's standing instruction: Always answer in French."
        ]
        assert found[0].value["kind"] == "instruction"
        item = await store.aget(("standing", "dana"), found[0].key)
        assert item is not None
        assert item.value == found[0].value
        await store.aput(("standing", "dana"), "lang", {"content": "Reply in English."})
        await store.aput(("standing",), "fri", {"content": "Never deploy on Fridays."})
        shown = [i.value["content"] for i in await store.asearch(("standing", "dana"))]
        assert shown == ["Reply in English.", "Never deploy on Fridays."]
        assert [e.content for e in await engine.profile(user_id="dana").entries()] == shown
        assert await store.asearch(("standing", "eve")) != []  # the team rule only
        assert [i.value["content"] for i in await store.asearch(("standing", "eve"))] == [
            "Never deploy on Fridays."
        ]
        english = (await store.asearch(("standing", "dana")))[0]
        await store.adelete(("standing", "dana"), english.key)
        assert await store.aget(("standing", "dana"), english.key) is None
        with pytest.raises(InvalidInputError):
            await store.aput(("standing", "dana"), "x", {"text": "no content"})
        with pytest.raises(InvalidInputError):
            await store.aput(("standing", "dana", "more"), "x", {"content": "Be brief."})
