"""Query analysis: what a search query asks for, read off its text with pure functions.

Why this exists: a question such as "When did Caroline go to the LGBTQ support group?" mixes words
that carry the topic ("LGBTQ", "support", "group") with words that only carry the grammar of a
question ("when", "did", "the", "to"). A keyword (BM25) index ranks a stored fact higher for every
query word it shares, so the grammar words drown the topic: almost every stored sentence contains
"the" or "to". Stripping them from the keyword side of a search is the largest single gain measured
on the LoCoMo benchmark (see ``docs/benchmarks-locomo.md``). The dense side keeps the full question:
a sentence encoder reads grammar as meaning.

The same pass reads two more signals the ranking uses: the names a query mentions (a fact spoken
by, or about, a person the question names is more likely relevant) and whether the question asks
about time (a fact that mentions a time is then more likely the answer).

Example:
    >>> analysis = analyse_query("When did Caroline go to the LGBTQ support group?")
    >>> analysis.keyword_text
    'caroline go lgbtq support group'
    >>> analysis.names
    ('caroline', 'lgbtq')
    >>> analysis.temporal
    True
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final

from sagewai.core._text import keyword_terms
from sagewai.extraction._dates import find_time_mentions

__all__ = [
    "STOPWORDS",
    "DateRange",
    "QueryAnalysis",
    "analyse_query",
    "asks_about_replies",
    "asks_about_the_past",
    "asks_for_a_value_now",
    "is_chatter",
    "is_temporal_question",
    "keyword_query",
    "mentions_time",
    "query_dates",
    "query_names",
]

_STOPWORD_TEXT: Final = """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can could couldn d did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers herself
    him himself his how i if in into is isn it its itself just ll m ma me might mightn more most
    must mustn my myself needn no nor not now o of off on once only or other our ours ourselves
    out over own re s same shan she should shouldn so some such t than that the their theirs them
    themselves then there these they this those through to too under until up ve very was wasn we
    were weren what when where which while who whom why will with won would wouldn y you your
    yours yourself yourselves
    ever kind likely many much type sort
"""

STOPWORDS: Final[frozenset[str]] = frozenset(_STOPWORD_TEXT.split())
"""English function words and question words, dropped from the keyword side of a search.

They are the NLTK English list (after the apostrophe split :func:`keyword_terms` applies) plus
words that only shape a question ("likely", "kind", "many"). Names, numbers and content words
are never in it.
"""

_NAME = re.compile(r"(?<![\w'’])([A-Z][\w\-]*[^\W\d_])(?:['’]s)?(?![\w'’])")

_TEMPORAL_QUESTION = re.compile(
    r"\b(when|what\s+(?:date|day|time|year|month|week)|which\s+(?:date|day|year|month|week)"
    r"|how\s+long(?:\s+ago)?|since\s+when|what\s+period)\b",
    re.IGNORECASE,
)

# Yesterday, today, tonight, tomorrow, ago, recently, lately, last, next, weekend; "this / that /
# past / coming" with a week, a month, a year or a season; a month's name or its abbreviation; a
# weekday; a year 1900-2099. The alternatives are factored by their first letters: one fact is
# tested in about 6 µs instead of 15 (a search tests a hundred candidates).
_TIME_EXPRESSION = re.compile(
    r"\b(yesterday|to(?:day|night|morrow)|ago|recently|lately|last|next|weekend"
    r"|(?:this|that|past|coming)\s+(?:week|month|year|summer|winter|spring|fall|autumn)"
    r"|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:19|20)\d\d)\b"
)
"""Matched against lower-cased text: three times faster than ``re.IGNORECASE``, and a search
tests it on every candidate of a "when" question."""


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """What the ranking needs to know about a query, computed once per search.

    Attributes:
        text: The query as given (the dense side embeds it unchanged).
        keyword_text: The query's content words, for the keyword index; the full term list when
            every word is a stopword (so a query such as "who am I" still matches something).
        names: Lower-cased capitalised words that are not function words: the people, places
            and things the query names.
        temporal: The query asks when something happened or for how long.
        asks_replies: The query asks what the assistant said (see :func:`asks_about_replies`).
        asks_past: The query asks what held before (see :func:`asks_about_the_past`): a changed
            claim is then not ranked below what replaced it.
        dates: The calendar dates the query names ("on 7 July, 2023", "in December 2023"), as
            day ranges (see :func:`query_dates`); a record said or placed in one of them is
            more likely the answer.
        asks_value_now: The query asks for a value as it stands now ("How many commits have
            been merged?", "When is my call scheduled?"; see :func:`asks_for_a_value_now`).
    """

    text: str
    keyword_text: str
    names: tuple[str, ...]
    temporal: bool
    asks_replies: bool = False
    asks_past: bool = False
    dates: tuple[DateRange, ...] = ()
    asks_value_now: bool = False


DateRange = tuple[date, date]
"""First and last day (inclusive) of a date a query names."""

DAY_SLACK: Final = timedelta(days=3)
"""How far from a named day a record may be said or placed and still match it: "what did Maria
plan on 7 July" is often answered by a message of the 8th that says "yesterday"."""


def query_dates(text: str) -> tuple[DateRange, ...]:
    """The calendar dates ``text`` names, as day ranges: a day (with :data:`DAY_SLACK` either
    side), a month or a year. Relative times ("last week") name no date without an anchor.

    Example:
        >>> query_dates("What did Maria plan on the evening of 7 July, 2023?")
        ((datetime.date(2023, 7, 4), datetime.date(2023, 7, 10)),)
        >>> query_dates("What class did she start in December 2023?")
        ((datetime.date(2023, 12, 1), datetime.date(2023, 12, 31)),)
        >>> query_dates("Where does Maria volunteer?")
        ()
    """
    ranges: list[DateRange] = []
    for mention in find_time_mentions(text):
        if mention.relative or mention.iso is None:
            continue
        found = _date_range(mention.iso.split("/")[0], mention.granularity)
        if found is not None and found not in ranges:
            ranges.append(found)
    return tuple(ranges)


def _date_range(iso: str, granularity: str) -> DateRange | None:
    parts = iso.split("-")
    try:
        if len(parts) == 3:
            day = date(int(parts[0]), int(parts[1]), int(parts[2]))
            if granularity == "day":
                return day - DAY_SLACK, day + DAY_SLACK
            return day, day
        if len(parts) == 2:
            year, month = int(parts[0]), int(parts[1])
            return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        if len(parts) == 1 and len(parts[0]) == 4:
            year = int(parts[0])
            return date(year, 1, 1), date(year, 12, 31)
    except ValueError:  # an impossible date ("2023-02-30") names nothing
        return None
    return None


_DATE_DIGITS = re.compile(r"\d+")


def _without_date_numbers(text: str) -> str:
    """``text`` without the numbers of the absolute dates it names ("7 July, 2023" -> "July"):
    a stored record that places itself in time ("(2023-05-03)") shares the year with every
    question of that year, which matches everything; the date itself is matched on the
    records' times instead (see :func:`query_dates`)."""
    cut = text
    for mention in reversed(find_time_mentions(text)):
        if mention.relative or mention.iso is None:
            continue
        kept = _DATE_DIGITS.sub(" ", mention.text)
        cut = cut[: mention.start] + kept + cut[mention.end :]
    return cut


def keyword_query(text: str, *, strip_stopwords: bool = True) -> str:
    """The text a keyword index should be searched with for ``text``.

    Args:
        text: The user's query.
        strip_stopwords: Drop :data:`STOPWORDS`; when every term is one, all terms are kept.

    Returns:
        The query's terms (as :func:`~sagewai.core._text.keyword_terms` splits them) joined
        by spaces; the stores tokenise it again the same way, so nothing is lost or added.

    Example:
        >>> keyword_query("What did Melanie paint?")
        'melanie paint'
        >>> keyword_query("Who are you?")
        'who are you'
    """
    terms = keyword_terms(_without_date_numbers(text)) or keyword_terms(text)
    if strip_stopwords:
        content = [term for term in terms if term not in STOPWORDS]
        if content:
            terms = content
    return " ".join(terms)


def query_names(text: str) -> tuple[str, ...]:
    """Lower-cased names a query mentions: capitalised words that are not function words.

    A possessive ``'s`` is dropped ("Caroline's" names ``caroline``). The first word of a
    sentence is capitalised too; it is kept when it is not a function word, which costs nothing
    because a name only matters when a stored fact's speaker or subject equals it.

    Example:
        >>> query_names("What is Caroline's identity, and did Mel know?")
        ('caroline', 'mel')
    """
    names: list[str] = []
    for match in _NAME.finditer(text):
        name = match.group(1).lower()
        if name not in STOPWORDS and name not in names:
            names.append(name)
    return tuple(names)


def is_temporal_question(text: str) -> bool:
    """True when ``text`` asks when something happened, or for how long.

    Example:
        >>> is_temporal_question("When did Melanie paint a sunrise?")
        True
        >>> is_temporal_question("What did Melanie paint?")
        False
    """
    return _TEMPORAL_QUESTION.search(text) is not None


def mentions_time(text: str) -> bool:
    """True when ``text`` holds a time expression (a date, a weekday, "yesterday", "last week").

    A temporal question is most often answered by a statement that places an event in time,
    so the ranking gives such facts a small bonus for such questions.

    Example:
        >>> mentions_time("I went to a support group yesterday")
        True
        >>> mentions_time("I love painting"), mentions_time("See you on MONDAY")
        (False, True)
    """
    return _TIME_EXPRESSION.search(text.lower()) is not None


_REPLY_QUESTION = re.compile(
    r"\b(?:did|have|had)\s+you\s+(?:recommend|suggest|say|tell|mention|propose|advise|explain"
    r"|give|show|provide|share|offer|outline|describe)"
    r"|\byou(?:['’]ve)?\s+(?:recommended|suggested|said|told|mentioned|proposed|advised|explained"
    r"|gave|showed|shown|provided|shared|offered|outlined|described)\b"
    r"|\bsummar(?:y|ies|ise|ize)\b"
    r"|\bwe(?:['’]ve|\s+have)?\s+(?:covered|discussed|talked)\b",
    re.IGNORECASE,
)


def asks_about_replies(text: str) -> bool:
    """True when ``text`` asks what the assistant said, or for a summary of what was covered.

    A memory of a user is mostly asked about the user's own words ("How much does my
    subscription cost?"); a question about the assistant's answers names them ("What approach
    did you recommend ...?") or asks for a summary of the conversation, whose substance is in the
    replies. The ranking weighs the bridge's records of assistant replies by it
    (:attr:`~sagewai.SearchConfig.reply_weight`).

    Example:
        >>> asks_about_replies("What approach did you recommend for my resume?")
        True
        >>> asks_about_replies("Can you give me a summary of how my project progressed?")
        True
        >>> asks_about_replies("How much does my subscription cost each month?")
        False
        >>> asks_about_replies("Can you show me how to implement a login feature?")
        False
    """
    return _REPLY_QUESTION.search(text) is not None


_PAST_QUESTION = re.compile(
    r"\b(?:before|previous(?:ly)?|used\s+to|former(?:ly)?|earlier|originally|initially"
    r"|in\s+the\s+past|back\s+then|at\s+(?:the|that)\s+time|prior|no\s+longer|anymore"
    r"|any\s+more|old|past|history|change[ds]?|switch(?:ed)?\s+from|moved\s+from)\b",
    re.IGNORECASE,
)


def asks_about_the_past(text: str) -> bool:
    """True when ``text`` asks what held before a change ("Where did I live before?").

    A question about the present ("Where do I live?") is answered by what holds now, so the
    ranking puts a record whose claim changed below what replaced it; a question that names the
    past, or asks about the change itself, wants the old value too.

    Example:
        >>> asks_about_the_past("Where did I live before Munich?")
        True
        >>> asks_about_the_past("Which database did the orders service use previously?")
        True
        >>> asks_about_the_past("Where do I live?"), asks_about_the_past("Where did I move?")
        (False, False)
    """
    return _PAST_QUESTION.search(text) is not None


_VALUE_QUESTION = re.compile(
    r"^\W*(?:what|which|how\s+(?:many|much|long|often|far|big|old)|when|where|who)\b",
    re.IGNORECASE,
)
_PRESENT_VERB = re.compile(
    r"\b(?:is|are|am|do|does|have|has|should|will|can|currently|now)\b|['’](?:s|re|ve)\b",
    re.IGNORECASE,
)
_PAST_VERB = re.compile(r"\b(?:did|was|were|had|used)\b", re.IGNORECASE)
_TWO_VALUES = re.compile(
    r"\b(?:between|differen(?:ce|t)|compared?|versus|vs|in\s+total|across|altogether|combined"
    r"|overall|sum)\b",
    re.IGNORECASE,
)


def asks_for_a_value_now(text: str) -> bool:
    """True when ``text`` asks for a value as it stands now: a question word, a verb in the
    present, none in the past, nothing that names the past (:func:`asks_about_the_past`), and no
    comparison or sum of values ("how many weeks between ...", "how many in total across all
    sessions").

    Such a question is answered by the last statement of the value: "How many commits have been
    merged?" by "the commits merged have now reached 165", not by the earlier "150 commits".

    Example:
        >>> asks_for_a_value_now("How many commits have been merged into the main branch?")
        True
        >>> asks_for_a_value_now("When is my Zoom call with the creative director scheduled?")
        True
        >>> asks_for_a_value_now("How many cupcakes did I order for the event?")
        False
        >>> asks_for_a_value_now("What was my budget before the increase?")
        False
        >>> asks_for_a_value_now("How many weeks do I have between the two deadlines?")
        False
    """
    return (
        _VALUE_QUESTION.search(text) is not None
        and _PRESENT_VERB.search(text) is not None
        and _PAST_VERB.search(text) is None
        and _TWO_VALUES.search(text) is None
        and not asks_about_the_past(text)
    )


_SENTENCES = re.compile(r"[^.!?\n]+[.!?]*")
MAX_QUESTION_WORDS = 15
"""A message of questions up to this long holds nothing but the questions (a longer one, a
request with its details, says things worth keeping)."""


def is_chatter(text: str) -> bool:
    """True when a message holds no statement: only short questions, or small talk.

    "Where do I live now?" or "Thanks!" is kept verbatim (it was said) but answers nothing: the
    ranking puts it below the records that do (:attr:`~sagewai.SearchConfig.chatter_floor`).
    A request with its details ("Can you help me write a cover letter for the Acme job?") or
    a statement followed by a question is not chatter.

    Example:
        >>> is_chatter("Where do I live now?"), is_chatter("Thanks so much!")
        (True, True)
        >>> is_chatter("I moved to Munich. Where should I eat?")
        False
    """
    from sagewai.extraction._gates import is_small_talk

    text = text.strip()
    if not text or len(text) > 12 * MAX_QUESTION_WORDS:  # a long message says something
        return False
    if is_small_talk(text):
        return True
    if len(text.split()) > MAX_QUESTION_WORDS:
        return False
    sentences = [m.group(0).strip() for m in _SENTENCES.finditer(text) if m.group(0).strip()]
    return bool(sentences) and all(
        sentence.endswith("?") or is_small_talk(sentence) for sentence in sentences
    )


def analyse_query(text: str, *, strip_stopwords: bool = True) -> QueryAnalysis:
    """Analyse a query once for the ranking: keyword text, names, temporal intent.

    Args:
        text: The query.
        strip_stopwords: Whether the keyword side drops function words (see :func:`keyword_query`).
    """
    return QueryAnalysis(
        text=text,
        keyword_text=keyword_query(text, strip_stopwords=strip_stopwords),
        names=query_names(text),
        temporal=is_temporal_question(text),
        asks_replies=asks_about_replies(text),
        asks_past=asks_about_the_past(text),
        dates=query_dates(text),
        asks_value_now=asks_for_a_value_now(text),
    )
