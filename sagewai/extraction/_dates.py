"""Time expressions in a message, normalised to ISO 8601 against the message's own time.

"yesterday" said on 2023-05-08 is ``2023-05-07``; "last week" is the ISO week before
(``2023-05-01/2023-05-07``, an ISO 8601 interval); "next quarter" the calendar quarter after
(``2023-07-01/2023-09-30``); "in May 2023" is ``2023-05``; "three years
ago" is ``2020``. The granularity of the answer is the granularity of the phrase: a day, a week
or weekend (interval), a month or a year.

Conventions (a phrase alone is often ambiguous; these are the documented readings):

* ``last <weekday>``: the latest such day strictly before the message date;
  ``next <weekday>`` and ``this <weekday>``: the first such day strictly after it (``this``
  includes the day itself); ``on <weekday>``: the previous one in a past-tense sentence, the
  next one otherwise.
* a month or a day without a year (``in May``, ``on March 11``): the latest one not after the
  message in a past-tense sentence, the first one not before it otherwise.
* weeks are ISO weeks (Monday to Sunday); a weekend is that week's Saturday and Sunday.
* ``N weeks ago`` is a day (``N*7`` days back); ``N months ago`` a month; ``N years ago`` a year.

Without a message time only absolute expressions (``May 3, 2023``, ``in 2019``, ``2024-02-28``)
are normalised; relative ones are reported with ``iso=None``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

__all__ = ["TimeMention", "find_time_mentions", "ground_dates", "is_past_tense"]

_MONTHS = {
    name: index
    for index, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_WEEKDAYS = {
    name: index
    for index, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}

_MONTH_FULL = (
    r"january|february|march|april|may|june|july|august|september|october|november|december"
)
_MONTH_ANY = _MONTH_FULL + r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_WEEKDAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_COUNT = (
    r"\d{1,3}|a\s+couple\s+of|couple\s+of|an?|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# One alternation, tried left to right at each position; every branch is bounded.
_TIME = re.compile(
    r"\b(?:"
    r"(?P<iso>(?:19|20)\d\d-[01]\d-[0-3]\d)"
    r"|(?P<rel_day>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|"
    r"tonight|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))"
    r"|(?P<ago>(?P<ago_n>" + _COUNT + r")\s+(?P<ago_unit>day|week|month|year)s?\s+ago)"
    r"|(?P<inn>in\s+(?P<in_n>" + _COUNT + r")\s+(?P<in_unit>day|week|month|year)s?)(?!\s+ago)"
    r"|(?P<rel>(?P<rel_which>last|this|next|coming|past)\s+(?P<rel_unit>week(?:end)?|month|quarter|year|"
    + _WEEKDAY
    + r"))"
    r"|(?P<dmy>(?:the\s+)?" + _DAY + r"(?:\s+of)?\s+(?P<dmy_month>" + _MONTH_ANY + r")\b\.?"
    r"(?:,?\s+" + _YEAR.replace("year", "dmy_year") + r")?)"
    r"|(?P<mdy>(?P<mdy_month>" + _MONTH_ANY + r")\.?\s+(?P<mdy_day>[0-3]?\d)(?:st|nd|rd|th)?\b"
    r"(?:,?\s+(?P<mdy_year>(?:19|20)\d\d))?)"
    r"|(?P<my>(?P<my_month>" + _MONTH_FULL + r")(?:\s+of)?,?\s+(?P<my_year>(?:19|20)\d\d))"
    r"|(?P<pm>(?P<pm_prep>in|during|since|by|before|until|after|around|early|late|mid)\s+"
    r"(?P<pm_month>" + _MONTH_FULL + r")(?!\.?\s+[0-3]?\d\b|(?:\s+of)?,?\s+(?:19|20)\d\d))"
    r"|(?P<py>(?P<py_prep>in|since|by|before|until|after|around|of|from)\s+(?P<py_year>(?:19|"
    r"20)\d\d))"
    r"|(?P<wd>(?P<wd_prep>on|by|until|before|after)\s+(?P<wd_day>" + _WEEKDAY + r"))"
    r")\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|won't|shall|gonna|going\s+to|plan(?:ning)?\s+to|need\s+to|have\s+to|has\s+to|"
    r"must|should|intend\s+to|want\s+to|hope\s+to|upcoming|next|tomorrow|tonight|starts|"
    r"begins|is\s+on|are\s+on|is\s+scheduled|remind\s+me|todo|by)\b|'ll\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|did|had|went|got|ago|yesterday|last|came|gave|took|saw|made|met|ran|won|"
    r"lost|left|began|broke|bought|brought|caught|felt|found|flew|held|kept|knew|led|paid|"
    r"said|sold|sent|spent|stood|taught|told|thought|wrote|passed\s+away|"
    r"\w{2,}ed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TimeMention:
    """A time expression found in a text.

    Attributes:
        text: The phrase as written.
        start: Offset of the phrase in the text.
        end: End offset of the phrase.
        iso: ISO 8601 date (``2023-05-07``), month (``2023-05``), year (``2023``) or interval
            (``2023-05-01/2023-05-07``); ``None`` when it cannot be resolved (no message time).
        granularity: ``day``, ``week``, ``weekend``, ``month``, ``quarter`` or ``year``.
        relative: True when the phrase needs the message time ("yesterday", "last May").
    """

    text: str
    start: int
    end: int
    iso: str | None
    granularity: str
    relative: bool


def is_past_tense(sentence: str) -> bool:
    """Rough tense of a sentence: past unless it has a future marker or no past marker.

    Example:
        >>> is_past_tense("I lost my phone on Friday"), is_past_tense("I'll call on Friday")
        (True, False)
    """
    if _FUTURE.search(sentence):
        return False
    return _PAST.search(sentence) is not None


def _count(text: str) -> int:
    words = " ".join(text.lower().split())
    return int(words) if words.isdigit() else _NUMBERS.get(words, 1)


def _shift_months(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + (day.month - 1) + months
    return index // 12, index % 12 + 1


def _week(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _interval(first: date, last: date) -> str:
    return f"{first.isoformat()}/{last.isoformat()}"


def _valid_day(year: int, month: int, day: int) -> date | None:
    if 1 <= day <= calendar.monthrange(year, month)[1]:
        return date(year, month, day)
    return None


def _weekday_from(anchor: date, weekday: int, *, forward: bool, inclusive: bool) -> date:
    if forward:
        delta = (weekday - anchor.weekday()) % 7
        if delta == 0 and not inclusive:
            delta = 7
        return anchor + timedelta(days=delta)
    delta = (anchor.weekday() - weekday) % 7
    if delta == 0 and not inclusive:
        delta = 7
    return anchor - timedelta(days=delta)


def _resolve(match: re.Match[str], anchor: date | None, past: bool) -> tuple[str | None, str, bool]:
    """(iso, granularity, relative) of one matched phrase."""
    g = match.group
    if g("iso"):
        year, month, day = (int(part) for part in g("iso").split("-"))
        valid = _valid_day(year, month, day) if 1 <= month <= 12 else None
        return (valid.isoformat() if valid else None), "day", False
    if g("rel_day"):
        phrase = " ".join(g("rel_day").lower().split())
        if anchor is None:
            return None, "day", True
        offset = {
            "the day before yesterday": -2,
            "yesterday": -1,
            "last night": -1,
            "tomorrow": 1,
            "the day after tomorrow": 2,
        }.get(phrase, 0)
        return (anchor + timedelta(days=offset)).isoformat(), "day", True
    if g("ago") or g("inn"):
        count = _count(g("ago_n") or g("in_n"))
        unit = (g("ago_unit") or g("in_unit")).lower()
        sign = -1 if g("ago") else 1
        if anchor is None:
            return None, unit, True
        if unit == "day":
            return (anchor + timedelta(days=sign * count)).isoformat(), "day", True
        if unit == "week":
            return (anchor + timedelta(days=sign * 7 * count)).isoformat(), "day", True
        if unit == "month":
            year, month = _shift_months(anchor, sign * count)
            return f"{year:04d}-{month:02d}", "month", True
        return f"{anchor.year + sign * count:04d}", "year", True
    if g("rel"):
        which = g("rel_which").lower()
        unit = g("rel_unit").lower()
        step = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[which]
        if anchor is None:
            return (
                None,
                unit if unit in {"week", "weekend", "month", "quarter", "year"} else "day",
                True,
            )
        if unit in {"week", "weekend"}:
            monday, _ = _week(anchor + timedelta(days=7 * step))
            if unit == "week":
                return _interval(monday, monday + timedelta(days=6)), "week", True
            return (
                _interval(monday + timedelta(days=5), monday + timedelta(days=6)),
                "weekend",
                True,
            )
        if unit == "month":
            year, month = _shift_months(anchor, step)
            return f"{year:04d}-{month:02d}", "month", True
        if unit == "quarter":
            first_month = (anchor.month - 1) // 3 * 3 + 1
            year, month = _shift_months(date(anchor.year, first_month, 1), 3 * step)
            last_year, last_month = _shift_months(date(year, month, 1), 2)
            last_day = calendar.monthrange(last_year, last_month)[1]
            return (
                _interval(date(year, month, 1), date(last_year, last_month, last_day)),
                "quarter",
                True,
            )
        if unit == "year":
            return f"{anchor.year + step:04d}", "year", True
        weekday = _WEEKDAYS[unit]
        if which in {"last", "past"}:
            return (
                _weekday_from(anchor, weekday, forward=False, inclusive=False).isoformat(),
                "day",
                True,
            )
        if which == "this" and past:
            return (
                _weekday_from(anchor, weekday, forward=False, inclusive=True).isoformat(),
                "day",
                True,
            )
        inclusive = which == "this"
        upcoming = _weekday_from(anchor, weekday, forward=True, inclusive=inclusive)
        return upcoming.isoformat(), "day", True
    if g("dmy") or g("mdy"):
        month = _MONTHS[(g("dmy_month") or g("mdy_month")).lower().rstrip(".")]
        day_number = int(g("day") or g("mdy_day"))
        year_text = g("dmy_year") or g("mdy_year")
        if year_text:
            valid = _valid_day(int(year_text), month, day_number)
            return (valid.isoformat() if valid else None), "day", False
        if anchor is None:
            return None, "day", True
        candidate = _valid_day(anchor.year, month, day_number)
        if candidate is None:
            return None, "day", True
        if past and candidate > anchor:
            candidate = _valid_day(anchor.year - 1, month, day_number)
        elif not past and candidate < anchor:
            candidate = _valid_day(anchor.year + 1, month, day_number)
        return (candidate.isoformat() if candidate else None), "day", True
    if g("my"):
        month = _MONTHS[g("my_month").lower()]
        return f"{int(g('my_year')):04d}-{month:02d}", "month", False
    if g("pm"):
        month = _MONTHS[g("pm_month").lower()]
        if anchor is None:
            return None, "month", True
        year = anchor.year
        if past and month > anchor.month:
            year -= 1
        elif not past and month < anchor.month:
            year += 1
        return f"{year:04d}-{month:02d}", "month", True
    if g("py"):
        return f"{int(g('py_year')):04d}", "year", False
    if g("wd"):
        weekday = _WEEKDAYS[g("wd_day").lower()]
        if anchor is None:
            return None, "day", True
        forward = not past or g("wd_prep").lower() in {"by", "until"}
        found = _weekday_from(anchor, weekday, forward=forward, inclusive=False)
        return found.isoformat(), "day", True
    return None, "day", True


_TIME_WORDS = frozenset(
    [
        *_MONTHS,
        *_WEEKDAYS,
        *"""yesterday today tonight tomorrow night morning afternoon evening day days week weeks
        weekend month months quarter year years""".split(),  # noqa: SIM905
    ]
)
_LETTERS = re.compile(r"[a-z]+")


def _may_mention_time(sentence: str) -> bool:
    """Cheap pre-test for :data:`_TIME`: a digit or a time word is needed for any match."""
    if _DIGIT.search(sentence):
        return True
    return not _TIME_WORDS.isdisjoint(_LETTERS.findall(sentence.lower()))


_DIGIT = re.compile(r"\d")


def find_time_mentions(
    sentence: str, anchor: datetime | date | None = None, *, past: bool | None = None
) -> list[TimeMention]:
    """Time expressions in ``sentence``, resolved against ``anchor`` (the message time).

    Args:
        sentence: One sentence (the tense of the whole sentence picks past or future readings).
        anchor: When the message was written; ``None`` resolves absolute expressions only.
        past: Force the tense; by default it is read off the sentence (:func:`is_past_tense`).

    Example:
        >>> from datetime import date
        >>> [m.iso for m in find_time_mentions("I went to a support group yesterday",
        ...                                     date(2023, 5, 8))]
        ['2023-05-07']
        >>> [m.iso for m in find_time_mentions("I ran my first marathon in May 2023")]
        ['2023-05']
    """
    if not sentence or not _may_mention_time(sentence):
        return []
    day = anchor.date() if isinstance(anchor, datetime) else anchor
    tense = is_past_tense(sentence) if past is None else past
    mentions: list[TimeMention] = []
    for match in _TIME.finditer(sentence):
        iso, granularity, relative = _resolve(match, day, tense)
        mentions.append(
            TimeMention(match.group(0), match.start(), match.end(), iso, granularity, relative)
        )
    return mentions


def ground_dates(
    text: str, anchor: datetime | date | None, *, protected: Sequence[str] = ()
) -> str:
    """``text`` with each relative time phrase followed by its date, resolved at ``anchor``.

    What makes "yesterday" in a stored fact mean a date whoever reads it, whenever: any
    extractor's fact (a model's, your own) gets the dates the rules write. A phrase already
    followed by a parenthesis is left alone, so grounding twice changes nothing, and so is a
    phrase inside one of the ``protected`` exact values (a value is never edited).

    Example:
        >>> from datetime import date
        >>> ground_dates("The user met Bob yesterday.", date(2024, 3, 13))
        'The user met Bob yesterday (2024-03-12).'
        >>> ground_dates("The user met Bob yesterday (2024-03-12).", date(2024, 3, 13))
        'The user met Bob yesterday (2024-03-12).'
    """
    if anchor is None:
        return text
    out: list[str] = []
    last = 0
    for mention in find_time_mentions(text, anchor):
        if not mention.relative or mention.iso is None:
            continue
        if any(mention.text in value for value in protected):
            continue
        if (
            text[mention.end : mention.end + 2] == " ("
            or text[mention.end : mention.end + 1] == "("
        ):
            continue
        out.append(text[last : mention.end])
        out.append(f" ({mention.iso})")
        last = mention.end
    out.append(text[last:])
    return "".join(out)
