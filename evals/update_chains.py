"""Update chains: a value said, then changed twice, days apart; does memory tell the truth now?

Usage:
    python -m evals.update_chains [--chains 66] [--seed 7] [--templates dev|heldout|fresh|all]
        [--wordings FILE]
        [--backend local|memory|postgres] [--dsn postgresql://...] [--out FILE]

Each chain is one kind of change (a home, an employer, a service's database, a meeting day, an
editor, a runtime version, a manager, a phone number, an e-mail address, a team, a car) said of
one subject (the user, "we" and a thing of ours, or a named person) with three values: a first
statement, then two changes, each days after the last (explicit message timestamps), each in its
own session, with other talk between. The sentences come from templates, several per kind and
subject, in three sets: ``dev`` (what the rules were written against), ``heldout`` (other
wordings, kept apart, then looked at when the rules missed them) and ``fresh`` (wordings written
after that, never used to tune a rule: the figure to trust). ``--seed`` picks other kinds,
subjects, values, wordings, gaps and filler.

Each chain goes through the seed's wiring (``MemoryBridge.process_message`` on a
``ContextEngine``, each chain as its own user), then three checks:

* ``block``: the agent's memory block (``UniversalAgent`` with a scripted model, asked the
  chain's question) holds the current value, and no line at or above the first line holding it
  names an older value unmarked (without ``was:`` or ``changed:``);
* ``search``: the first result of ``ctx.search(question)`` carries the current value;
* ``as_of``: for each change, ``ctx.search(question, as_of=...)`` at a time between the
  statement before it and the change carries the value that held then.

Prints a table per kind and writes JSON (``evals/results/update_chains.json`` by default).
The generator (:func:`generate`) and the checks (:func:`run_chains`) are also used by
``tests/test_update_chains.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evals._common import RESULTS
from sagewai import Fact, FactKind

DATA = Path(__file__).parent / "data"
"""The ``blind`` wordings (``update_chains_blind.json``): written by someone who never read the
rules, from the kinds and subjects alone."""

_CONTEXT_MARK = "context_chars"
"""Metadata key of the bridge's context record: how many leading characters of its content are
the end of the turn before the message (the message follows, verbatim)."""

# --------------------------------------------------------------------------- the templates

# Placeholders: {v} the value said, {old} the value before it, {who} a named person,
# {thing} a thing of ours (a service, a meeting).


@dataclass(frozen=True)
class Form:
    """One kind of change said of one kind of subject: how it is stated, changed and asked."""

    subject: str
    """``first`` (I, my), ``we`` (we, our, the ...) or ``named`` (Priya, Priya's)."""
    state: dict[str, tuple[str, ...]]
    """Split name -> wordings of the first statement."""
    change: dict[str, tuple[str, ...]]
    """Split name -> wordings of a change."""
    question: str


@dataclass(frozen=True)
class Kind:
    name: str
    values: tuple[tuple[str, ...], ...]
    """Families of values; a chain draws its three from one family, in order when ``ordered``."""
    forms: tuple[Form, ...]
    things: tuple[str, ...] = ()
    ordered: bool = False


_NAMES = (
    "Priya", "Marco", "Lena", "Kenji", "Amara", "Jonas", "Sofia", "Ravi", "Elif", "Noah",
    "Ingrid", "Tariq",
)  # fmt: skip

KINDS: tuple[Kind, ...] = (
    Kind(
        "home",
        (("Berlin", "Munich", "Lisbon", "Porto", "Vienna", "Oslo", "Madrid", "Dublin", "Zurich"),),
        (
            Form(
                "first",
                {
                    "dev": (
                        "I live in {v}.",
                        "I'm based in {v}.",
                        "I live in {v} with my partner.",
                    ),
                    "heldout": ("Home for me is {v} at the moment, I live there.",),
                    "fresh": ("I'm living in {v} right now.", "My flat is in {v}."),
                },
                {
                    "dev": (
                        "Big news: I moved to {v} last week.",
                        "I relocated to {v}.",
                        "These days I live in {v}.",
                        "I now live in {v}.",
                    ),
                    "heldout": (
                        "I've moved to {v}.",
                        "I'm living in {v} now.",
                        "Just moved to {v}!",
                    ),
                    "fresh": (
                        "We packed everything up and moved to {v}.",
                        "I'm now based in {v}.",
                        "I finally made the move from {old} to {v}.",
                    ),
                },
                "Where do I live?",
            ),
            Form(
                "named",
                {
                    "dev": ("{who} lives in {v}.", "{who} is based in {v}."),
                    "heldout": ("{who} has lived in {v} since university.",),
                    "fresh": ("{who} is living in {v}.", "{who}'s home is in {v}."),
                },
                {
                    "dev": (
                        "{who} moved to {v}.",
                        "{who} lives in {v} these days.",
                        "{who} relocated to {v} last month.",
                        "{who} now lives in {v}.",
                    ),
                    "heldout": ("{who} has moved to {v}.", "{who} is living in {v} now."),
                    "fresh": ("{who} just moved to {v}.", "{who} is based in {v} now."),
                },
                "Where does {who} live?",
            ),
        ),
    ),
    Kind(
        "employer",
        (("Siemens", "Spotify", "Shopify", "Zalando", "Atlassian", "Datadog", "Stripe", "Airbus"),),
        (
            Form(
                "first",
                {
                    "dev": ("I work at {v}.", "I work for {v} as an engineer."),
                    "heldout": ("I've been working at {v} for two years.",),
                    "fresh": ("I'm an engineer at {v}.", "I'm employed at {v}."),
                },
                {
                    "dev": (
                        "I started a new job at {v}.",
                        "I now work at {v}.",
                        "These days I work for {v}.",
                        "My new employer is {v}.",
                    ),
                    "heldout": ("I'm working at {v} now.", "I got a job at {v}."),
                    "fresh": ("I left {old} and joined {v}.", "I'm now employed by {v}."),
                },
                "Where do I work?",
            ),
            Form(
                "named",
                {
                    "dev": ("{who} works at {v}.",),
                    "heldout": ("{who} works for {v}.",),
                    "fresh": ("{who} is an engineer at {v}.",),
                },
                {
                    "dev": (
                        "{who} now works at {v}.",
                        "{who} started a new job at {v}.",
                        "{who} works for {v} these days.",
                    ),
                    "heldout": ("{who} is working at {v} now.", "{who} got a job at {v}."),
                    "fresh": ("{who} left {old} for {v}.", "{who} joined {v}."),
                },
                "Where does {who} work?",
            ),
        ),
    ),
    Kind(
        "database",
        (("PostgreSQL", "MySQL", "MongoDB", "CockroachDB", "DynamoDB", "Cassandra", "MariaDB"),),
        (
            Form(
                "we",
                {
                    "dev": ("The {thing} uses {v}.", "Our {thing} runs on {v}."),
                    "heldout": ("The {thing} stores its data in {v}.",),
                    "fresh": ("Our {thing} is backed by {v}.",),
                },
                {
                    "dev": (
                        "We migrated the {thing} to {v} this week.",
                        "We moved the {thing} over to {v}.",
                        "The {thing} now runs on {v}.",
                        "We replaced {old} with {v} in the {thing}.",
                        "We switched the {thing} from {old} to {v}.",
                    ),
                    "heldout": (
                        "The {thing} is on {v} now.",
                        "We ported the {thing} to {v}.",
                        "The {thing} was migrated to {v} yesterday.",
                    ),
                    "fresh": (
                        "We finished moving the {thing} off {old} onto {v}.",
                        "The {thing} now uses {v}.",
                        "We swapped {old} for {v} in the {thing}.",
                    ),
                },
                "Which database does the {thing} use?",
            ),
        ),
        things=(
            "orders service",
            "billing service",
            "search service",
            "inventory service",
            "payments service",
            "auth service",
            "catalog service",
        ),
    ),
    Kind(
        "meeting",
        (("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),),
        (
            Form(
                "we",
                {
                    "dev": (
                        "Our {thing} is on {v}.",
                        "We have the {thing} every {v}.",
                        "The {thing} is on {v}s.",
                    ),
                    "heldout": ("We hold the {thing} on {v}s.",),
                    "fresh": ("The {thing} happens every {v}.", "We do the {thing} on {v}s."),
                },
                {
                    "dev": (
                        "The {thing} moved to {v}.",
                        "We moved the {thing} to {v}s.",
                        "The {thing} is now on {v}s.",
                        "From now on the {thing} is every {v}.",
                    ),
                    "heldout": (
                        "The {thing} got moved to {v}.",
                        "We now hold the {thing} on {v}s.",
                        "The {thing} has been moved to {v}.",
                    ),
                    "fresh": (
                        "We're doing the {thing} on {v}s now.",
                        "The {thing} was moved to {v}.",
                        "Starting this week the {thing} is on {v}.",
                    ),
                },
                "What day is the {thing}?",
            ),
        ),
        things=("team standup", "weekly sync", "sprint retro", "design review", "planning meeting"),
    ),
    Kind(
        "editor",
        (("Vim", "Emacs", "VS Code", "Neovim", "Helix", "Sublime Text", "Zed"),),
        (
            Form(
                "first",
                {
                    "dev": ("I use {v} as my editor.", "My editor is {v}."),
                    "heldout": ("I write all my code in {v}.",),
                    "fresh": ("I code in {v}.", "{v} is my editor of choice."),
                },
                {
                    "dev": (
                        "I switched to {v}.",
                        "I switched from {old} to {v}.",
                        "I replaced {old} with {v}.",
                        "My new editor is {v}.",
                    ),
                    "heldout": ("I'm using {v} now.", "I ditched {old} for {v}."),
                    "fresh": (
                        "I've switched over to {v}.",
                        "I moved from {old} to {v}.",
                        "I use {v} now.",
                    ),
                },
                "Which editor do I use?",
            ),
            Form(
                "named",
                {
                    "dev": ("{who} uses {v} as an editor.",),
                    "heldout": ("{who}'s editor is {v}.",),
                    "fresh": ("{who} codes in {v}.",),
                },
                {
                    "dev": ("{who} switched to {v}.", "{who} switched from {old} to {v}."),
                    "heldout": ("{who} is using {v} now.",),
                    "fresh": ("{who} moved over to {v}.", "{who} uses {v} now."),
                },
                "Which editor does {who} use?",
            ),
        ),
    ),
    Kind(
        "runtime",
        (
            ("Python 3.10", "Python 3.11", "Python 3.12", "Python 3.13"),
            ("Node 18", "Node 20", "Node 22", "Node 24"),
            ("Java 11", "Java 17", "Java 21", "Java 25"),
        ),
        (
            Form(
                "we",
                {
                    "dev": ("The {thing} runs on {v}.", "Our {thing} is on {v}."),
                    "heldout": ("The {thing} is built on {v}.",),
                    "fresh": ("The {thing} is running {v}.",),
                },
                {
                    "dev": (
                        "We upgraded the {thing} to {v}.",
                        "We upgraded the {thing} from {old} to {v}.",
                        "The {thing} now runs on {v}.",
                        "We moved the {thing} to {v}.",
                    ),
                    "heldout": ("The {thing} is on {v} now.", "We bumped the {thing} to {v}."),
                    "fresh": (
                        "We moved the {thing} up to {v}.",
                        "The {thing} has been upgraded to {v}.",
                    ),
                },
                "What does the {thing} run on?",
            ),
        ),
        things=("billing API", "checkout service", "reporting job", "ML pipeline", "web backend"),
        ordered=True,
    ),
    Kind(
        "manager",
        (
            (
                "Lena Fischer",
                "Omar Haddad",
                "Grace Kim",
                "Tom Becker",
                "Aisha Khan",
                "Mateo Ruiz",
                "Hana Sato",
            ),
        ),
        (
            Form(
                "first",
                {
                    "dev": ("My manager is {v}.", "I report to {v}."),
                    "heldout": ("My boss is {v}.",),
                    "fresh": ("I work under {v}.", "{v} is my manager."),
                },
                {
                    "dev": (
                        "My new manager is {v}.",
                        "I now report to {v}.",
                        "{v} is my manager now.",
                    ),
                    "heldout": ("My boss is now {v}.", "I'm reporting to {v} now."),
                    "fresh": (
                        "I have a new manager, {v}.",
                        "I report to {v} now.",
                        "{v} took over as my manager.",
                    ),
                },
                "Who is my manager?",
            ),
            Form(
                "named",
                {
                    "dev": ("{who}'s manager is {v}.", "{who} reports to {v}."),
                    "heldout": (),
                    "fresh": ("{who} works under {v}.",),
                },
                {
                    "dev": ("{who} now reports to {v}.", "{who}'s new manager is {v}."),
                    "heldout": ("{who}'s boss is now {v}.",),
                    "fresh": ("{who} reports to {v} now.", "{v} is {who}'s new manager."),
                },
                "Who is {who}'s manager?",
            ),
        ),
    ),
    Kind(
        "phone",
        (
            (
                "+49 151 23456781",
                "+49 160 98765432",
                "+49 170 55501234",
                "+49 176 11122233",
                "+49 152 44455566",
            ),
        ),
        (
            Form(
                "first",
                {
                    "dev": ("My phone number is {v}.",),
                    "heldout": ("You can call me on {v}.",),
                    "fresh": ("My number is {v}.", "Reach me on {v}."),
                },
                {
                    "dev": (
                        "My new phone number is {v}.",
                        "I changed my number to {v}.",
                        "My phone number is now {v}.",
                    ),
                    "heldout": ("I got a new number: {v}.",),
                    "fresh": (
                        "My number changed to {v}.",
                        "New phone number: {v}.",
                        "My number is {v} now.",
                    ),
                },
                "What is my phone number?",
            ),
        ),
    ),
    Kind(
        "email",
        (
            (
                "ana.k@posteo.de",
                "ana@kowalski.dev",
                "a.kowalski@acme.io",
                "ak@fastmail.com",
                "ana.kowalski@proton.me",
            ),
        ),
        (
            Form(
                "first",
                {
                    "dev": ("My email is {v}.", "My email address is {v}."),
                    "heldout": ("Write to me at {v}.",),
                    "fresh": ("You can email me at {v}.", "Reach me by email at {v}."),
                },
                {
                    "dev": (
                        "My new email is {v}.",
                        "I changed my email to {v}.",
                        "My email address is now {v}.",
                    ),
                    "heldout": ("Please use {v} from now on, it's my new address.",),
                    "fresh": ("I have a new email address: {v}.", "Email me at {v} from now on."),
                },
                "What is my email address?",
            ),
        ),
    ),
    Kind(
        "team",
        (("payments", "platform", "growth", "checkout", "mobile", "security", "identity"),),
        (
            Form(
                "first",
                {
                    "dev": ("I'm on the {v} team.", "I work in the {v} team."),
                    "heldout": ("I'm part of the {v} team.",),
                    "fresh": ("I belong to the {v} team.", "I'm a member of the {v} team."),
                },
                {
                    "dev": (
                        "I moved to the {v} team.",
                        "I switched to the {v} team.",
                        "I'm on the {v} team now.",
                        "I joined the {v} team last week.",
                    ),
                    "heldout": ("I transferred to the {v} team.",),
                    "fresh": (
                        "I've joined the {v} team.",
                        "I'm now in the {v} team.",
                        "I was moved to the {v} team.",
                    ),
                },
                "Which team am I on?",
            ),
            Form(
                "named",
                {
                    "dev": ("{who} is on the {v} team.",),
                    "heldout": (),
                    "fresh": ("{who} works in the {v} team.",),
                },
                {
                    "dev": ("{who} moved to the {v} team.", "{who} joined the {v} team."),
                    "heldout": ("{who} transferred to the {v} team.",),
                    "fresh": ("{who} is on the {v} team now.", "{who} switched to the {v} team."),
                },
                "Which team is {who} on?",
            ),
        ),
    ),
    Kind(
        "car",
        (
            (
                "Toyota Corolla",
                "Tesla Model 3",
                "Volvo XC40",
                "Mazda CX-5",
                "Skoda Octavia",
                "Kia Niro",
            ),
        ),
        (
            Form(
                "first",
                {
                    "dev": ("I drive a {v}.", "My car is a {v}."),
                    "heldout": (),
                    "fresh": ("I own a {v}.", "I've got a {v}."),
                },
                {
                    "dev": (
                        "My new car is a {v}.",
                        "I now drive a {v}.",
                        "I switched to a {v}.",
                        "I traded in my {old} for a {v}.",
                    ),
                    "heldout": ("I sold my {old} and got a {v}.", "I'm driving a {v} now."),
                    "fresh": (
                        "I bought a {v}.",
                        "I replaced my {old} with a {v}.",
                        "I got rid of my {old}, now I drive a {v}.",
                    ),
                },
                "What car do I drive?",
            ),
            Form(
                "named",
                {"dev": ("{who} drives a {v}.",), "heldout": (), "fresh": ("{who} owns a {v}.",)},
                {
                    "dev": ("{who} now drives a {v}.", "{who} switched to a {v}."),
                    "heldout": ("{who} is driving a {v} these days.",),
                    "fresh": ("{who} bought a {v}.", "{who} replaced their {old} with a {v}."),
                },
                "What car does {who} drive?",
            ),
        ),
    ),
)

FILLER: tuple[str, ...] = (
    "I had a long lunch today.",
    "The weather has been grey all week.",
    "Can you explain what a monad is?",
    "Thanks, that helps a lot!",
    "I finished reading a novel about sailors.",
    "I'm thinking about learning the guitar.",
    "The coffee machine broke again.",
    "I like long walks in the forest.",
    "We shipped the new onboarding flow.",
    "My sister is visiting next month.",
    "What should I cook tonight?",
    "I went climbing on Saturday.",
    "The quarterly report is due soon.",
    "I adopted a cat called Miso.",
    "Haha, that's a good one.",
    "I need to renew my passport.",
)

# --------------------------------------------------------------------------- the chains


@dataclass
class Turn:
    text: str
    when: datetime
    session: str


@dataclass
class Chain:
    id: str
    kind: str
    subject: str
    user: str
    values: list[str]
    question: str
    turns: list[Turn] = field(default_factory=list)
    said_at: list[datetime] = field(default_factory=list)
    """When each value was said (the first statement, then each change)."""
    wordings: list[str] = field(default_factory=list)


def generate(
    count: int = 66,
    *,
    seed: int = 7,
    split: str = "dev",
    start: datetime | None = None,
    wordings: dict[str, dict[str, dict[str, list[str]]]] | None = None,
) -> list[Chain]:
    """``count`` chains, spread evenly over the kinds and their subject forms.

    Args:
        count: Chains to make.
        seed: Picks the values, wordings, names, things, gaps and filler.
        split: ``dev``, ``heldout``, ``fresh`` or ``all``: which wordings to draw from (a form
            with no wording in the split falls back to its ``dev`` wordings for that step).
        start: When the first chain begins (default 2026-01-05 09:00 UTC).
        wordings: Wordings of your own, ``{kind: {subject: {"state": [...], "change": [...]}}}``
            (the placeholders above): they replace the split's for the forms they name (the
            ``--wordings`` file; see ``evals/data/update_chains_blind.json``).
    """
    rng = random.Random(seed)
    begin = start or datetime(2026, 1, 5, 9, tzinfo=UTC)
    slots = [(kind, form) for kind in KINDS for form in kind.forms]
    chains: list[Chain] = []
    for index in range(count):
        kind, form = slots[index % len(slots)]
        family = rng.choice(kind.values)
        if kind.ordered:
            first = rng.randrange(len(family) - 2)
            values = list(family[first : first + 3])
        else:
            values = rng.sample(family, 3)
        who = rng.choice(_NAMES)
        thing = rng.choice(kind.things) if kind.things else ""
        chain = Chain(
            id=f"c{index:03d}-{kind.name}-{form.subject}",
            kind=kind.name,
            subject=form.subject,
            user=f"chain-user-{index}",
            values=values,
            question=form.question.format(who=who, thing=thing),
        )
        when = begin + timedelta(hours=index)
        for step, value in enumerate(values):
            if step:
                when += timedelta(days=rng.randint(3, 20), hours=rng.randint(0, 8))
            own = (wordings or {}).get(kind.name, {}).get(form.subject, {})
            step_own = tuple(own.get("change" if step else "state", ()))
            chosen = step_own or _wordings(form.change if step else form.state, split)
            text = rng.choice(chosen).format(
                v=value, old=values[step - 1] if step else "", who=who, thing=thing
            )
            text = text[:1].upper() + text[1:]
            session = f"{chain.id}-s{step}"
            chain.turns.append(Turn(text, when, session))
            chain.said_at.append(when)
            chain.wordings.append(text)
            for filler in rng.sample(FILLER, rng.randint(2, 4)):
                when += timedelta(hours=rng.randint(1, 20))
                chain.turns.append(Turn(filler, when, session))
        chains.append(chain)
    return chains


def _wordings(table: dict[str, tuple[str, ...]], split: str) -> tuple[str, ...]:
    if split == "all":
        chosen = tuple(w for wordings in table.values() for w in wordings)
    else:
        chosen = table.get(split, ())
    return chosen or table["dev"]


# --------------------------------------------------------------------------- the checks


def _has(text: str, value: str) -> bool:
    return value.casefold() in text.casefold()


def block_verdict(block: str, chain: Chain) -> dict[str, Any]:
    """Whether the block holds the current value with no older value unmarked above it."""
    current, older = chain.values[-1], chain.values[:-1]
    lines = block.splitlines()
    first = next((i for i, line in enumerate(lines) if _has(line, current)), None)
    unmarked_above: list[str] = []
    unmarked_anywhere: list[str] = []
    for index, line in enumerate(lines):
        marked = "was:" in line or "changed:" in line
        for value in older:
            if not _has(line, value) or marked:
                continue
            unmarked_anywhere.append(line)
            before_current = line.casefold().find(current.casefold())
            same_line_first = (
                before_current == -1 or line.casefold().find(value.casefold()) < before_current
            )
            if first is None or index < first or (index == first and same_line_first):
                unmarked_above.append(line)
    return {
        "holds_current": first is not None,
        "unmarked_old_above": unmarked_above[:3],
        "unmarked_old_anywhere": len(unmarked_anywhere),
        "passed": first is not None and not unmarked_above,
    }


def result_text(result: Any) -> str:
    """What a search result's own records say (a context record's own message only)."""
    return "\n".join(message_text(f) for f in (result.fact, *result.related))


def message_text(fact: Fact) -> str:
    """What a record says itself: a context record's own message, without the end of the turn
    before it (``docs/bridge.md``, context records); any other record's content.

    >>> message_text(Fact(project_id="p", content="Q?\\nYes.", kind=FactKind.MESSAGE,
    ...                   metadata={"context_chars": 3}))
    'Yes.'
    """
    mark = fact.metadata.get(_CONTEXT_MARK)
    if fact.kind is FactKind.MESSAGE and isinstance(mark, int) and 0 <= mark <= len(fact.content):
        return fact.content[mark:]
    return fact.content


async def check_chain(ctx: Any, chain: Chain) -> dict[str, Any]:
    """The three checks of one ingested chain."""
    from sagewai import UniversalAgent
    from sagewai.testing import ScriptedLLM, memory_block

    llm = ScriptedLLM(["Noted."])
    async with UniversalAgent(name="helper", context=ctx, llm=llm, learn=False) as agent:
        await agent.chat(chain.question, user_id=chain.user)
    block = block_verdict(memory_block(llm.calls[0].messages), chain)
    results = await ctx.search(chain.question, user_id=chain.user)
    top = result_text(results[0]) if results else ""
    search = {"top": top[:160], "passed": _has(top, chain.values[-1])}
    as_of: list[dict[str, Any]] = []
    for step in (1, 2):
        between = chain.said_at[step - 1] + (chain.said_at[step] - chain.said_at[step - 1]) / 2
        then = await ctx.search(chain.question, user_id=chain.user, as_of=between)
        first = result_text(then[0]) if then else ""
        as_of.append(
            {"step": step, "top": first[:160], "passed": _has(first, chain.values[step - 1])}
        )
    return {
        "id": chain.id,
        "kind": chain.kind,
        "subject": chain.subject,
        "values": chain.values,
        "wordings": chain.wordings,
        "question": chain.question,
        "block": block,
        "search": search,
        "as_of": as_of,
        "as_of_passed": all(a["passed"] for a in as_of),
    }


async def ingest(ctx: Any, chains: Sequence[Chain]) -> None:
    """Every chain's turns through the seed's wiring, with their timestamps."""
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import RuleBasedFactExtractor

    bridge = MemoryBridge(
        context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), journal=False
    )
    for chain in chains:
        for turn in chain.turns:
            await bridge.process_message(
                {"role": "user", "content": turn.text, "timestamp": turn.when},
                session_id=turn.session,
                user_id=chain.user,
            )


async def run_chains(ctx: Any, chains: Sequence[Chain]) -> list[dict[str, Any]]:
    """Ingest ``chains`` into ``ctx`` and check each."""
    await ingest(ctx, chains)
    return [await check_chain(ctx, chain) for chain in chains]


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pass rates overall and per kind and subject form."""

    def rates(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        n = len(group)
        return {
            "chains": n,
            "block": round(sum(r["block"]["passed"] for r in group) / n, 3) if n else None,
            "search_first": round(sum(r["search"]["passed"] for r in group) / n, 3) if n else None,
            "as_of": round(sum(r["as_of_passed"] for r in group) / n, 3) if n else None,
        }

    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_subject: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
        by_subject[row["subject"]].append(row)
    return {
        "overall": rates(rows),
        "by_kind": {k: rates(v) for k, v in sorted(by_kind.items())},
        "by_subject": {k: rates(v) for k, v in sorted(by_subject.items())},
    }


# --------------------------------------------------------------------------- engines


def engine_factory(backend: str, folder: Path, dsn: str | None) -> tuple[Any, Callable[[], Any]]:
    """The engine for ``backend`` and an async clean-up."""
    from sagewai import ContextEngine

    async def nothing() -> None:
        return None

    if backend == "local":
        return ContextEngine.local(folder / "memory", project_id="chains"), nothing
    if backend == "memory":
        from sagewai.embeddings import MiniLMEmbedder

        return ContextEngine.in_memory(project_id="chains", embedder=MiniLMEmbedder()), nothing
    import asyncpg

    from sagewai.embeddings import MiniLMEmbedder
    from sagewai.stores import InMemoryVectorStore, PostgresMetadataStore

    if dsn is None:
        raise SystemExit("--backend postgres needs --dsn")
    schema = f"chains_{uuid.uuid4().hex[:10]}"
    embedder = MiniLMEmbedder()
    ctx = ContextEngine(
        metadata_store=PostgresMetadataStore(dsn, schema=schema),
        vector_store=InMemoryVectorStore(embedder.dimension),
        embedder=embedder,
        project_id="chains",
    )

    async def drop() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()

    return ctx, drop


async def run(args: argparse.Namespace) -> dict[str, Any]:
    own = json.loads(args.wordings.read_text(encoding="utf-8")) if args.wordings else None
    chains = generate(args.chains, seed=args.seed, split=args.templates, wordings=own)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        ctx, cleanup = engine_factory(args.backend, Path(tmp), args.dsn)
        try:
            async with ctx:
                await ctx.migrate()
                rows = await run_chains(ctx, chains)
        finally:
            await cleanup()
    summary = summarise(rows)
    return {
        "benchmark": "update_chains",
        "backend": args.backend,
        "seed": args.seed,
        "templates": str(args.wordings) if args.wordings else args.templates,
        "kinds": len({c.kind for c in chains}),
        "seconds": round(time.perf_counter() - started, 1),
        **summary,
        "failures": [
            r
            for r in rows
            if not (r["block"]["passed"] and r["search"]["passed"] and r["as_of_passed"])
        ],
    }


def print_report(report: dict[str, Any]) -> None:
    overall = report["overall"]
    print(
        f"update chains: {overall['chains']} chains, {report['kinds']} kinds, "
        f"backend {report['backend']}, seed {report['seed']}, templates {report['templates']}, "
        f"{report['seconds']} s"
    )
    print(f"{'':18}{'chains':>7}{'block':>8}{'search':>8}{'as_of':>8}")
    for title, table in (("", {"overall": overall}), ("", report["by_subject"])):
        del title
        for name, r in table.items():
            print(f"{name:18}{r['chains']:>7}{r['block']:>8}{r['search_first']:>8}{r['as_of']:>8}")
    for name, r in report["by_kind"].items():
        print(f"  {name:16}{r['chains']:>7}{r['block']:>8}{r['search_first']:>8}{r['as_of']:>8}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", type=int, default=66)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--templates", choices=("dev", "heldout", "fresh", "all"), default="dev")
    parser.add_argument("--backend", choices=("local", "memory", "postgres"), default="local")
    parser.add_argument("--dsn", default=None)
    parser.add_argument(
        "--wordings",
        type=Path,
        default=None,
        help="a JSON file of your own wordings: {kind: {subject: {state: [..], change: [..]}}}",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "update_chains.json")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print_report(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "DATA",
    "FILLER",
    "KINDS",
    "Chain",
    "Form",
    "Kind",
    "Turn",
    "block_verdict",
    "check_chain",
    "generate",
    "ingest",
    "run_chains",
    "summarise",
]
