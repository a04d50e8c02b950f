"""22 LangGraph store: a compiled LangGraph agent keeps its long-term memory in sagewai.

``SagewaiStore`` is LangGraph's ``BaseStore`` over a ``ContextEngine``: ``graph.compile(store=...)``
gives every node and tool (LangMem's too) sagewai's hybrid search, scopes and audit history.
The namespace ``("users", user_id, ...)`` stores at that user's scope, so what one user's graph
remembers is never recalled for another; so does any namespace holding the run's user id, such
as LangMem's ``("profile", "{langgraph_user_id}")``. The recall hook, a node before the model,
recalls before each model call; with ``langchain.agents.create_agent`` the same is a middleware.

The chat model here is a scripted stand-in (langchain-core's FakeMessagesListChatModel), so the
example runs offline; put any LangChain chat model in its place.

Needs: pip install "sagewai[langgraph]"
Run: python examples/22_langgraph_store.py
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any, TypedDict

from _setup import example_folder
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from sagewai import ContextEngine
from sagewai.integrations.langgraph import (
    SagewaiRecallMiddleware,
    SagewaiStore,
    make_recall_hook,
)


class ShowingModel(FakeMessagesListChatModel):
    """The scripted stand-in, printing the memories its system message was given."""

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        if messages and messages[0].type == "system":
            print(f"  [system message before the model] {messages[0].content.splitlines()[-1]}")
        return super()._generate(messages, *args, **kwargs)


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]


def build_agent(ctx: ContextEngine, store: SagewaiStore, model: Any) -> Any:
    async def save_memory(content: str, config: RunnableConfig) -> str:
        """Remember one fact about the user for later conversations."""
        user_id = config["configurable"]["user_id"]
        key = str(uuid.uuid5(uuid.NAMESPACE_URL, content))
        await store.aput(("users", user_id, "memories"), key, {"content": content})
        return "saved"

    async def agent(state: State) -> State:
        prompt = state["llm_input_messages"]
        if prompt and prompt[0].type == "system":
            print(f"  [recalled before the model] {prompt[0].content.splitlines()[1:]}")
        return {"messages": [await model.ainvoke(prompt)]}

    tool = StructuredTool.from_function(coroutine=save_memory, name="save_memory")
    builder = StateGraph(State)
    builder.add_node("recall", make_recall_hook(ctx))
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "recall")
    return builder.compile(store=store)


async def main() -> None:
    print("model: a scripted stand-in (FakeMessagesListChatModel), offline")
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "save_memory",
                        "args": {"content": "Maya is vegetarian"},
                        "id": "call-1",
                    }
                ],
            ),
            AIMessage(content="Noted, no meat for you."),
            AIMessage(content="How about a mushroom risotto? You're vegetarian."),
            AIMessage(content="I don't know your diet yet."),
        ]
    )
    with example_folder("22_langgraph_store") as folder:
        async with ContextEngine.local(folder, project_id="assistant") as ctx:
            store = SagewaiStore(ctx)
            graph = build_agent(ctx, store, model)
            for thread, user, text in [
                ("t1", "maya", "I'm vegetarian, by the way."),
                ("t2", "maya", "What should I cook tonight?"),
                ("t3", "leo", "What should I cook tonight?"),
            ]:
                config = {"configurable": {"user_id": user, "thread_id": thread}}
                print(f"{user} ({thread}): {text}")
                out = await graph.ainvoke({"messages": [HumanMessage(text)]}, config)
                print(f"  agent: {out['messages'][-1].content}")

            # The same memory through the store API, and through sagewai's own engine.
            found = await store.asearch(("users", "maya"), query="diet")
            print(f"store.search(('users', 'maya'), 'diet') -> {[i.value for i in found]}")
            print(f"namespaces: {await store.alist_namespaces()}")
            fact = (await ctx.search("vegetarian", user_id="maya"))[0].fact
            print(f"sagewai sees it as a {fact.scope.value} fact of {fact.user_id}: {fact.content}")
            others = await ctx.search("vegetarian", user_id="leo")
            print(f"leo's recall of it: {[r.fact.content for r in others]}")

            # LangGraph 1.0's prebuilt agent is langchain.agents.create_agent: recall is a
            # middleware adding the user's memories to the system message of each model call.
            agent = create_agent(
                ShowingModel(responses=[AIMessage(content="A chickpea salad: no meat.")]),
                [],
                system_prompt="You are a cook.",
                middleware=[SagewaiRecallMiddleware(ctx)],
                store=store,
            )
            config = {"configurable": {"user_id": "maya", "thread_id": "t4"}}
            out = await agent.ainvoke(
                {"messages": [HumanMessage("What should I eat for lunch?")]}, config
            )
            print(f"create_agent for maya: {out['messages'][-1].content}")


if __name__ == "__main__":
    asyncio.run(main())
