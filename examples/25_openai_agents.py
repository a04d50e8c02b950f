"""25 OpenAI Agents SDK: an agent whose sessions and memory tools live in sagewai.

``SagewaiSession`` is the SDK's ``Session``: each session's items are kept per user and session.
``memory_tools`` gives the agent ``search_memory``, ``remember`` and ``forget_memory`` over the
run's user's long-term memory (``Runner.run(..., context={"user_id": ...})``). Maya's memory is
never shown to Leo, even in a session of the same id.

The model is the SDK's own scripted test model (``agents.testing.ScriptedModel``), so the
example runs offline; tracing is off (``OPENAI_AGENTS_DISABLE_TRACING=1``).

Needs: pip install "sagewai[openai-agents]"
Run: python examples/25_openai_agents.py
"""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from _setup import example_folder
from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message, function_call

from sagewai import ContextEngine
from sagewai.integrations.openai_agents import SagewaiSession, conversation_item_text, memory_tools


async def main() -> None:
    print("model: the SDK's ScriptedModel, offline")
    model = ScriptedModel(
        [
            [function_call("remember", {"content": "Maya is vegetarian"}, call_id="c1")],
            [assistant_message("Noted: no meat for you.")],
            [function_call("search_memory", {"query": "diet vegetarian"}, call_id="c2")],
            [assistant_message("A mushroom risotto, as you're vegetarian.")],
            [function_call("search_memory", {"query": "diet vegetarian"}, call_id="c3")],
            [assistant_message("I don't know your diet yet.")],
        ]
    )
    with example_folder("25_openai_agents") as folder:
        async with ContextEngine.local(folder, project_id="assistant") as ctx:
            agent = Agent(
                name="cook",
                instructions="Use memory to personalise.",
                model=model,
                tools=memory_tools(ctx),
            )
            for user, session_id, text in [
                ("maya", "chat-1", "I'm vegetarian, by the way."),
                ("maya", "chat-2", "What should I cook tonight?"),
                ("leo", "chat-1", "What should I cook tonight?"),
            ]:
                session = SagewaiSession(session_id, ctx, user_id=user)
                result = await Runner.run(agent, text, context={"user_id": user}, session=session)
                print(f"{user} ({session_id}): {text}\n  agent: {result.final_output}")
                last = model.last_call
                outputs = [
                    i["output"] for i in last.input if i.get("type") == "function_call_output"
                ]
                print(f"  tool said: {outputs}")

            maya = await SagewaiSession("chat-1", ctx, user_id="maya").get_items()
            leo = await SagewaiSession("chat-1", ctx, user_id="leo").get_items()
            print(
                f"maya's chat-1 holds {len(maya)} items, first: {conversation_item_text(maya[0])!r}"
            )
            print(f"leo's chat-1 holds {len(leo)} items, first: {conversation_item_text(leo[0])!r}")
            print(f"leo's recall of 'vegetarian': {await ctx.search('vegetarian', user_id='leo')}")


if __name__ == "__main__":
    asyncio.run(main())
