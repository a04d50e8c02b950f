"""Standing instructions in every turn: is what the user asked once in front of the model later?

Usage:
    python -m evals.profile_bench [--later 10] [--profile-tokens 400]
        [--out evals/results/profile_bench.json]

Method (issue 42, acceptance 1; ``docs/profile.md`` has the figures):

* :data:`CASES`: 48 instructions, preferences and identity statements ("Always answer in
  French.", "Please don't use emojis in your replies.", "I'm vegetarian."), each with the words
  that must reach the model. Each case is one user's conversation with ``UniversalAgent`` (the
  scripted model of ``sagewai.testing``, the default bridge, an in-memory engine): two turns of
  other talk, the statement said once inside a turn of other talk, then ``--later`` unrelated
  requests (:data:`REQUESTS`, a different rotation for each case).
* Each user's memory holds ``--history`` earlier statements (synthetic sentences about
  people and things, stored as plain facts), so the memory block has to choose.
* For every later turn: is the statement's text in the system message the model was shown, is
  it in the profile section, and does the section stay within ``--profile-tokens`` (counted
  with the agent's own counter)? The same cases run with ``profile_tokens=0`` (the memory block
  alone, recalled by similarity to each request: the behaviour before issue 42) in the same run.
* One user saying all the statements (``one_user_all_statements``): how many entries the
  section holds within its budget (instructions come first).
* :data:`CHANGES`: 21 instructions changed later in the conversation ("Actually, answer in
  English.", "Actually, you can deploy on Fridays now."); after the change, ``--later``
  further turns must show the new form and never the old one in the profile section.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals._common import RESULTS, synthetic_sentences, write_json
from sagewai import ContextEngine, UniversalAgent
from sagewai.agent import estimate_tokens
from sagewai.testing import FakeEmbedder, ScriptedLLM

DEFAULT_OUT = RESULTS / "profile_bench.json"


@dataclass(frozen=True, slots=True)
class Case:
    """A statement and the words of it that must reach the model."""

    said: str
    shown: str
    kind: str


def _i(said: str, shown: str) -> Case:
    return Case(said, shown, "instruction")


CASES: tuple[Case, ...] = (
    _i("Always answer in French.", "Always answer in French"),
    _i("From now on, reply in German.", "reply in German"),
    _i("Please respond only in Spanish.", "respond only in Spanish"),
    _i("I prefer short answers.", "I prefer short answers"),
    _i("Keep your answers brief.", "Keep your answers brief"),
    _i("I'd like detailed explanations with examples.", "detailed explanations"),
    _i("Please don't use emojis in your replies.", "don't use emojis"),
    _i("Never use bullet points.", "Never use bullet points"),
    _i("Always format code in Python.", "Always format code in Python"),
    _i("From now on, use metric units.", "use metric units"),
    _i("Always give temperatures in Celsius.", "temperatures in Celsius"),
    _i("Never deploy on Fridays.", "Never deploy on Fridays"),
    _i("Always cite your sources.", "Always cite your sources"),
    _i("Going forward, include a one-line summary at the top.", "one-line summary at the top"),
    _i("Please stop apologising in every answer.", "stop apologising"),
    _i("Never suggest Java for new services.", "Never suggest Java"),
    _i("Always use a formal tone with me.", "formal tone"),
    _i("From now on, spell colour the British way.", "spell colour the British way"),
    _i("Whenever you write SQL, use uppercase keywords.", "uppercase keywords"),
    _i("Please don't recommend paid tools.", "don't recommend paid tools"),
    _i("Always round money to two decimals.", "round money to two decimals"),
    _i("Never mention my old employer.", "Never mention my old employer"),
    _i("In future, ask before you schedule anything.", "ask before you schedule anything"),
    _i("Always write dates as YYYY-MM-DD.", "YYYY-MM-DD"),
    _i("Don't ever share my phone number.", "share my phone number"),
    _i("Always end with a question to check I understood.", "end with a question"),
    _i("Never use the passive voice.", "Never use the passive voice"),
    _i("From now on, keep code examples under 20 lines.", "under 20 lines"),
    _i("Please always include type hints in Python code.", "include type hints"),
    _i("Always explain acronyms the first time.", "explain acronyms"),
    Case("Call me Dana.", "Dana", "identity"),
    Case("My name is Priya.", "Priya", "identity"),
    Case("I work at Initech as a data engineer.", "Initech", "identity"),
    Case("I live in Lisbon.", "Lisbon", "identity"),
    Case("I'm vegetarian.", "vegetarian", "identity"),
    Case("I'm allergic to peanuts.", "peanuts", "identity"),
    Case("I speak Portuguese and English.", "Portuguese", "identity"),
    Case("I'm from Kenya.", "Kenya", "identity"),
    Case("I prefer tea over coffee.", "tea", "preference"),
    Case("I love jazz.", "jazz", "preference"),
    Case("I hate long meetings.", "long meetings", "preference"),
    Case("I prefer window seats on flights.", "window seats", "preference"),
    Case("My favorite editor is Vim.", "Vim", "preference"),
    Case("I like hiking on weekends.", "hiking", "preference"),
    Case("I prefer PostgreSQL over MySQL.", "PostgreSQL", "preference"),
    Case("I enjoy Japanese food.", "Japanese food", "preference"),
    Case("I prefer morning meetings.", "morning meetings", "preference"),
    Case("I love science fiction novels.", "science fiction", "preference"),
)
"""48 statements: 30 instructions, 8 identity facts, 10 preferences."""

CHANGES: tuple[tuple[str, str, str, str], ...] = (
    ("Always answer in French.", "Actually, answer in English.", "French", "answer in English"),
    ("I prefer short answers.", "Actually, I prefer detailed answers.", "short", "detailed"),
    ("From now on, use metric units.", "Going forward, use imperial units.", "metric", "imperial"),
    ("Never use emojis.", "From now on, always use emojis.", "Never use emojis", "always use emoj"),
    ("Always use a formal tone.", "Actually, always use a casual tone.", "formal", "casual"),
    ("Never deploy on Fridays.", "Okay, always deploy on Fridays now.", "Never deploy", "always"),
    ("Call me Dana.", "Actually, call me Dee.", "Dana", "Dee"),
    ("Reply in Spanish.", "From now on, reply in Italian.", "Spanish", "Italian"),
    ("Always use bullet points.", "Never use bullet points.", "Always use bullet", "Never use"),
    ("Keep your answers short.", "Keep your answers detailed.", "short", "detailed"),
    ("Always write code in Python.", "Always write code in Rust.", "Python", "Rust"),
    ("Always use tables.", "From now on, use plain text, not tables.", "Always use", "plain text"),
    ("Never deploy on Fridays.", "Actually, you can deploy on Fridays now.", "Never", "can deploy"),
    ("Please don't use emojis.", "Feel free to use emojis.", "don't use", "Feel free"),
    ("Always cite your sources.", "Stop citing sources.", "Always cite", "Stop citing"),
    (
        "Always end with a question.",
        "No need to end with a question anymore.",
        "Always end",
        "No need",
    ),
    (
        "Always answer in French.",
        "Forget what I said about answering in French.",
        "Always answer",
        "Forget what",
    ),
    (
        "Always use bullet points.",
        "Instead of bullet points, use numbered lists.",
        "Always use",
        "numbered lists",
    ),
    ("I prefer short answers.", "I now prefer long answers.", "short", "long answers"),
    ("Always answer in French.", "From now on answer in German.", "French", "German"),
    (
        "Never suggest Java.",
        "I've changed my mind, you can suggest Java.",
        "Never suggest",
        "changed my mind",
    ),
)
"""21 changes: (first, changed, a word only the first shows, a word the current form shows);
the last nine change in words that name no aspect ("you can X now", "feel free to X", "stop
X-ing", "no need to X anymore", "forget what I said about X", "instead of X, Y", "I've
changed my mind"), see ``evals.profile_changes``."""

OTHER_TALK = (
    "Thanks for yesterday's help with the report.",
    "The weather has been odd this week.",
    "I had a long day at work.",
    "My cat knocked over a plant this morning.",
)
REQUESTS: tuple[str, ...] = (
    "Explain how TCP congestion control works.",
    "Write a haiku about autumn rain.",
    "What is the difference between a process and a thread?",
    "Suggest a name for a bakery.",
    "How do I reverse a linked list?",
    "Summarise the causes of the French Revolution.",
    "What's a good stretch for a stiff back?",
    "How does a hash map handle collisions?",
    "Give me three ideas for a team offsite.",
    "What is photosynthesis?",
    "How do vaccines train the immune system?",
    "Draft a polite reminder email about an unpaid invoice.",
    "What is the capital of Australia?",
    "Explain the CAP theorem.",
    "How long should I boil an egg?",
    "What are monads, in plain words?",
    "Recommend a board game for four players.",
    "How do I centre a div in CSS?",
    "What causes the seasons?",
    "Write a limerick about a database.",
)


@dataclass(slots=True)
class Tally:
    """Later turns counted for one configuration."""

    turns: int = 0
    in_prompt: int = 0
    in_section: int = 0
    over_budget: int = 0
    section_tokens: list[int] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        tokens = self.section_tokens or [0]
        return {
            "later_turns": self.turns,
            "in_prompt": round(self.in_prompt / max(self.turns, 1), 4),
            "in_profile_section": round(self.in_section / max(self.turns, 1), 4),
            "section_over_budget": self.over_budget,
            "section_tokens_mean": round(statistics.fmean(tokens), 1),
            "section_tokens_max": max(tokens),
            "missed": self.missed[:20],
        }


def _requests(index: int, count: int) -> list[str]:
    return [REQUESTS[(index * 7 + step) % len(REQUESTS)] for step in range(count)]


async def _conversation(
    turns: Sequence[str], *, profile_tokens: int, user: str, history: int = 0
) -> list[tuple[str, str, int]]:
    """Each turn's system message, profile section and its tokens (after ``history`` earlier
    statements of the user, stored as plain memory)."""
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        if history:
            await ctx.add_many(
                [{"content": text, "user_id": user} for text in synthetic_sentences(history)]
            )
        llm = ScriptedLLM(["Noted."] * len(turns))
        shown: list[tuple[str, str, int]] = []
        async with UniversalAgent(
            name="helper", context=ctx, llm=llm, user_id=user, profile_tokens=profile_tokens
        ) as agent:
            for text in turns:
                reply = await agent.respond(text)
                system = llm.calls[-1].messages[0]["content"]
                shown.append((system, reply.profile.text, reply.profile.tokens))
        return shown


async def run_cases(
    later: int, profile_tokens: int, history: int, *, baseline: bool = True
) -> dict[str, Tally]:
    """Every case with the profile on and (``baseline``) off; later turns tallied."""
    tallies = {"profile": Tally(), "memory_block_only": Tally()}
    configurations = [("profile", profile_tokens)] + ([("memory_block_only", 0)] * baseline)
    for index, case in enumerate(CASES):
        talk = OTHER_TALK[index % len(OTHER_TALK)]
        turns = [
            "Hi, I have a few questions today.",
            talk,
            f"{talk} {case.said} Anyway, let's get started.",
            *_requests(index, later),
        ]
        for name, budget in configurations:
            tally = tallies[name]
            for system, section, tokens in (
                await _conversation(
                    turns, profile_tokens=budget, user=f"user-{index}", history=history
                )
            )[3:]:
                tally.turns += 1
                tally.in_prompt += case.shown.casefold() in system.casefold()
                tally.in_section += case.shown.casefold() in section.casefold()
                tally.over_budget += tokens > budget or estimate_tokens(section) > budget
                tally.section_tokens.append(tokens)
                if case.shown.casefold() not in system.casefold():
                    tally.missed.append(case.said)
    return tallies


async def run_changes(later: int, profile_tokens: int) -> dict[str, Any]:
    """Changed instructions: after the change, only the current form is in the section."""
    turns_checked = current_shown = old_shown = 0
    failures: list[str] = []
    for index, (first, changed, old_word, new_word) in enumerate(CHANGES):
        turns = [
            first,
            *_requests(index, 3),
            f"{OTHER_TALK[index % len(OTHER_TALK)]} {changed}",
            *_requests(index + 5, later),
        ]
        shown = await _conversation(turns, profile_tokens=profile_tokens, user=f"change-{index}")
        for _, section, _ in shown[5:]:
            turns_checked += 1
            now = new_word.casefold() in section.casefold()
            then = old_word.casefold() in section.casefold()
            current_shown += now
            old_shown += then
            if then or not now:
                failures.append(f"{first} -> {changed}: {section[-160:]!r}")
    return {
        "changes": len(CHANGES),
        "later_turns": turns_checked,
        "current_form_shown": round(current_shown / max(turns_checked, 1), 4),
        "old_form_shown": round(old_shown / max(turns_checked, 1), 4),
        "failures": failures[:20],
    }


async def run_one_user(profile_tokens: int) -> dict[str, Any]:
    """All the statements said by one user: how many entries the section holds in its budget."""
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        llm = ScriptedLLM(["Noted."] * (len(CASES) + 1))
        async with UniversalAgent(
            name="helper", context=ctx, llm=llm, user_id="one", profile_tokens=profile_tokens
        ) as agent:
            for case in CASES:
                await agent.chat(case.said)
            reply = await agent.respond(REQUESTS[0])
        entries = await ctx.profile(user_id="one").entries()
        instructions = [c for c in CASES if c.kind == "instruction"]
        shown = sum(c.shown.casefold() in reply.profile.text.casefold() for c in instructions)
        return {
            "statements": len(CASES),
            "profile_entries": len(entries),
            "entries_in_section": len(reply.profile.fact_ids),
            "instructions_in_section": shown,
            "instructions": len(instructions),
            "section_tokens": reply.profile.tokens,
        }


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--later", type=int, default=10)
    parser.add_argument("--profile-tokens", type=int, default=400)
    parser.add_argument(
        "--history", type=int, default=200, help="earlier statements in each user's memory"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tallies = await run_cases(args.later, args.profile_tokens, args.history)
    changes = await run_changes(args.later, args.profile_tokens)
    one_user = await run_one_user(args.profile_tokens)
    kinds: dict[str, int] = {}
    for case in CASES:
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
    payload = {
        "cases": len(CASES),
        "kinds": kinds,
        "later_requests_per_case": args.later,
        "profile_tokens": args.profile_tokens,
        "history_statements": args.history,
        "with_profile": tallies["profile"].summary(),
        "memory_block_only": tallies["memory_block_only"].summary(),
        "changed_instructions": changes,
        "one_user_all_statements": one_user,
        "seconds": round(time.perf_counter() - started, 1),
    }
    on, off = payload["with_profile"], payload["memory_block_only"]
    print(f"{len(CASES)} statements x {args.later} later requests, budget {args.profile_tokens}")
    print(f"  in the prompt, memory block only: {off['in_prompt']:.3f}")
    print(f"  in the prompt, with the profile:  {on['in_prompt']:.3f}")
    print(f"  in the profile section:           {on['in_profile_section']:.3f}")
    print(
        f"  section tokens: mean {on['section_tokens_mean']}, max {on['section_tokens_max']}, "
        f"over budget {on['section_over_budget']}"
    )
    print(
        f"  changed instructions ({changes['changes']}, {changes['later_turns']} later turns): "
        f"current form {changes['current_form_shown']:.3f}, "
        f"old form {changes['old_form_shown']:.3f}"
    )
    print(
        f"  one user, all {one_user['statements']} statements: {one_user['profile_entries']} "
        f"entries, {one_user['entries_in_section']} in the section ({one_user['section_tokens']}"
        f" tokens), instructions {one_user['instructions_in_section']} of "
        f"{one_user['instructions']}"
    )
    write_json(args.out, payload)
    return payload


if __name__ == "__main__":
    asyncio.run(main())
