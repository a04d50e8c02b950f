"""What kind of thing a value is, so a change is filed under the claim it changes.

"We migrated the orders service to Postgres" changes the service's database, "I switched to
Neovim" the speaker's editor, "I switched to a Kia Niro" their car, "I moved to the payments
team" their team: the verb is the same, the object decides the predicate. A small lexicon of
well-known products (databases, language runtimes, editors, browsers, CI services, car makes)
and shapes ("the X team", "Python 3.11") reads the kind; anything it does not know has no kind
and stays a plain ``uses`` (or is left to the statement's own verb).

Also here: the days of the week and the meetings that recur, for schedules ("our standup is on
Monday" is a weekly rule, not a date).
"""

from __future__ import annotations

import re

__all__ = [
    "HABITUAL_MEETING",
    "KIND_VALUE",
    "KIND_WORDS",
    "WEEKDAYS",
    "kind_of",
    "noun_predicate",
    "object_predicate",
    "recurrence",
    "weekday_of",
]

_DATABASES = frozenset(
    """postgres postgresql mysql mariadb mongodb mongo cockroachdb cockroach dynamodb cassandra
    sqlite oracle redis elasticsearch opensearch clickhouse snowflake bigquery redshift neo4j
    couchdb couchbase firestore supabase timescaledb scylladb cosmosdb aurora spanner duckdb
    influxdb""".split()  # noqa: SIM905
) | frozenset({"sql server", "ms sql", "cockroach db", "dynamo db"})
_RUNTIME = re.compile(
    r"^(?:python|py|node(?:\.?js)?|java|jdk|openjdk|go|golang|ruby|php|\.net|dotnet|rust|deno|"
    r"bun|elixir|erlang/otp|kotlin|scala|perl|swift)\s*v?\d+(?:\.\d+){0,2}$",
    re.IGNORECASE,
)
_EDITORS = frozenset(
    """vim neovim nvim emacs helix zed nano vscode vscodium intellij pycharm webstorm goland
    clion rider atom notepad++ kakoune cursor fleet xcode""".split()  # noqa: SIM905
) | frozenset({"vs code", "visual studio code", "visual studio", "sublime text", "sublime"})
_BROWSERS = frozenset(
    {"firefox", "chrome", "chromium", "safari", "edge", "brave", "vivaldi", "arc"}
)
_CI = frozenset(
    {"jenkins", "github actions", "gitlab ci", "circleci", "travis", "travis ci", "buildkite",
     "teamcity", "drone", "bamboo", "azure pipelines"}
)  # fmt: skip
_CAR_MAKES = frozenset(
    """toyota tesla volvo mazda skoda kia honda ford bmw audi mercedes volkswagen vw hyundai
    nissan subaru peugeot renault fiat opel seat cupra polestar porsche jeep lexus mini citroen
    dacia rivian byd""".split()  # noqa: SIM905
)
_TEAM = re.compile(r"^(?:the\s+)?[\w&/-]+(?:\s+[\w&/-]+){0,2}\s+team$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|his|her|their)\s+", re.IGNORECASE)

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_BYDAY = {day: day[:2].upper() for day in WEEKDAYS}
_DAY = re.compile(r"\b(mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?\b", re.I)
HABITUAL_MEETING = re.compile(
    r"\b(?:stand-?ups?|syncs?|retros?|retrospectives?|one-on-ones?|1:1s?|check-?ins?|"
    r"all-hands|jour\s+fixe|design\s+reviews?|planning(?:\s+meeting)?s?|book\s+club|"
    r"practices?|trainings?|weekly\s+\w+|team\s+meetings?|staff\s+meetings?)\b",
    re.IGNORECASE,
)
"""Meetings that recur: "our standup is on Monday" is every Monday."""


def _bare(value: str) -> str:
    return _ARTICLE.sub("", " ".join(value.split())).strip(" .,'\"").casefold()


def kind_of(value: str) -> str | None:
    """The kind of a value: ``database``, ``runtime``, ``editor``, ``browser``, ``ci``, ``car``,
    ``team``, or ``None``.

    Example:
        >>> kind_of("Postgres"), kind_of("Python 3.11"), kind_of("the payments team")
        ('database', 'runtime', 'team')
        >>> kind_of("a Kia Niro"), kind_of("VS Code"), kind_of("green tea") is None
        ('car', 'editor', True)
    """
    bare = _bare(value)
    if not bare:
        return None
    if _TEAM.match(bare):
        return "team"
    first = bare.split()[0]
    if bare in _DATABASES or (first in _DATABASES and len(bare.split()) <= 2):
        return "database"
    if _RUNTIME.match(bare):
        return "runtime"
    if bare in _EDITORS:
        return "editor"
    if bare in _BROWSERS:
        return "browser"
    if bare in _CI:
        return "ci"
    if first in _CAR_MAKES and len(bare.split()) <= 4:
        return "car"
    return None


def _alternation(words: frozenset[str]) -> str:
    longest_first = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in longest_first)


_PRODUCTS = _DATABASES | _EDITORS | _BROWSERS | _CI
KIND_VALUE = (
    r"(?P<obj>(?:" + _alternation(_PRODUCTS) + r")(?![\w@.-]\w)"
    r"|(?:" + _alternation(_CAR_MAKES) + r")(?:\s+(?-i:[A-Z0-9][\w-]*)){0,2}\b"
    r"|(?:python|node(?:\.?js)?|java|go|ruby|php|rust|deno|bun|elixir|kotlin|scala|swift)"
    r"\s*v?\d+(?:\.\d+){0,2}\b"
    r"|\bthe\s+[\w&/-]+(?:\s+[\w&/-]+){0,2}?\s+team\b)"
)
"""A value of a known kind anywhere in a sentence (a product, a car, a runtime, "the X team"),
for the change rules' catch-all (:mod:`.rulebook_change`)."""
KIND_WORDS = frozenset(w.split()[0] for w in _PRODUCTS | _CAR_MAKES) | frozenset(
    {"python", "node", "java", "go", "ruby", "php", "rust", "deno", "bun", "elixir", "kotlin",
     "scala", "swift", "team"}
)  # fmt: skip
"""The words one of which a sentence must hold for :data:`KIND_VALUE` to be looked for."""


_KIND_PREDICATES = {
    "database": "uses_database",
    "runtime": "uses_runtime",
    "editor": "uses_editor",
    "browser": "uses_browser",
    "ci": "uses_ci",
    "car": "drives",
    "team": "on_team",
}


def object_predicate(value: str) -> str | None:
    """The predicate a value's kind files it under (``Postgres`` -> ``uses_database``).

    Example:
        >>> object_predicate("Neovim"), object_predicate("a Tesla Model 3")
        ('uses_editor', 'drives')
    """
    kind = kind_of(value)
    return _KIND_PREDICATES.get(kind) if kind else None


_NOUNS = {
    "manager": "managed_by",
    "line manager": "managed_by",
    "boss": "managed_by",
    "team lead": "managed_by",
    "lead": "managed_by",
    "employer": "works_at",
    "company": "works_at",
    "workplace": "works_at",
    "job": "works_at",
    "team": "on_team",
    "car": "drives",
    "ride": "drives",
    "editor": "uses_editor",
    "text editor": "uses_editor",
    "code editor": "uses_editor",
    "ide": "uses_editor",
    "browser": "uses_browser",
    "database": "uses_database",
    "db": "uses_database",
    "runtime": "uses_runtime",
    "email": "email",
    "e-mail": "email",
    "email address": "email",
    "e-mail address": "email",
    "mail": "email",
    "phone": "phone",
    "phone number": "phone",
    "number": "phone",
    "mobile": "phone",
    "mobile number": "phone",
    "cell": "phone",
    "cell number": "phone",
    "home": "lives_in",
    "city": "lives_in",
    "hometown": "is_from",
    "title": "works_as",
    "job title": "works_as",
    "role": "works_as",
    "position": "works_as",
}


def noun_predicate(noun: str) -> str | None:
    """The predicate "my new <noun> is X" states (``manager`` -> ``managed_by``).

    Example:
        >>> noun_predicate("manager"), noun_predicate("phone number"), noun_predicate("cat")
        ('managed_by', 'phone', None)
    """
    return _NOUNS.get(" ".join(noun.casefold().split()))


def weekday_of(text: str) -> str | None:
    """The weekday a word names (``"Wednesdays"`` -> ``"wednesday"``), or ``None``."""
    match = _DAY.fullmatch(text.strip())
    if match is None:
        return None
    stem = match.group(1).casefold()[:2]
    return next((day for day in WEEKDAYS if day.startswith(stem)), None)


def recurrence(days: list[str]) -> tuple[str, str]:
    """The object and RFC 5545 rule of a weekly recurrence on ``days``.

    Example:
        >>> recurrence(["monday"])
        ('every Monday', 'FREQ=WEEKLY;BYDAY=MO')
        >>> recurrence(["tuesday", "thursday"])
        ('every Tuesday and Thursday', 'FREQ=WEEKLY;BYDAY=TU,TH')
    """
    ordered = sorted(set(days), key=WEEKDAYS.index)
    names = [day.capitalize() for day in ordered]
    spoken = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"every {spoken}", "FREQ=WEEKLY;BYDAY=" + ",".join(_BYDAY[day] for day in ordered)
