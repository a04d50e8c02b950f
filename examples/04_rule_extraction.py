"""04 rule extraction: facts read from chat messages by English patterns, offline and fast.

The rules give each fact a type, a confidence and, where it can be read off, a triple
(subject, predicate, object) that later makes contradictions decidable. Questions, hedges and
greetings give nothing.

Run: python examples/04_rule_extraction.py
"""

from __future__ import annotations

import asyncio

from sagewai.extraction import ExtractionContext
from sagewai.intelligence import RuleBasedFactExtractor

MESSAGES = [
    "I moved to Lisbon last month and I work at Initech.",
    "My favourite editor is Neovim.",
    "We decided to use PostgreSQL 16 for the billing service.",
    "I'll send the report by Friday.",
    "Maybe I'll learn Rust someday.",
    "What's the weather like?",
    "Thanks, that's great!",
]


async def main() -> None:
    extractor = RuleBasedFactExtractor()
    context = ExtractionContext(speaker="Priya", role="user")
    for message in MESSAGES:
        facts = await extractor.extract(message, context)
        print(f"{message!r}")
        if not facts:
            print("   (nothing worth remembering)")
        for fact in facts:
            print(
                f"   {fact.fact_type.value:10} {fact.confidence:.2f} {fact.content}  {fact.triple}"
            )


if __name__ == "__main__":
    asyncio.run(main())
