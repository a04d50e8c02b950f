"""27 LlamaIndex: a memory block for ``Memory`` and a retriever over a project.

``SagewaiMemoryBlock`` is a long-term block of LlamaIndex's ``Memory``: the turns that leave
the short-term window go to sagewai as the user's, and each turn the block recalls what is
relevant. ``SagewaiRetriever`` reads a project (a user's and the project's facts) for any
LlamaIndex query engine. Each user has their own ``Memory`` and block: Leo never sees Maya's.

The model is LlamaIndex's own ``MockFunctionCallingLLM`` with scripted answers, offline.

Needs: pip install "sagewai[llama-index]"
Run: python examples/27_llama_index.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from _setup import example_folder
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from sagewai import ContextEngine
from sagewai.integrations.llama_index import SagewaiMemoryBlock, SagewaiRetriever


def scripted_answer(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
    system = "\n".join(str(m.content) for m in messages if m.role == MessageRole.SYSTEM)
    if "bee hives" in system:
        return ChatMessage(role="assistant", content="On your roof, where your bee hives are.")
    asked = str(messages[-1].content).rstrip().endswith("?")
    return ChatMessage(role="assistant", content="I don't know yet." if asked else "Noted.")


def user_memory(engine: ContextEngine, user: str) -> Memory:
    return Memory.from_defaults(
        session_id=f"{user}-chat",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[SagewaiMemoryBlock(engine=engine, user_id=user)],
    )


async def main() -> None:
    print("model: LlamaIndex's MockFunctionCallingLLM with scripted answers, offline")
    with example_folder("27_llama_index") as folder:
        async with ContextEngine.local(folder, project_id="garden") as ctx:
            agent = FunctionAgent(
                tools=[], llm=MockFunctionCallingLLM(response_generator=scripted_answer)
            )
            maya = user_memory(ctx, "maya")
            for text in [
                "I keep three bee hives on the roof of my flat.",
                "The hives are painted yellow and blue.",
                "My neighbour Otto helps with the honey harvest.",
            ]:
                await agent.run(text, memory=maya)
            print(f"maya's older turns now in sagewai: {await ctx.count()} records")
            for user, memory in [("maya", maya), ("leo", user_memory(ctx, "leo"))]:
                answer = await agent.run("Where do I keep bees?", memory=memory)
                print(f"{user}: Where do I keep bees?\n  agent: {answer}")

            await ctx.add("Honey is harvested in late August", fact_type="event")
            retriever = SagewaiRetriever(ctx, user_id="maya", top_k=3)
            for found in await retriever.aretrieve("bee hives honey"):
                print(f"retrieved ({found.node.metadata['scope']}): {found.node.get_content()}")
            leo = SagewaiRetriever(ctx, user_id="leo", top_k=3)
            print(
                f"leo retrieves: {[n.node.get_content() for n in await leo.aretrieve('bee hives')]}"
            )


if __name__ == "__main__":
    asyncio.run(main())
