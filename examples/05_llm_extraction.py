"""05 LLM extraction: a chat model reads the facts patterns miss; the rules catch its failures.

The model answers JSON (asked for with a schema); every item is validated on its own and exact
values are kept only when they occur verbatim in the message. When no model is reachable the
extractor says so once in the log and uses the rules, so a conversation loop never breaks.

Run: python examples/05_llm_extraction.py           (offline scripted stand-in)
     SAGEWAI_MODEL=gpt-4o-mini python examples/05_llm_extraction.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _setup import chat_model, show_logs

from sagewai.extraction import ExtractionContext
from sagewai.intelligence import LLMFactExtractor
from sagewai.llm import LiteLLMClient, allow_model_requests
from sagewai.testing import ScriptedLLM

MESSAGES = [
    "Honestly, nothing beats a flat white before my 9 o'clock stand-up.",
    "The kids and I finally settled into the new flat in Porto.",
    "ticket SUP-4471 is blocked until the vendor ships firmware 2.4.1",
]

# What a good model answers for the messages above (the stand-in plays these back).
CANNED: dict[str, list[dict[str, Any]]] = {
    "flat white": [
        {
            "content": "Priya's favourite coffee is a flat white.",
            "fact_type": "preference",
            "confidence": 0.8,
            "subject": "Priya",
            "predicate": "favorite_coffee",
            "object": "flat white",
            "negated": False,
            "exact_values": [],
            "event_time": None,
        },
    ],
    "Porto": [
        {
            "content": "Priya lives in Porto with her kids.",
            "fact_type": "general",
            "confidence": 0.85,
            "subject": "Priya",
            "predicate": "lives_in",
            "object": "Porto",
            "negated": False,
            "exact_values": [],
            "event_time": None,
        },
    ],
    "SUP-4471": [
        {
            "content": "Ticket SUP-4471 is blocked until the vendor ships firmware 2.4.1.",
            "fact_type": "event",
            "confidence": 0.9,
            "subject": "SUP-4471",
            "predicate": None,
            "object": None,
            "negated": False,
            "exact_values": ["SUP-4471", "2.4.1"],
            "event_time": None,
        },
    ],
}


def stand_in_answer(messages: list[dict[str, Any]]) -> str:
    asked = messages[-1]["content"]
    facts = next((facts for key, facts in CANNED.items() if key in asked), [])
    return json.dumps({"facts": facts})


async def main() -> None:
    show_logs()
    client = chat_model(ScriptedLLM([stand_in_answer] * len(MESSAGES)))
    extractor = LLMFactExtractor(client=client)
    context = ExtractionContext(speaker="Priya", role="user")
    for message in MESSAGES:
        facts = await extractor.extract(message, context)
        print(f"{message!r}")
        for fact in facts:
            print(f"   {fact.fact_type.value:10} {fact.content}  exact={list(fact.exact_values)}")
    print(f"stats: {extractor.stats}")

    print("\nno model reachable (model requests switched off, as with no key or no network):")
    with allow_model_requests(False):
        offline = LLMFactExtractor(client=LiteLLMClient("gpt-4o-mini"))
        for message in ("I work at Initech.", "I moved to Berlin."):
            facts = await offline.extract(message, context)
            print(f"   {message!r} -> {[f.content for f in facts]}  (rules fallback)")


if __name__ == "__main__":
    asyncio.run(main())
