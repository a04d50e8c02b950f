"""28 AutoGen: an AgentChat assistant whose memory is sagewai, one ``SagewaiMemory`` per user.

``SagewaiMemory`` implements AutoGen's ``Memory`` protocol: before each model call the agent
asks it to update the model context, and it adds the user's relevant memories (and the
project's) as one system message. Maya's allergy reaches her assistant, never Leo's.

The model is AutoGen's own ``ReplayChatCompletionClient``, offline; runtime tracing is off
(``AUTOGEN_DISABLE_RUNTIME_TRACING=true``).

Needs: pip install "sagewai[autogen]" autogen-ext
Run: python examples/28_autogen_memory.py
"""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("AUTOGEN_DISABLE_RUNTIME_TRACING", "true")

from _setup import example_folder
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_ext.models.replay import ReplayChatCompletionClient

from sagewai import ContextEngine
from sagewai.integrations.autogen import SagewaiMemory


async def main() -> None:
    print("model: AutoGen's ReplayChatCompletionClient, offline")
    with example_folder("28_autogen_memory") as folder:
        async with ContextEngine.local(folder, project_id="canteen") as ctx:
            await ctx.add("The canteen serves lunch from 12:00 to 14:00")  # everyone's
            maya_memory = SagewaiMemory(ctx, user_id="maya")
            await maya_memory.add(
                MemoryContent(content="Maya is allergic to peanuts", mime_type=MemoryMimeType.TEXT)
            )
            for user, reply in [("maya", "Skip the satay: it has peanuts."), ("leo", "Enjoy it.")]:
                agent = AssistantAgent(
                    "chef",
                    model_client=ReplayChatCompletionClient([reply]),
                    memory=[SagewaiMemory(ctx, user_id=user)],
                )
                result = await agent.run(task="Can I eat the peanut satay at lunch?")
                recalled = [
                    str(item.content)
                    for event in result.messages
                    if isinstance(event, MemoryQueryEvent)
                    for item in event.content
                ]
                print(f"{user}: Can I eat the peanut satay at lunch?")
                print(f"  recalled before the model: {recalled}")
                print(f"  agent: {result.messages[-1].content}")


if __name__ == "__main__":
    asyncio.run(main())
