"""Changed instructions: does a change lift what it changes, and only that?

Usage:
    python -m evals.profile_changes [--out evals/results/profile_changes.json]

Method (issue 42, acceptance 1, "a changed instruction shows only its current form";
``docs/profile.md`` has the figures):

* Each pair is one user's conversation through ``MemoryBridge`` (the rule extractor, an
  in-memory engine, the fake embedder): the first statement in one session, the second in a
  later one. Then ``ctx.profile(user_id=...).entries()`` is read.
* :data:`DEV` (the pairs the change rules were written against) and :data:`HELD_OUT`
  (wordings written separately, after the rules, and run once) are changes: the first
  statement's entry must be gone from the profile (superseded, kept for ``as_of`` and revert),
  and the profile must show the words of the second.
* :data:`UNRELATED`: two instructions about different things, the second said with a change
  word where it fits ("actually", "now", "feel free to"); both must stay (a wrongly lifted
  first statement counts against the rules' precision).
* A pair whose first statement never entered the profile is reported apart (``not_entered``):
  it tests the instruction reader, not the change rules.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals._common import RESULTS, write_json
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder

DEFAULT_OUT = RESULTS / "profile_changes.json"


@dataclass(frozen=True, slots=True)
class Pair:
    """A first statement, a later one, and a word of each that only its own entry shows."""

    first: str
    second: str
    old: str
    new: str


DEV: tuple[Pair, ...] = (
    Pair("Never deploy on Fridays.", "Actually, you can deploy on Fridays now.", "Never", "can"),
    Pair(
        "Never deploy to production on Fridays.",
        "You can deploy on Fridays again.",
        "Never",
        "again",
    ),
    Pair("Please don't use emojis in your replies.", "Feel free to use emojis.", "don't", "free"),
    Pair("Never use emojis.", "It's fine to use emojis now.", "Never", "fine"),
    Pair(
        "Always end with a question to check I understood.",
        "No need to end with a question anymore.",
        "Always",
        "No need",
    ),
    Pair("Always cite your sources.", "Stop citing sources.", "Always", "Stop"),
    Pair(
        "Always include type hints in Python code.", "Stop including type hints.", "Always", "Stop"
    ),
    Pair(
        "Always answer in French.",
        "Forget what I said about answering in French.",
        "Always answer",
        "Forget",
    ),
    Pair(
        "Always use bullet points.",
        "Instead of bullet points, use numbered lists.",
        "Always",
        "numbered",
    ),
    Pair(
        "Never suggest Java for new services.",
        "I've changed my mind, you can suggest Java for new services.",
        "Never",
        "changed",
    ),
    Pair("Always answer in French.", "From now on answer in German.", "French", "German"),
    Pair("I prefer short answers.", "I now prefer long answers.", "short", "long"),
    Pair("Call me Dana.", "Call me Dee.", "Dana", "Dee"),
    Pair(
        "Always use a formal tone with me.",
        "Actually, a casual tone is fine from now on.",
        "formal",
        "casual",
    ),
    Pair(
        "Never mention my old employer.", "You can mention my old employer again.", "Never", "again"
    ),
    Pair(
        "Please don't recommend paid tools.",
        "Actually, feel free to recommend paid tools.",
        "don't",
        "free",
    ),
    Pair(
        "Always round money to two decimals.",
        "No need to round money anymore.",
        "Always",
        "No need",
    ),
    Pair(
        "Always explain acronyms the first time.",
        "You don't need to explain acronyms anymore.",
        "Always",
        "don't need",
    ),
    Pair(
        "Never use the passive voice.", "It's okay to use the passive voice again.", "Never", "okay"
    ),
    Pair(
        "From now on, keep code examples under 20 lines.",
        "Code examples can be longer now, forget the 20 lines rule.",
        "under 20",
        "longer",
    ),
    Pair(
        "In future, ask before you schedule anything.",
        "No need to ask before you schedule things anymore.",
        "In future",
        "No need",
    ),
    Pair(
        "Always give temperatures in Celsius.",
        "Actually, give temperatures in Fahrenheit now.",
        "Celsius",
        "Fahrenheit",
    ),
    Pair("Never use bullet points.", "From now on, always use bullet points.", "Never", "always"),
    Pair(
        "Always write dates as YYYY-MM-DD.", "Stop writing dates as YYYY-MM-DD.", "Always", "Stop"
    ),
    Pair(
        "Going forward, include a one-line summary at the top.",
        "Stop including the one-line summary.",
        "Going forward",
        "Stop",
    ),
    Pair(
        "Please always include unit tests in code answers.",
        "Forget what I said about unit tests.",
        "always include",
        "Forget",
    ),
    Pair(
        "Always use tabs for indentation.",
        "Instead of tabs, use four spaces for indentation.",
        "Always use tabs",
        "four spaces",
    ),
    Pair(
        "Never schedule meetings before 10am.",
        "I changed my mind about meetings before 10am, they are fine now.",
        "Never",
        "changed",
    ),
    Pair(
        "Always sign off with my initials.",
        "Don't sign off with my initials anymore.",
        "Always",
        "Don't",
    ),
    Pair(
        "Please never use exclamation marks.",
        "You may use exclamation marks again.",
        "never",
        "may",
    ),
    Pair("Always answer in Spanish.", "Reply in Italian from now on.", "Spanish", "Italian"),
    Pair(
        "Keep your answers short.", "Actually, I'd like detailed answers now.", "short", "detailed"
    ),
)
"""32 changes the rules were written against."""

HELD_OUT: tuple[Pair, ...] = (
    Pair(
        "Never book flights with a layover.",
        "Actually, you can book flights with a layover now.",
        "Never",
        "can",
    ),
    Pair(
        "Please don't use exclamation points.",
        "Feel free to use exclamation points.",
        "don't",
        "free",
    ),
    Pair(
        "Never schedule calls on Mondays.",
        "It's fine to schedule calls on Mondays now.",
        "Never",
        "fine",
    ),
    Pair("Always add a TL;DR at the end.", "No need to add a TL;DR anymore.", "Always", "No need"),
    Pair("Always bold the key terms.", "Stop bolding the key terms.", "Always", "Stop"),
    Pair("Always answer in Dutch.", "Forget what I said about Dutch.", "answer in Dutch", "Forget"),
    Pair(
        "Always use British spelling.",
        "Instead of British spelling, use American spelling.",
        "Always use British",
        "American",
    ),
    Pair(
        "Never recommend Windows laptops.",
        "I've changed my mind, you can recommend Windows laptops.",
        "Never",
        "changed",
    ),
    Pair(
        "Always reply in Portuguese.", "Going forward, reply in Swedish.", "Portuguese", "Swedish"
    ),
    Pair("I prefer concise answers.", "I now prefer thorough answers.", "concise", "thorough"),
    Pair("Call me Alex.", "Please call me Sasha.", "Alex", "Sasha"),
    Pair(
        "Never mention the budget in emails.",
        "You can mention the budget in emails again.",
        "Never",
        "again",
    ),
    Pair(
        "Please don't suggest Python libraries.",
        "Feel free to suggest Python libraries again.",
        "don't",
        "free",
    ),
    Pair(
        "Always convert prices to euros.",
        "You don't have to convert prices to euros anymore.",
        "Always",
        "don't have",
    ),
    Pair(
        "Always show the full stack trace.", "Stop showing the full stack trace.", "Always", "Stop"
    ),
    Pair("Never use abbreviations.", "Abbreviations are fine now.", "Never", "fine"),
    Pair(
        "From now on, write commit messages in the imperative.",
        "Forget the imperative commit messages rule.",
        "From now on",
        "Forget",
    ),
    Pair("Always greet me by name.", "No need to greet me by name anymore.", "Always", "No need"),
    Pair(
        "Never use semicolons in JavaScript.",
        "From now on, always use semicolons in JavaScript.",
        "Never",
        "always",
    ),
    Pair(
        "Always link the documentation.", "Please stop linking the documentation.", "Always", "stop"
    ),
    Pair(
        "Please always number the steps.",
        "Ignore what I said about numbering the steps.",
        "always number",
        "Ignore",
    ),
    Pair(
        "Always use spaces around operators.",
        "Instead of spaces around operators, keep operators tight.",
        "Always use spaces",
        "tight",
    ),
    Pair("Never plan anything on Sundays.", "I changed my mind about Sundays.", "Never", "changed"),
    Pair(
        "Always end emails with Best regards.",
        "Don't end emails with Best regards anymore.",
        "Always",
        "Don't",
    ),
    Pair("Never include code comments.", "You may include code comments again.", "Never", "may"),
    Pair("Respond in Japanese.", "Respond in Korean from now on.", "Japanese", "Korean"),
    Pair("Keep your replies brief.", "Actually, I'd like longer replies now.", "brief", "longer"),
    Pair(
        "Never use metric units.", "Okay, go ahead and use metric units now.", "Never", "go ahead"
    ),
    Pair(
        "Always ask me before deleting files.",
        "There's no need to ask me before deleting files anymore.",
        "Always",
        "no need",
    ),
    Pair(
        "Please don't mention competitors.",
        "It's okay to mention competitors now.",
        "don't",
        "okay",
    ),
    Pair("Always write tests first.", "Stop writing tests first.", "Always", "Stop"),
    Pair(
        "Never use dark mode screenshots.",
        "You're allowed to use dark mode screenshots now.",
        "Never",
        "allowed",
    ),
)
"""32 changes in wordings written after the rules, run once (see the module)."""

UNRELATED: tuple[Pair, ...] = (
    Pair(
        "Never deploy on Fridays.",
        "Feel free to deploy the docs site whenever.",
        "Never deploy",
        "",
    ),
    Pair("Never deploy on Fridays.", "Always use emojis now.", "Never deploy", ""),
    Pair("Always answer in French.", "Never use bullet points.", "answer in French", ""),
    Pair("Always answer in French.", "Actually, keep your answers short.", "answer in French", ""),
    Pair("I prefer short answers.", "Always answer in German.", "short answers", ""),
    Pair(
        "Please don't use emojis in your replies.",
        "Feel free to suggest paid tools.",
        "don't use emojis",
        "",
    ),
    Pair("Always cite your sources.", "Always cite page numbers too.", "cite your sources", ""),
    Pair(
        "Never suggest Java for new services.",
        "You can suggest Kotlin now.",
        "Never suggest Java",
        "",
    ),
    Pair(
        "Always include type hints in Python code.",
        "Stop using print statements for debugging.",
        "type hints",
        "",
    ),
    Pair("Never mention my old employer.", "You can mention my new job now.", "old employer", ""),
    Pair(
        "Always round money to two decimals.",
        "Actually, round distances to whole kilometres.",
        "round money",
        "",
    ),
    Pair(
        "Never use the passive voice.", "Feel free to use an informal voice.", "passive voice", ""
    ),
    Pair(
        "Always explain acronyms the first time.",
        "No need to explain jokes anymore.",
        "explain acronyms",
        "",
    ),
    Pair("Always write dates as YYYY-MM-DD.", "Stop writing long paragraphs.", "YYYY-MM-DD", ""),
    Pair(
        "In future, ask before you schedule anything.",
        "No need to ask how my day was anymore.",
        "schedule anything",
        "",
    ),
    Pair(
        "Never swear in code comments.",
        "Feel free to comment on my code style.",
        "swear in code comments",
        "",
    ),
    Pair(
        "Always end with a question to check I understood.",
        "Stop ending sentences with 'right?'.",
        "end with a question",
        "",
    ),
    Pair(
        "Please don't recommend paid tools.",
        "Feel free to recommend free courses.",
        "paid tools",
        "",
    ),
    Pair("Always use a formal tone with me.", "Stop using the word 'leverage'.", "formal tone", ""),
    Pair(
        "Never schedule meetings before 10am.",
        "You can schedule lunches again.",
        "meetings before 10am",
        "",
    ),
    Pair(
        "Always give temperatures in Celsius.",
        "Forget what I said about Python versions.",
        "Celsius",
        "",
    ),
    Pair(
        "From now on, keep code examples under 20 lines.",
        "You can use longer variable names now.",
        "under 20 lines",
        "",
    ),
    Pair("Never share my phone number.", "Feel free to share my blog posts.", "phone number", ""),
    Pair(
        "Always sign off with my initials.", "Stop signing me up for newsletters.", "initials", ""
    ),
    Pair(
        "Please never use exclamation marks.",
        "It's fine to use question marks in titles now.",
        "exclamation marks",
        "",
    ),
    Pair(
        "Always include unit tests in code answers.",
        "Instead of Jest, use Vitest for examples.",
        "unit tests",
        "",
    ),
    Pair(
        "Never book red-eye flights.",
        "You can book hotels near the airport again.",
        "red-eye flights",
        "",
    ),
    Pair(
        "Always use tabs for indentation.",
        "Feel free to use tables for comparisons.",
        "tabs for indentation",
        "",
    ),
    Pair(
        "Never mention the budget in emails.",
        "You can mention deadlines in emails now.",
        "budget in emails",
        "",
    ),
    Pair(
        "Always ask me before deleting files.",
        "Stop asking me for feedback on every answer.",
        "deleting files",
        "",
    ),
    Pair("Call me Dana.", "Always call the API with a timeout.", "Dana", ""),
    Pair("Always answer in Spanish.", "You can use Spanish examples now.", "answer in Spanish", ""),
)
"""32 pairs of instructions about different things: neither may lift the other."""


UNRELATED_HELD_OUT: tuple[Pair, ...] = (
    Pair("Never use emojis.", "Feel free to use GIFs in slides.", "Never use emojis", ""),
    Pair(
        "Always reply in English.",
        "You can reply to my emails tomorrow now.",
        "reply in English",
        "",
    ),
    Pair(
        "Never schedule calls on Mondays.",
        "You can schedule reviews on Tuesdays now.",
        "calls on Mondays",
        "",
    ),
    Pair("Always add a TL;DR at the end.", "Feel free to add jokes at the start.", "TL;DR", ""),
    Pair("Always bold the key terms.", "Stop bolding headings.", "key terms", ""),
    Pair(
        "Never recommend Windows laptops.",
        "You can recommend Linux desktops again.",
        "Windows laptops",
        "",
    ),
    Pair(
        "Always convert prices to euros.",
        "No need to convert times to UTC anymore.",
        "prices to euros",
        "",
    ),
    Pair(
        "Always show the full stack trace.", "Stop showing the full file path.", "stack trace", ""
    ),
    Pair("Never use abbreviations.", "Contractions are fine now.", "abbreviations", ""),
    Pair("Always greet me by name.", "No need to thank me anymore.", "greet me by name", ""),
    Pair(
        "Never use semicolons in JavaScript.",
        "Always use single quotes in JavaScript.",
        "semicolons",
        "",
    ),
    Pair(
        "Always link the documentation.",
        "Please stop linking Stack Overflow answers.",
        "link the documentation",
        "",
    ),
    Pair(
        "Please always number the steps.",
        "Forget what I said about naming the files.",
        "number the steps",
        "",
    ),
    Pair(
        "Never plan anything on Sundays.", "I changed my mind about Saturday brunch.", "Sundays", ""
    ),
    Pair(
        "Never include code comments.", "You may include commit hashes again.", "code comments", ""
    ),
    Pair(
        "Always ask me before deleting files.",
        "No need to ask me before renaming variables.",
        "deleting files",
        "",
    ),
    Pair(
        "Please don't mention competitors.", "It's okay to mention prices now.", "competitors", ""
    ),
    Pair("Always write tests first.", "Stop writing long commit messages.", "tests first", ""),
    Pair(
        "Never use dark mode screenshots.",
        "You're allowed to use stock photos now.",
        "dark mode",
        "",
    ),
    Pair(
        "Always use British spelling.",
        "Instead of Celsius, use Kelvin for physics.",
        "British spelling",
        "",
    ),
    Pair(
        "Never book flights with a layover.",
        "Actually, you can book trains with a stopover now.",
        "layover",
        "",
    ),
    Pair(
        "Please don't use exclamation points.",
        "Feel free to use bullet points.",
        "exclamation points",
        "",
    ),
    Pair(
        "Always end emails with Best regards.",
        "Don't start emails with Hi anymore.",
        "Best regards",
        "",
    ),
    Pair(
        "Never mention the budget in emails.",
        "You can mention the budget in meetings now.",
        "budget in emails",
        "",
    ),
    Pair("Always answer in Dutch.", "Stop answering with code only.", "answer in Dutch", ""),
    Pair("I prefer concise answers.", "Feel free to use tables.", "concise answers", ""),
    Pair("Call me Alex.", "Never call my manager directly.", "Alex", ""),
    Pair(
        "Always use spaces around operators.",
        "Feel free to use long operator names.",
        "spaces around operators",
        "",
    ),
    Pair("Never share my calendar.", "You can share my slides again.", "calendar", ""),
    Pair(
        "Always include a summary table.",
        "Stop including your confidence levels.",
        "summary table",
        "",
    ),
    Pair(
        "Never suggest meetings after 5pm.",
        "You can suggest lunch spots now.",
        "meetings after 5pm",
        "",
    ),
    Pair(
        "Always double-check the math.",
        "No need to double-space the letters anymore.",
        "double-check the math",
        "",
    ),
)
"""32 more unrelated pairs, written after the threshold was set on :data:`UNRELATED`, run once."""


async def _profile_after(first: str, second: str, user: str) -> tuple[list[str], list[str]]:
    """The profile's entries after ``first``, then after ``second`` too."""
    async with (
        ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx,
        MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            journal=False,
            save_episodes=False,
        ) as bridge,
    ):
        await bridge.process_message(first, session_id="s1", user_id=user)
        before = [e.content for e in await ctx.profile(user_id=user).entries()]
        await bridge.process_message(second, session_id="s2", user_id=user)
        after = [e.content for e in await ctx.profile(user_id=user).entries()]
    return before, after


def _shows(entries: Sequence[str], statement: str) -> bool:
    """An entry holds the statement's words (its content quotes the user)."""
    words = statement.casefold().strip(" .!")
    return any(words in entry.casefold() for entry in entries)


async def run_changes(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Each change: the old entry gone, the new one shown."""
    lifted = shown = entered = both = 0
    failures: list[dict[str, Any]] = []
    for index, pair in enumerate(pairs):
        before, after = await _profile_after(pair.first, pair.second, f"c{index}")
        if not any(pair.old.casefold() in entry.casefold() for entry in before):
            failures.append({"pair": [pair.first, pair.second], "why": "not entered"})
            continue
        entered += 1
        gone = not any(pair.old.casefold() in entry.casefold() for entry in after)
        now = any(pair.new.casefold() in entry.casefold() for entry in after)
        lifted += gone
        shown += now
        both += gone and now
        if not (gone and now):
            failures.append({"pair": [pair.first, pair.second], "profile": after})
    n = max(entered, 1)
    return {
        "pairs": len(pairs),
        "entered": entered,
        "old_form_gone": round(lifted / n, 4),
        "new_form_shown": round(shown / n, 4),
        "only_current_form": round(both / n, 4),
        "failures": failures,
    }


async def run_unrelated(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Each unrelated pair: both entries stay."""
    wrongly = entered = 0
    failures: list[dict[str, Any]] = []
    for index, pair in enumerate(pairs):
        before, after = await _profile_after(pair.first, pair.second, f"u{index}")
        if not _shows(before, pair.old):
            failures.append({"pair": [pair.first, pair.second], "why": "not entered"})
            continue
        entered += 1
        if not _shows(after, pair.old):
            wrongly += 1
            failures.append({"pair": [pair.first, pair.second], "profile": after})
    return {
        "pairs": len(pairs),
        "entered": entered,
        "wrongly_lifted": wrongly,
        "failures": failures,
    }


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    payload: dict[str, Any] = {
        "dev": await run_changes(DEV),
        "held_out": await run_changes(HELD_OUT),
        "unrelated": await run_unrelated(UNRELATED),
        "unrelated_held_out": await run_unrelated(UNRELATED_HELD_OUT),
    }
    payload["seconds"] = round(time.perf_counter() - started, 1)
    for name in ("dev", "held_out"):
        part = payload[name]
        print(
            f"{name}: {part['pairs']} changes ({part['entered']} entered): old form gone "
            f"{part['old_form_gone']:.3f}, new form shown {part['new_form_shown']:.3f}"
        )
    for name in ("unrelated", "unrelated_held_out"):
        part = payload[name]
        print(
            f"{name}: {part['pairs']} pairs ({part['entered']} entered), "
            f"wrongly lifted {part['wrongly_lifted']}"
        )
    write_json(args.out, payload)
    return payload


if __name__ == "__main__":
    asyncio.run(main())
