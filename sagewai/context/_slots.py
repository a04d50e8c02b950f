"""The later statement of a named value first: "where do I live?" answered by the last move.

People rarely restate a value in the words they first used. "I live in Lisbon", then weeks later
"Finally done unpacking the last boxes at the new apartment in Madrid!": no rule may have read
the second as a change, and a sentence encoder finds the first closer to "Where do I live?". Yet
the question asks about now, and the later statement is the answer.

For a question about a value as it stands now (:func:`~sagewai.context._query.asks_for_a_value_now`)
of one of the values people hold one at a time (:data:`SLOTS`: a home, a workplace, an editor, a
car, a manager, a team, a database, a meeting's day, a phone number, an e-mail address), the
records near the top that speak of the question's subject and of that value (a word of its
family: "apartment", "moved", "lease" for a home; "hired", "onboarding", "offer" for a
workplace) and name one (a name, a number, an address) are put in the order they were said, the
last first (:func:`~sagewai.context._ranking.later_first`). A record that speaks of something
else keeps its order among the others; a question about the past, and the order below the
window, are left as ranked.

The word families are the lexicon; the values are open (any city, company, car).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from sagewai.context._query import QueryAnalysis
from sagewai.context._ranking import RankedCandidate, later_first, message_text, said_at
from sagewai.core._records import Fact

__all__ = ["SLOTS", "Slot", "later_statements_first", "slot_of"]


@dataclass(frozen=True, slots=True)
class Slot:
    """One value people hold one at a time: how a question asks for it, how a statement of it
    reads.

    Attributes:
        name: What it is ("home").
        question: Matches a question that asks for it (lower-cased).
        family: Matches a statement that speaks of it (lower-cased).
        lower_values: Its values may be common words ("payments" is a team).
    """

    name: str
    question: re.Pattern[str]
    family: re.Pattern[str]
    lower_values: bool = False


def _asks(pattern: str) -> re.Pattern[str]:
    """A question for a value now of one slot; never one that compares ("both", "each")."""
    return re.compile(r"^(?!.*\b(?:both|each|all|between)\b).*?(?:" + pattern + r")")


def _words(words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words.split()) + r")\b")


SLOTS: tuple[Slot, ...] = (
    Slot(
        "home",
        _asks(
            r"where\b.*\b(?:live|lives|living|based|home)"
            r"|(?:what|which) city\b.*\b(?:live|lives|living|based|home)\b"
        ),
        _words(
            r"live lives lived living home apartment flat house place moved move moving "
            r"relocat\w* based lease keys settled city mail unpack\w* neighbou?rhood"
        ),
    ),
    Slot(
        "workplace",
        _asks(
            r"where\b.*\bwork(?:s|ing)?\b(?!\s+out)|(?:what|which) company\b|\bemployer\b"
            r"|who\b.*\bwork(?:s|ing)? for\b"
        ),
        _words(
            r"work works worked working job jobs employer employed employee company hired joined "
            r"join joining offer onboard\w* started starting quit left paycheck role position "
            r"poached office colleagues linkedin resigned"
        ),
    ),
    Slot(
        "editor",
        _asks(r"(?:what|which)\b.*\b(?:editor|ide)\b"),
        _words(
            r"editors? ide code coding codes edit edits editing config dotfiles plugins? "
            r"keybindings uninstalled installed"
        ),
    ),
    Slot(
        "car",
        _asks(r"(?:what|which)\b.*\bcar\b.*\bdrive|what\b.*\b(?:drive|drives|driving)\b"),
        _words(
            r"car cars drive drives driving drove commute\w* bought traded sold leased ride "
            r"wheels garage parked"
        ),
    ),
    Slot(
        "manager",
        _asks(r"who\b.*\b(?:manager|boss|lead|report|reports)\b"),
        _words(
            r"manager boss lead reports? reporting under managing manages one-on-one reorg "
            r"approvals? took\s+over"
        ),
    ),
    Slot(
        "team",
        _asks(r"(?:what|which) team\b"),
        re.compile(
            r"\b(?:transferred|reassigned|moved|joined|pulled|switched|squad|org)\b"
            r"|\b(?!(?:their|our|my|your|his|her|the|a|whole|same|new)\b)[a-z]+\s+team\b"
        ),
        lower_values=True,
    ),
    Slot(
        "database",
        _asks(r"(?:what|which) (?:database|db|datastore)\b"),
        _words(
            r"database db datastore data migrat\w* moved stores writes backed runs running "
            r"queries cut\s+over"
        ),
    ),
    Slot(
        "day",
        _asks(r"(?:what|which) (?:day|weekday)\b"),
        _words(r"moved rescheduled bumped shifted every day days now going\s+forward"),
    ),
    Slot(
        "phone number",
        _asks(
            r"(?:what|which)\b.*\b(?:phone|mobile|cell)(?:\s+number)?\b"
            r"|what\b.*\b(?:my|his|her|their|\w+'s)\s+number\b"
        ),
        _words(r"number phone mobile cell sim reach reachable call text whatsapp contact"),
    ),
    Slot(
        "e-mail address",
        _asks(r"(?:what|which)\b.*\be-?mail\b"),
        _words(r"e-?mail mail address inbox reach send write contact"),
    ),
)
"""The values people hold one at a time that a question names."""

_GENERIC_FAMILIES = frozenset({"day", "team"})
"""Slots whose family words are common to every change ("now", "moved", "switched"): a statement
using them is not thereby of that slot."""
_FIRST_PERSON_QUESTION = re.compile(r"\b(?:i|my|me|am|mine)\b")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself|the user)\b")
_RELATIVE = re.compile(
    r"\b(?:my|our)\s+(?:\w+\s+)?(sister|brother|mother|mom|mum|father|dad|wife|husband|partner|"
    r"son|daughter|friend|colleague|coworker|cousin|aunt|uncle|niece|nephew|grandma|grandpa|"
    r"grandmother|grandfather|girlfriend|boyfriend|fianc[eé]e?|roommate|flatmate|neighbou?r|"
    r"landlord|kid|child|parents|teammate)s?\b"
)
"""A question about someone the speaker names by their relation ("my sister"): its subject is
that person, not the speaker ("my manager" asks for the speaker's manager: not in the list)."""
_THIRD_PERSON = re.compile(
    r"\b(?:he|she|they|his|her|their|him|them)\b|(?-i:[A-Z][a-z]+)(?:'s|’s)?\s+"
    r"(?:is|was|has|had|just|finally|got|moved|left|quit|joined|started|transferred|switched|"
    r"relocated|drives|works|lives|reports)\b"
)
_VALUE = re.compile(
    r"@|(?<![.!?]\s)(?<!^)(?<!\n)\b(?-i:[A-Z])(?!(?:'m|’m)\b)[\w-]+"
    r"|(?<![\d-])(?!\d{4}-\d{2}-\d{2})\+?\d[\d\s()-]{6,}\d"
)
"""A value named: a capitalised word inside a sentence (a city, a company, a car), an address,
a phone number; not a date (a fact's rendering adds one to many statements)."""
_VALUE_WORD = re.compile(
    r"(?<![.!?]\s)(?<!^)(?<!\n)\b[A-Z][\w-]+|[\w.+-]+@[\w.-]+|\d[\d\s.+-]*\d|\d"
)
"""The values a statement names: capitalised words inside a sentence, addresses, numbers."""
_QUESTION_WORDS = frozenset(
    """use uses using run runs running held hold happen happens live lives living based home
    city work works working employer company job editor ide car drive drives driving manager
    boss lead report reports team database db datastore day weekday phone mobile cell number
    email e-mail address""".split()  # noqa: SIM905
)
"""Words of a question that ask for the slot, not name its subject ("What database does *the
auth service* use?")."""
_CLOSE = 0.8
"""A record scoring at least this share of the best speaks of the question even without a word
of the value's family (the first statement, "Kenji is on payments")."""


def slot_of(question: str) -> Slot | None:
    """The slot a question about a value now asks for, or ``None``.

    Example:
        >>> slot_of("Where does Lena work?").name, slot_of("Which editor do I use?").name
        ('workplace', 'editor')
        >>> slot_of("What did Lena say about the trip?") is None
        True
    """
    low = question.lower()
    return next((slot for slot in SLOTS if slot.question.search(low)), None)


def later_statements_first(
    ranked: Sequence[RankedCandidate], analysis: QueryAnalysis, *, window: int
) -> tuple[list[RankedCandidate], dict[str, Fact]]:
    """The ranking for a question about a named value now: its later statements first; and,
    for each earlier statement, the latest one that names another value (it may no longer
    hold: the agent's memory block says so).

    A record takes part when it speaks of the question's subject (the person it names; someone
    the speaker names by relation, "my sister"; for a question in the first person, the
    speaker: a record in the first person or of no one else; else the thing it names, "the
    auth service"), names a value (a capitalised word inside a
    sentence, a number, an address) and speaks of the slot (a word of its family, or a score
    close to the best). See the module's docstring.

    Example:
        >>> from datetime import UTC, datetime
        >>> from sagewai.context._query import analyse_query
        >>> from sagewai.core._records import Fact
        >>> said = [("old", "I live in Lisbon.", 1, 0.8),
        ...         ("cat", "I adopted a cat called Miso.", 3, 0.4),
        ...         ("new", "Done unpacking the boxes at the new apartment in Madrid!", 9, 0.2)]
        >>> ranked = [RankedCandidate(Fact(id=i, project_id="p", content=text,
        ...                                created_at=datetime(2026, 1, day, tzinfo=UTC)), score)
        ...           for i, text, day, score in said]
        >>> order, later = later_statements_first(ranked, analyse_query("Where do I live?"),
        ...                                       window=10)
        >>> [x.fact.id for x in order], {old: new.id for old, new in later.items()}
        (['new', 'old', 'cat'], {'old': 'new'})
    """
    unchanged: tuple[list[RankedCandidate], dict[str, Fact]] = (list(ranked), {})
    slot = slot_of(analysis.text)
    if slot is None or len(ranked) < 2:
        return unchanged
    names = analysis.names
    low_question = analysis.text.lower()
    relative = None if names else _RELATIVE.search(low_question)
    first_person = (
        not names and relative is None and _FIRST_PERSON_QUESTION.search(low_question) is not None
    )
    subjects = [re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE) for name in names]
    thing: list[str] = []
    if relative is not None:  # "Where does my sister work?": the sister, not the speaker
        thing = [relative.group(1)]
    elif not names and not first_person:  # "What day is the design review?": the thing's words
        thing = [word for word in analysis.keyword_text.split() if word not in _QUESTION_WORDS]
        if not thing:
            return unchanged
    need = math.ceil(len(thing) / 2)
    best = max(c.score for c in ranked[:window])

    def speaks_of_it(candidate: RankedCandidate) -> bool:
        text = message_text(candidate.fact)
        low = text.lower()
        if first_person:
            if _FIRST_PERSON.search(low) is None and _THIRD_PERSON.search(text) is not None:
                return False
        elif thing:
            if sum(1 for word in thing if word in low) < need:
                return False
        elif not any(subject.search(text) for subject in subjects):
            return False
        return slot.lower_values or names_value(candidate)

    def names_value(candidate: RankedCandidate) -> bool:
        stripped = message_text(candidate.fact)
        for subject in subjects:
            stripped = subject.sub(" ", stripped)
        return _VALUE.search(stripped) is not None

    taking = [c for c in ranked[:window] if speaks_of_it(c)]
    # A statement of the slot's family, or one as close to the question as the best that names
    # a value, moves above an earlier one; a close one that names none ("Kenji is on payments",
    # "we shipped the onboarding flow" for a team) only gives way.
    family = {c.fact.id for c in taking if slot.family.search(message_text(c.fact).lower())}
    close = {c.fact.id for c in taking if c.score >= _CLOSE * best}
    movers = family | {c.fact.id for c in taking if c.fact.id in close and names_value(c)}
    if not movers or len(family | close) < 2:
        return unchanged
    order = later_first(
        ranked,
        lambda c: c.fact.id in family or c.fact.id in close,
        window=window,
        moves=lambda c: c.fact.id in movers,
    )
    # A statement of another slot and not of this one ("I live in Hamburg now" for "Where do I
    # work?") may move up for being close, but is not offered as what may have changed.
    others = [o.family for o in SLOTS if o is not slot and o.name not in _GENERIC_FAMILIES]
    offered = {
        c.fact.id
        for c in taking
        if c.fact.id in family
        or (c.fact.id in movers and not any(o.search(message_text(c.fact).lower()) for o in others))
    }
    return order, _later_values([c for c in taking if c.fact.id in family | close], offered)


def _values(fact: Fact) -> frozenset[str]:
    return frozenset(m.group(0).casefold() for m in _VALUE_WORD.finditer(message_text(fact)))


def _later_values(
    statements: Sequence[RankedCandidate], movers: AbstractSet[str]
) -> dict[str, Fact]:
    """Each statement's latest later one (of ``movers``) that names a value it does not."""
    timed = sorted(statements, key=lambda c: said_at(c.fact))
    later: dict[str, Fact] = {}
    for index, earlier in enumerate(timed):
        own = _values(earlier.fact)
        for candidate in reversed(timed[index + 1 :]):
            if candidate.fact.id not in movers:
                continue
            if said_at(candidate.fact) > said_at(earlier.fact) and _values(candidate.fact) - own:
                later[earlier.fact.id] = candidate.fact
                break
    return later
