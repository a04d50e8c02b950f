"""Recall: what an agent reads from memory before it answers a message.

Three sources, read concurrently and each optional:

* facts and messages: the engine's hybrid search in the user's and session's scopes (so another
  user's facts are never read), with graph-aware ranking when the engine has a graph. Results of
  one source (a message and the facts drawn from it) make one line: the fact with its date and
  a short quote of the turn it came from; a message recalled without a fact of it is shown
  verbatim (shortened). Each fact that replaced an older one carries the older value, so the
  model sees a change *as* a change;
* the knowledge graph: the relations around the entities the message names, only those the user
  stated (the graph is project-wide; its relations remember who said them);
* episodes: summaries of the user's past sessions that match the message.

A source that fails at run time (a backend down) is logged and skipped: the turn goes on with
what the others found.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sagewai.agent._memory_block import (
    EPISODES,
    FACTS,
    GRAPH,
    MESSAGES,
    MemoryItem,
    clean_text,
    day,
)
from sagewai.core._records import (
    ChangeAction,
    ClaimChange,
    Fact,
    FactKind,
    FactStatus,
    SearchResult,
)
from sagewai.errors import SagewaiRuntimeError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.context.episodes import Episode
    from sagewai.core._graph_records import Relation
    from sagewai.stores.base._graph import ProjectGraph

__all__ = ["MemoryRecaller", "RecalledFact", "Recollection"]

logger = logging.getLogger("sagewai.agent")

MAX_RECALL_QUERY_CHARS = 4_000
EPISODE_SUMMARY_CHARS = 400
QUOTE_CHARS = 80
"""Longest quote of the turn a fact came from."""
FACT_CHARS = 140
"""Longest fact shown whole (a longer one, a whole sentence stored as a fact, is shown as its
part that matches the query)."""
MESSAGE_CHARS = 120
"""Longest verbatim message shown: a longer one is shown as its part that best matches the
query (:func:`excerpt`); the rest is one ``search_memory`` call away."""
FACTS_PER_SOURCE = 1
"""Most facts of one message shown: the others say the same turn again (its quote shows it)."""
_WORDS = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\s*\n+\s*|(?<=,)\s+")
_SPEAKER = re.compile(r"^[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}: ")
_QUESTION_WORDS = """what which where when who whom whose how why do does did done have has had
can could would should will shall may might must it its this that these those there their them
they he she his her him in on at for with from by about as into than then so not no yes any
some all one ever also just very really please tell know"""
_IGNORED = frozenset(_QUESTION_WORDS.split())


@dataclass(frozen=True, slots=True)
class RecalledFact:
    """A fact (or a verbatim message) found for the message, its score, the value it replaced
    (if any), the text of the turn it was drawn from (if memory holds it), and the claims it
    stated that changed since (a message that said "I live in Berlin" before the move)."""

    fact: Fact
    score: float
    previously: Fact | None = None
    quote: str | None = None
    changes: tuple[ClaimChange, ...] = ()
    rested_on: tuple[ClaimChange, ...] = ()
    later: tuple[Fact, ...] = ()
    """Later statements that may have changed it (``SearchResult.later``)."""

    @property
    def is_message(self) -> bool:
        """True for a verbatim message record (shown as said, not as a current value)."""
        return self.fact.kind is FactKind.MESSAGE


_PLAIN_WORDS = """i me my mine myself we us our ours you your yours am is are was were be been
the a an and or to of s m re ve ll d"""
_PLAIN = frozenset(_PLAIN_WORDS.split())


def _stems(text: str) -> set[str]:
    return {w.rstrip("s") or w for w in _WORDS.findall(text.lower())} - _PLAIN


def adds_to(quote: str, content: str) -> bool:
    """Whether a quote says something the fact's content does not (a word beyond pronouns).

    A fact written in the third person ("The user prefers tea.") needs no quote of "I prefer
    tea"; one that lost a detail (a date, a place, the rest of the turn) does.

    Example:
        >>> adds_to("I prefer short answers.", "The user prefers short answers.")
        False
        >>> adds_to("I moved here last May, to Porto", "The user moved to Porto.")
        True
    """
    return not _stems(quote) <= _stems(content)


def _key(word: str) -> str:
    """A crude stem, the first four letters: "moved" and "move", "painting" and "paints"."""
    return word[:4]


def _keys(text: str) -> set[str]:
    return {_key(w) for w in _WORDS.findall(text.lower())} - _IGNORED - _PLAIN


def excerpt(text: str, query: str, limit: int) -> str:
    """``text`` on one line, or, when longer than ``limit``, its part that best matches ``query``.

    The text is cut into sentences (and clauses); the one sharing the most words with the query
    (the earlier on a tie) is shown, with its neighbours while they fit.
    A leading ``Name:`` (a transcript's speaker) is kept; a cut is marked ``…``.

    Example:
        >>> text = "Hi there. I moved to Porto in May. The weather has been great, thanks."
        >>> excerpt(text, "Where did I move?", 30)
        '… I moved to Porto in May. …'
        >>> excerpt("Short.", "anything", 40)
        'Short.'
    """
    text = clean_text(text)
    if len(text) <= limit:
        return text
    lead_match = _SPEAKER.match(text)
    lead = lead_match.group(0) if lead_match and len(lead_match.group(0)) <= limit // 3 else ""
    body = text[len(lead) :]
    room = max(limit - len(lead) - 4, 8)
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in _SENTENCE.finditer(body):
        if cut.start() > start:
            spans.append((start, cut.start()))
        start = cut.end()
    if start < len(body):
        spans.append((start, len(body)))
    wanted = _keys(query)

    def score(span: tuple[int, int]) -> int:
        return len(_keys(body[span[0] : span[1]]) & wanted)

    best = max(range(len(spans)), key=lambda i: (score(spans[i]), -i)) if spans else 0
    first, last = best, best
    if spans:
        while True:
            grown = False
            if last + 1 < len(spans) and spans[last + 1][1] - spans[first][0] <= room:
                last += 1
                grown = True
            if first > 0 and spans[last][1] - spans[first - 1][0] <= room:
                first -= 1
                grown = True
            if not grown:
                break
        begin, end = spans[first][0], spans[last][1]
    else:
        begin, end = 0, len(body)
    if end - begin > room:  # one long sentence: a window around its first matching word
        words = [m for m in _WORDS.finditer(body[begin:end].lower()) if _key(m.group(0)) in wanted]
        anchor = begin + (words[0].start() if words else 0)
        begin = max(begin, min(anchor - room // 3, end - room))
        while begin > 0 and not body[begin - 1].isspace() and anchor - begin < room // 2:
            begin -= 1
        end = hard = begin + room
        while end > begin + room // 2 and end < len(body) and not body[end].isspace():
            end -= 1
        if end < len(body) and not body[end].isspace():
            end = hard  # no space to cut at (a URL, code): cut hard
    shown = body[begin:end].strip()
    before = "… " if begin > 0 else ""
    after = " …" if end < len(body) else ""
    return f"{lead}{before}{shown}{after}"


def fact_item(recalled: RecalledFact, ref: str, query: str = "") -> MemoryItem:
    """One block line: a fact with its type, date, older value and quote; or a message.

    Example:
        >>> from sagewai import Fact
        >>> fact = Fact(project_id="p", content="The user prefers tea.")
        >>> fact_item(RecalledFact(fact, 1.0, quote="I prefer tea!"), "m1").text[:26]
        '[m1] The user prefers tea.'
    """
    fact = recalled.fact
    if recalled.is_message:
        source = fact.sources[0] if fact.sources else None
        who = (source.speaker or source.role) if source is not None else None
        when = day(fact.valid_from or fact.created_at)
        said = excerpt(fact.content, query, MESSAGE_CHARS)
        lead = " ".join(part for part in (when, f"{who}:" if who else "") if part)
        changed = "; ".join(
            [changed_note(c) for c in recalled.changes]
            + [rested_note(c) for c in recalled.rested_on]
            + [later_note(f) for f in recalled.later]
        )
        text = f'[{ref}] {lead} "{said}"' + (f" ({changed})" if changed else "")
        return MemoryItem(MESSAGES, text.replace("]  ", "] "), fact.id)
    notes: list[str] = []
    event = fact.metadata.get("event_time")
    if isinstance(event, str) and event and event not in fact.content:
        notes.append(f"on {event}")
    since = day(fact.valid_from or fact.created_at)
    if since:
        notes.append(f"since {since}")
    if recalled.previously is not None:
        older = recalled.previously
        until = day(older.valid_to)
        notes.append(
            f"was: {clean_text(older.content, limit=200)}" + (f" until {until}" if until else "")
        )
    notes.extend(changed_note(change) for change in recalled.changes)
    notes.extend(rested_note(change) for change in recalled.rested_on)
    notes.extend(later_note(statement) for statement in recalled.later)
    if recalled.quote and adds_to(recalled.quote, fact.content):
        notes.append(f'said: "{excerpt(recalled.quote, query, QUOTE_CHARS)}"')
    said = excerpt(fact.content, query, FACT_CHARS)
    return MemoryItem(FACTS, f"[{ref}] {said} ({'; '.join(notes)})", fact.id)


def changed_note(change: ClaimChange) -> str:
    """How a changed claim reads in the block: the old claim, what holds now, and since when.

    Example:
        >>> from datetime import datetime, UTC
        >>> from sagewai import Fact
        >>> old = Fact(project_id="p", content="Lives in Berlin.",
        ...            valid_from=datetime(2025, 1, 1, tzinfo=UTC),
        ...            valid_to=datetime(2026, 3, 9, tzinfo=UTC))
        >>> new = Fact(project_id="p", content="Moved to Munich.")
        >>> changed_note(ClaimChange(old=old, new=new, at=old.valid_to))
        'changed: "Lives in Berlin." is no longer true since 2026-03-09, now: Moved to Munich.'
    """
    when = day(change.at)
    old = clean_text(change.old.content, limit=160)
    note = f'changed: "{old}" is no longer true' + (f" since {when}" if when else "")
    if change.new is not None:
        note += f", now: {clean_text(change.new.content, limit=160)}"
    return note


def later_note(statement: Fact) -> str:
    """How a record reads when a later statement of its value names another one.

    Example:
        >>> from datetime import datetime, UTC
        >>> from sagewai.core._records import Fact
        >>> later = Fact(project_id="p", content="New apartment in Madrid!",
        ...              valid_from=datetime(2026, 2, 1, tzinfo=UTC))
        >>> later_note(later)
        'maybe changed: said later (2026-02-01): New apartment in Madrid!'
    """
    when = day(statement.valid_from or statement.created_at)
    said = clean_text(verbatim(statement).content, limit=160)
    return "maybe changed: said later" + (f" ({when})" if when else "") + f": {said}"


def rested_note(change: ClaimChange) -> str:
    """How a record that rested on a changed claim reads: it may be out of date, and why."""
    old = clean_text(change.old.content, limit=120)
    note = f'may be out of date: said while "{old}" held'
    if change.new is not None:
        note += f", now: {clean_text(change.new.content, limit=120)}"
    return note


@dataclass(frozen=True, slots=True)
class Recollection:
    """Everything recalled for one message, best first within each source."""

    facts: list[RecalledFact] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    query: str = ""
    """The message recalled for: a long message is shown as its part that matches it."""

    def items(self, ref_for: Callable[[str], str]) -> list[MemoryItem]:
        """The block lines, facts labelled with the session's references (``ref_for(id)``)."""
        out = [
            fact_item(recalled, ref_for(recalled.fact.id), self.query) for recalled in self.facts
        ]
        out.extend(MemoryItem(GRAPH, clean_text(line)) for line in self.relations)
        for episode in self.episodes:
            summary = clean_text(episode.summary, limit=EPISODE_SUMMARY_CHARS)
            out.append(MemoryItem(EPISODES, f"{day(episode.created_at)}: {summary}"))
        return out


class MemoryRecaller:
    """Reads facts, graph relations and episodes relevant to a message.

    Args:
        engine: The facts (searched in the user's and session's scopes).
        episodes: Recall past sessions from the engine's episode store (when it has one).
        graph: The project's graph view, or ``None``.
        top_k: Most facts recalled.
        graph_hops: Hops of graph-aware fact ranking (0 to switch it off).
        episode_limit: Most past sessions recalled.
        max_entities: Most entities of the message whose neighbourhood is read.
        graph_depth: Hops walked from each of them (relations nearest first).
        max_relations: Most graph relations recalled.
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        episodes: bool = True,
        graph: ProjectGraph | None = None,
        top_k: int = 10,
        graph_hops: int = 1,
        episode_limit: int = 2,
        max_entities: int = 3,
        graph_depth: int = 2,
        max_relations: int = 10,
    ) -> None:
        self.engine = engine
        self.episodes = episodes
        self.graph = graph
        self.top_k = top_k
        self.graph_hops = graph_hops
        self.episode_limit = episode_limit
        self.max_entities = max_entities
        self.graph_depth = graph_depth
        self.max_relations = max_relations

    async def recall(self, message: str, *, user_id: str | None, session_id: str) -> Recollection:
        """Everything relevant to ``message`` that this user may read."""
        query = message[:MAX_RECALL_QUERY_CHARS]
        facts, relations, episodes = await asyncio.gather(
            self._guard("facts", self._facts(query, user_id, session_id), []),
            self._guard("graph", self._relations(query, user_id), []),
            self._guard("episodes", self._episodes(query, user_id, session_id), []),
        )
        return Recollection(facts=facts, relations=relations, episodes=episodes, query=query)

    async def search(
        self, query: str, *, user_id: str | None, session_id: str, top_k: int
    ) -> list[RecalledFact]:
        """The facts search alone (the ``search_memory`` tool)."""
        return await self._facts(query[:MAX_RECALL_QUERY_CHARS], user_id, session_id, top_k)

    async def _guard(self, what: str, work: Any, empty: Any) -> Any:
        try:
            return await work
        except SagewaiRuntimeError as exc:
            logger.warning("recall of %s skipped this turn: %s", what, exc)
            return empty

    async def _facts(
        self, query: str, user_id: str | None, session_id: str, top_k: int | None = None
    ) -> list[RecalledFact]:
        if not query.strip() or (top_k or self.top_k) < 1:
            return []
        hops = self.graph_hops if self.engine.graph_store is not None else 0
        results = await self.engine.search(
            query, top_k or self.top_k, user_id=user_id, session_id=session_id, graph_hops=hops
        )
        chosen = by_source(results)
        wanted = {
            message_key(r.fact)
            for r in chosen
            if r.fact.kind is not FactKind.MESSAGE and message_key(r.fact) is not None
        }
        shown = {message_key(r.fact) for r in chosen if r.fact.kind is FactKind.MESSAGE}
        quotes = await self._quotes(
            [key for key in wanted if key is not None and key not in shown], results
        )
        previous = await asyncio.gather(*(self._previously(r.fact) for r in chosen))
        facts_of: dict[tuple[str, str], set[str]] = {}
        for result in results:
            for record in (result.fact, *result.related):
                key = message_key(record)
                if key is not None and record.kind is not FactKind.MESSAGE:
                    facts_of.setdefault(key, set()).add(record.id)
        out: list[RecalledFact] = []
        for r, p in zip(chosen, previous, strict=True):
            key = message_key(r.fact)
            said = quotes.get(key) if key is not None else None
            quote = None
            if said is not None and r.fact.kind is not FactKind.MESSAGE:
                # A short turn that said more than the one fact shown: quote it, not the span.
                more = key is not None and len(facts_of.get(key, ())) > FACTS_PER_SOURCE
                quote = said if more and len(said) <= QUOTE_CHARS else quote_of(r.fact, said)
            out.append(
                RecalledFact(
                    fact=r.fact,
                    score=r.score,
                    previously=p,
                    quote=quote,
                    changes=r.changes,
                    rested_on=r.rested_on,
                    later=r.later,
                )
            )
        return out

    async def _quotes(
        self, keys: Sequence[tuple[str, str]], results: Sequence[SearchResult]
    ) -> dict[tuple[str, str], str]:
        """The text of the messages these facts came from: fused into a result, else read."""
        quotes: dict[tuple[str, str], str] = {}
        for result in results:
            for record in (result.fact, *result.related):
                key = message_key(record)
                if record.kind is FactKind.MESSAGE and key is not None:
                    quotes.setdefault(key, verbatim(record).content)
        missing = [key for key in keys if key not in quotes]
        if missing:
            from sagewai.core._ids import message_record_id

            project = self.engine.project_id
            ids = {message_record_id(project, s, m): (s, m) for s, m in missing}
            for record in await self.engine.port.get_many(list(ids)):
                if record.project_id == project and record.kind is FactKind.MESSAGE:
                    quotes.setdefault(ids[record.id], record.content)
        return quotes

    async def _previously(self, fact: Fact) -> Fact | None:
        """The fact this one superseded (the latest, when several), from the audit log."""
        related: list[str] = []
        for change in await self.engine.history(fact.id):
            if change.action is ChangeAction.CREATED:
                related.extend(change.related_fact_ids)
        if not related:
            return None
        older = [
            other
            for other in await self.engine.port.get_many(related)
            if other.status is FactStatus.SUPERSEDED and other.superseded_by == fact.id
        ]
        if not older:
            return None
        return max(older, key=lambda f: f.effective_from)

    async def _relations(self, query: str, user_id: str | None) -> list[str]:
        if self.graph is None or self.max_relations < 1:
            return []
        named = (await self.graph.find_entities(query))[: self.max_entities]
        lines: list[str] = []
        seen: set[str] = set()
        for entity in named:
            neighbourhood = await self.graph.neighbours(entity.id, depth=self.graph_depth)
            names = {e.id: e.name for e in (neighbourhood.center, *neighbourhood.entities)}
            for relation in neighbourhood.relations:
                if relation.id in seen or not _stated_by(relation, user_id):
                    continue
                seen.add(relation.id)
                subject = names.get(relation.subject_id, "?")
                obj = names.get(relation.object_id, "?")
                since = day(relation.valid_from)
                lines.append(f"{subject} {relation.predicate} {obj} (since {since})")
                if len(lines) >= self.max_relations:
                    return lines
        return lines

    async def _episodes(self, query: str, user_id: str | None, session_id: str) -> list[Episode]:
        if not self.episodes or not self.engine.episodes.enabled or self.episode_limit < 1:
            return []
        found = await self.engine.episodes.search(
            query, limit=self.episode_limit + 1, user_id=user_id
        )
        return [e for e in found if e.session_id != session_id][: self.episode_limit]


def quote_of(fact: Fact, message: str) -> str:
    """The part of ``message`` the fact was read from (its source span), else the message.

    Example:
        >>> from sagewai import Fact
        >>> fact = Fact(project_id="p", content="The user lives in Porto.",
        ...             metadata={"source_span": [0, 15]})
        >>> quote_of(fact, "I live in Porto and I work at Initech.")
        'I live in Porto'
    """
    span = fact.metadata.get("source_span")
    if isinstance(span, list) and len(span) == 2:
        start, end = span
        if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(message):
            return message[start:end]
    return message


def message_key(fact: Fact) -> tuple[str, str] | None:
    """The (session, message) a record was drawn from, or ``None`` (a document, a saved note)."""
    if not fact.sources:
        return None
    source = fact.sources[0]
    session = source.session_id or fact.session_id
    if session is None or source.message_id is None:
        return None
    return (session, source.message_id)


def by_source(results: Sequence[SearchResult]) -> list[SearchResult]:
    """One entry per source, best first: its facts (at most :data:`FACTS_PER_SOURCE`), else
    the message itself.

    Search may return a message and the facts drawn from it as separate results, or fused into
    one (``SearchResult.related``); either way the block shows the source once: the facts say
    what was learned (with a quote of the turn), a message alone says what was said.
    """
    groups: dict[object, list[SearchResult]] = {}
    for result in results:
        records = [result.fact, *result.related]
        key: object = message_key(result.fact) or ("record", result.fact.id)
        group = groups.setdefault(key, [])
        for record in records:
            if all(r.fact.id != record.id for r in group):
                group.append(
                    SearchResult(
                        fact=record, score=result.score, parts=result.parts, later=result.later
                    )
                )
    chosen: list[SearchResult] = []
    for group in groups.values():
        facts = [r for r in group if r.fact.kind is not FactKind.MESSAGE]
        if facts:
            chosen.extend(facts[:FACTS_PER_SOURCE])
        else:
            first = group[0]
            chosen.append(
                SearchResult(
                    fact=verbatim(first.fact),
                    score=first.score,
                    parts=first.parts,
                    later=first.later,
                )
            )
    return chosen


def verbatim(record: Fact) -> Fact:
    """The message a record stands for: a context record (the message with the end of the turn
    before it) without the earlier turn's words, any other record as it is.

    Example:
        >>> from sagewai.context._ranking import CONTEXT_MARK
        >>> from sagewai import FactKind
        >>> around = Fact(project_id="p", content="Did you go? Yes, on Friday.",
        ...               kind=FactKind.MESSAGE, metadata={CONTEXT_MARK: 12})
        >>> verbatim(around).content
        'Yes, on Friday.'
    """
    from sagewai.context._ranking import CONTEXT_MARK, is_context_record

    if not is_context_record(record):
        return record
    start = record.metadata.get(CONTEXT_MARK)
    if not isinstance(start, int) or not 0 <= start < len(record.content):
        return record
    return record.model_copy(update={"content": record.content[start:]})


def _stated_by(relation: Relation, user_id: str | None) -> bool:
    """Whether the user said it (the agent tags the user's turns with the user id as speaker)."""
    if user_id is None:
        return True
    return any(source.speaker == user_id for source in relation.sources)


def fact_lines(facts: Sequence[RecalledFact], ref_for: Callable[[str], str]) -> str:
    """Facts as the ``search_memory`` tool shows them: one line each, with references."""
    if not facts:
        return "nothing found"
    return "\n".join(item.text for item in Recollection(facts=list(facts)).items(ref_for))
