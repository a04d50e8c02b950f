"""The exchange a standing instruction was set in, shown when a message is about it.

The profile section shows what the user asked ("Always include comparative analysis of
multiple solution methods when I ask about triangle area calculations"); the turns the user
said right after it show how they wanted it applied ("hmm, can you show me an example using a
non-right-angled triangle to compare these methods?", "I think I'll go with a hybrid approach
..."). When a message is about an entry's topic, the user's next turns of the session the
entry was said in are shown in the memory block, as said, first among the messages:

* an entry is about the message when they share at least :data:`MIN_SHARED` topic word
  (:func:`sagewai.core._standing_topics.topic_words`: content words without the modal,
  standing and change words, nor request words such as "help", "show", "provide"), the most
  shared first, at most :data:`MAX_ENTRIES` entries;
* its exchange is the user's next :data:`TURNS` turns of the same session that share a topic
  word with it, the turn or the end of the reply it answers ("Got it, thanks!" after an answer
  about the topic), by turn index, within :data:`WINDOW` turns of the statement; shown as the
  user said them (the verbatim message record), read once per entry and cached;
* only the user's own records are read (the entry's user id and session); a message the block
  already shows is not shown twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sagewai.context._ranking import is_context_record
from sagewai.core._profile import Origin, origin_of
from sagewai.core._queries import FactQuery
from sagewai.core._records import Fact, FactKind, FactStatus
from sagewai.core._standing_topics import topic_words

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["MAX_ENTRIES", "MIN_SHARED", "TURNS", "WINDOW", "ExchangeReader", "about"]

MIN_SHARED = 1
"""Topic words a message and an entry must share for the entry's exchange to be shown."""
MAX_ENTRIES = 2
"""Most entries whose exchange one turn shows."""
TURNS = 3
"""The user's turns after the statement shown for one entry."""
WINDOW = 8
"""Turns after the statement (any speaker) a turn of its exchange may be."""
_GENERIC = frozenset(
    """
    help show find suggest explain tell give get know way mak start if through up far much
    many good best new one two some ask provid includ want lik could would should
    got hmm thank great sound yeah yep sure cool awesom perfect nice i'll you'll we'll gonna
    wanna kinda
    """.split()  # noqa: SIM905 - a word list reads best as prose
)
"""Stems of request words ("can you help me find ...", "always provide ... when I ask") and of
small talk ("Got it, thanks!", "hmm, sounds great"): a message and an entry, or two turns,
sharing only these are not about the same thing."""
_CACHED = 1000
_SESSION_LIMIT = 2000


def _topic(text: str) -> frozenset[str]:
    return topic_words(text) - _GENERIC


def about(
    entries: Sequence[Fact],
    message: str,
    limit: int | None = MAX_ENTRIES,
    recalled: Sequence[Fact] = (),
) -> list[Fact]:
    """The entries ``message`` is about, the most shared topic words first (at most
    ``limit``; ``None``: all of them).

    ``recalled`` are the records recall found for the message: among entries sharing as
    many words, one whose statement, or a record of the same user's session soon after it
    (within :data:`WINDOW` turns), is among them comes first (the search, by meaning with a
    real embedder, agrees it is about the message); then the entries' order.

    Example:
        >>> rule = Fact(project_id="p", content="x", object="Always compare methods when I "
        ...             "ask about triangle area calculations.")
        >>> [f.object[:14] for f in about([rule], "How do I find a triangle's area?")]
        ['Always compare']
        >>> about([rule], "Write a haiku about rain.")
        []
    """
    words = _topic(message)
    if not words:
        return []
    said = [where for where in map(_said, recalled) if where is not None]
    scored = []
    for index, entry in enumerate(entries):
        shared = len(words & _topic(entry.object or entry.content))
        if shared < MIN_SHARED:
            continue
        where = _said(entry)
        found = where is not None and any(_soon_after(where, turn) for turn in said)
        scored.append((-shared, not found, index, entry))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[:limit]]


def _said(record: Fact) -> tuple[str | None, str, int] | None:
    """Who said a record, in which session, at which turn (``None``: not from a session)."""
    source = record.sources[0] if record.sources else None
    if source is None or source.session_id is None or source.turn_index is None:
        return None
    return (record.user_id, source.session_id, source.turn_index)


def _soon_after(statement: tuple[str | None, str, int], turn: tuple[str | None, str, int]) -> bool:
    """``turn`` is the statement's, or a turn of its user's session soon after it."""
    user, session, index = statement
    return (
        user is not None
        and turn[0] == user
        and turn[1] == session
        and index <= turn[2] <= index + WINDOW
    )


class ExchangeReader:
    """Reads (and caches) the user's turns that followed a profile entry's statement."""

    def __init__(self, engine: ContextEngine) -> None:
        self.engine = engine
        self._cache: OrderedDict[str, tuple[Fact, ...]] = OrderedDict()

    async def turns(self, entry: Fact) -> tuple[Fact, ...]:
        """The user's next turns after ``entry`` was said that share a topic word with it
        (see the module)."""
        cached = self._cache.get(entry.id)
        if cached is not None:
            self._cache.move_to_end(entry.id)
            return cached
        found = await self._read(entry)
        self._cache[entry.id] = found
        while len(self._cache) > _CACHED:
            self._cache.popitem(last=False)
        return found

    async def _read(self, entry: Fact) -> tuple[Fact, ...]:
        source = entry.sources[0] if entry.sources else None
        if (
            source is None
            or source.session_id is None
            or source.turn_index is None
            or entry.user_id is None
        ):
            return ()
        start = source.turn_index
        records = await self.engine.port.find(
            FactQuery(
                project_id=self.engine.project_id,
                user_id=entry.user_id,
                session_id=source.session_id,
                kinds=(FactKind.MESSAGE,),
                statuses=(FactStatus.ACTIVE,),
                limit=_SESSION_LIMIT,
            )
        )
        later: dict[int, Fact] = {}
        context: dict[int, str] = {}
        statement = ""
        for record in records:
            said = record.sources[0] if record.sources else None
            if (
                said is None
                or said.turn_index is None
                or record.user_id != entry.user_id
                or origin_of(record) is not Origin.USER
            ):
                continue
            if said.message_id == source.message_id:
                if not is_context_record(record):
                    statement = statement or record.content
                continue
            if not start < said.turn_index <= start + WINDOW:
                continue
            if is_context_record(record):  # the turn with the end of the reply it answers
                context[said.turn_index] = record.content
            else:
                later.setdefault(said.turn_index, record)  # a long message's first part
        order = sorted(later)
        turns = [(later[i].content, context.get(i, later[i].content)) for i in order]
        chosen = thread(entry.object or entry.content, statement, turns)
        return tuple(later[order[k]] for k in chosen)


def thread(
    entry: str, statement: str, turns: Sequence[tuple[str, str]], limit: int = TURNS
) -> list[int]:
    """Which of the user's ``turns`` after a statement belong to its exchange (their indexes).

    ``turns`` are the user's next turns, in order, each as ``(said, with the reply end)``: the
    message, and the message with the end of the reply it answers. A turn belongs when it
    shares a topic word with the entry (itself, or with the reply it answers: "Got it,
    thanks!" after an answer about the topic), or when it **continues the thread**: it comes
    right after the statement or after the last turn that belongs, and shares a topic word
    with that one ("hmm, what if I name both as co-executors?" after "I'm considering naming
    Douglas as my executor ..."). Small talk ("Got it!", "Sounds great") makes no topic.

    Example:
        >>> turns = [("hmm, what if my mornings start at 8 instead?", ""),
        ...          ("Got it, thanks!", "... a structured routine. Got it, thanks!"),
        ...          ("What is the capital of Peru?", ""),
        ...          ("And mornings with the kids around?", "")]
        >>> thread("I prefer a structured daily routine.",
        ...        "I prefer a structured daily routine, can you plan my mornings?", turns)
        [0, 1]
    """
    topic = _topic(entry)
    previous = _topic(statement) | topic
    last = -1
    chosen: list[int] = []
    for index, (said, around) in enumerate(turns):
        own = _topic(said)
        continues = index == last + 1 and bool(own & previous)
        if continues or topic & _topic(around or said):
            chosen.append(index)
            last, previous = index, own
            if len(chosen) >= limit:
                break
    return chosen
