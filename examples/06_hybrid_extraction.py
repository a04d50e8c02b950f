"""06 hybrid extraction: the rules everywhere, the model only where the rules are unsure.

Plain statements ("I moved to Berlin") and plain non-facts ("thanks!") are settled by the rules;
only the rest goes to the model, which keeps cost and latency down. The stats show the share.

Run: python examples/06_hybrid_extraction.py        (offline scripted stand-in)
     SAGEWAI_MODEL=gpt-4o-mini python examples/06_hybrid_extraction.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _setup import chat_model, show_logs

from sagewai.extraction import ExtractionContext
from sagewai.intelligence import HybridFactExtractor, LLMFactExtractor, RuleBasedFactExtractor
from sagewai.testing import ScriptedLLM

MESSAGES = [
    "I moved to Berlin in March.",  # the rules are sure
    "Thanks, that helps a lot!",  # not a fact: nobody is asked
    "What time is it in Tokyo?",  # a question: nobody is asked
    "Ever since the marathon my knees complain on every staircase.",  # the rules are unsure
]


def stand_in_answer(messages: list[dict[str, Any]]) -> str:
    if "marathon" in messages[-1]["content"]:
        fact = {
            "content": "Jonas has knee pain since running a marathon.",
            "fact_type": "event",
            "confidence": 0.7,
            "subject": "Jonas",
            "predicate": None,
            "object": None,
            "negated": False,
            "exact_values": [],
            "event_time": None,
        }
        return json.dumps({"facts": [fact]})
    return json.dumps({"facts": []})


async def main() -> None:
    show_logs()
    client = chat_model(ScriptedLLM([stand_in_answer] * len(MESSAGES)))
    rules = RuleBasedFactExtractor()
    hybrid = HybridFactExtractor(
        rule_extractor=rules,
        llm_extractor=LLMFactExtractor(client=client, fallback=rules),
        llm_threshold=0.3,
    )
    context = ExtractionContext(speaker="Jonas", role="user")
    for message in MESSAGES:
        facts = await hybrid.extract(message, context)
        found = [f"{f.content} [{f.extractor}]" for f in facts] or ["(nothing)"]
        print(f"{message!r}\n   -> {'; '.join(found)}")
    stats = hybrid.stats
    print(
        f"\n{stats.sent_to_llm} of {stats.texts} messages went to the model "
        f"({stats.llm_share:.0%}); {stats.skipped_non_factual} were judged non-factual"
    )


if __name__ == "__main__":
    asyncio.run(main())
