"""The rule-based entity extractor: patterns and word lists, no model, no dependency.

What makes a capitalised word a name, and of what, is decided by
:meth:`RuleBasedEntityExtractor._kind` from evidence only (a word list, a cue before it, the
word said in address); a capitalised word with no evidence is left out, since "Trello",
"Helmet" or "Pride" are no persons. The word lists are in :mod:`._entity_words`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sagewai.core._text import word_set
from sagewai.intelligence._entities import MAX_TEXT_CHARS, ExtractedEntity
from sagewai.intelligence._entity_words import (
    EVENT_NAMES,
    EVENT_NOUNS,
    FIRST_NAMES,
    MORE_TECHNOLOGIES,
    ORGANISATION_ACRONYMS,
    PLACE_NOUNS,
    TECHNOLOGY_ACRONYMS,
    WEEKDAYS,
)

__all__ = ["RuleBasedEntityExtractor"]


_TECHNOLOGIES = word_set(
    "python javascript typescript java rust golang c++ c# ruby php kotlin scala haskell elixir "
    "sql postgresql postgres mysql sqlite mongodb redis kafka rabbitmq elasticsearch docker "
    "kubernetes k8s terraform ansible aws azure gcp linux ubuntu debian macos ios android react "
    "vue angular svelte django flask fastapi node.js nodejs deno numpy pandas pytorch tensorflow "
    "keras scikit-learn git github gitlab vim neovim emacs vscode excel photoshop figma slack jira "
    "notion chatgpt gpt-4 gpt-4o claude llama qdrant neo4j nebulagraph spark hadoop airflow "
    "graphql grpc html css bash zsh powershell iphone ipad macbook playstation xbox kindle "
    "instagram tiktok youtube spotify netflix whatsapp zoom pytest jupyter latex wordpress"
)
_AMBIGUOUS_TECH = word_set(
    "react spark rust zoom slack notion excel git go swift ruby java keras flask spring vue "
    "deno kindle spotify netflix youtube instagram tiktok whatsapp bash latex"
)
_ORGANISATIONS = word_set(
    "Google Microsoft Apple Amazon Meta Facebook OpenAI Anthropic IBM Intel Nvidia NVIDIA Tesla "
    "Netflix Spotify Uber Airbnb Twitter Stripe Oracle Salesforce Adobe Samsung Sony Walmart "
    "Starbucks Harvard Stanford MIT Oxford Cambridge NASA UNICEF Greenpeace Reuters BBC CNN IKEA "
    "Toyota BMW Mercedes Volkswagen Boeing Airbus Disney Pixar Nintendo Deloitte McKinsey"
)
_PLACES = word_set(
    "America USA US UK England Scotland Ireland Wales France Germany Spain Portugal Italy Greece "
    "Netherlands Belgium Switzerland Austria Sweden Norway Denmark Finland Poland Ukraine Russia "
    "Turkey Egypt Morocco Nigeria Kenya Ethiopia India China Japan Korea Vietnam Thailand "
    "Indonesia Philippines Australia Canada Mexico Brazil Argentina Chile Peru Colombia Cuba "
    "Israel Iran Iraq Sweden Europe Asia Africa Paris London Berlin Madrid Rome Lisbon Amsterdam "
    "Brussels Vienna Prague Dublin Edinburgh Stockholm Oslo Copenhagen Helsinki Warsaw Athens "
    "Istanbul Moscow Kyiv Cairo Tokyo Kyoto Osaka Seoul Beijing Shanghai Singapore Bangkok Delhi "
    "Mumbai Sydney Melbourne Toronto Vancouver Montreal Boston Chicago Seattle Denver Austin "
    "Dallas Houston Miami Atlanta Portland Phoenix Philadelphia Detroit Nashville Brooklyn "
    "Manhattan Hawaii California Texas Florida Oregon Washington Alaska Colorado Arizona Nevada "
    "Utah Georgia Ohio Michigan Illinois Massachusetts Virginia Carolina Minnesota Wisconsin"
)
_PLACE_PHRASES = (
    "New York",
    "Los Angeles",
    "San Francisco",
    "Las Vegas",
    "New Zealand",
    "South Africa",
    "Hong Kong",
    "Mexico City",
    "New Orleans",
    "San Diego",
)
_MONTHS = (
    "January February March April May June July August September October November "
    "December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
_STOP_WORDS = (
    "I I'm I've I'd I'll Im Ive A An The This That These Those There Here It It's Its He She We "
    "They You Your Yours My Mine Our Me Him Her His Them Their What When Where Why How Who Which "
    "Whose And But Or So If Then Than Because Also Just Yes No Not Nope Yeah Yep Ok Okay Oh Wow "
    "Hey Hi Hello Thanks Thank Sure Great Good Nice Cool Awesome Amazing Well Really Totally "
    "Absolutely Definitely Congrats Congratulations Sorry Please Let Lets Let's Do Does Did Is "
    "Are Was Were Be Been Have Has Had Can Could Will Would Should Might Must May Maybe Some Any "
    "All Every Each Many Much More Most Other Another One Two Three First Last Next Today "
    "Tomorrow Yesterday Tonight Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mr Mrs "
    "Ms Dr Haha Lol Omg Btw Aw Aww Ah Hmm Um Uh Dear Happy Love See Look Anyway Speaking Yup "
    "Bye Goodbye Cheers Welcome Agreed Exactly True Right Glad Sounds Keep Take Enjoy Have Hope "
    "The BTW FYI OK OMG LOL IMO TBH ASAP RSVP DIY Woohoo Yay Yikes Whoa Gosh Wait Sweet Cute "
    "Lovely "
    "Beautiful Congrats Thankfully Luckily Honestly Seriously Anyway Also Plus Go Yo Whoa Hah "
    "Oops Ugh Nah Sup Howdy Bravo Woah Phew Wishing Finding Good Best Celsius Fahrenheit Kelvin"
)
_STOP = word_set(_STOP_WORDS) | word_set(_MONTHS) | WEEKDAYS
_ORG_SUFFIX = (
    r"(?:Inc|Corp|Corporation|LLC|Ltd|GmbH|Company|Co|University|College|School|Institute"
    r"|Hospital|Bank|Foundation|Group|Labs|Agency|Association|Club|Society|Center|Centre"
    r"|Museum|Church|Studio|Studios|Academy|Team|Party|Council|Network|Journal)"
)
_CAP = r"(?:[A-Z][\w'’&.-]*[\w]|[A-Z])"

_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+[^\s\"'<>.,;:!?)]"),
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@-]+){2,}/?"),
    re.compile(r"\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+\.\w+"),
    re.compile(r"\bv?\d+\.\d+\.\d+(?:[-+][\w.]+)?\b|\bv\d+\.\d+\b"),
    re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion))?\b"),
    re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|dollars|euros|pounds)\b"),
    re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"),
    re.compile(r"\b[A-Z]{2,}[-_]\d{2,}\b"),
    re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"),  # an environment variable: API_KEY
    re.compile(  # a file name: main.py, .env, settings.yaml
        r"(?<![\w/.-])(?:[\w-]+)?\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|env|md|txt|csv|html|css"
        r"|sql|sh|cfg|ini|lock|gitignore|dockerignore)\b(?![\w/-])"
    ),
)
_VERSION_AFTER = re.compile(r"\s+(v?\d+(?:\.\d+)+)\b")
_MONTH = r"(?:" + "|".join(_MONTHS.split()) + r")\.?"
_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b"),
    re.compile(
        r"(?:(?<=\bin )|(?<=\bof )|(?<=\bby )|(?<=\bsince )|(?<=\bfrom )|(?<=\buntil ))"
        r"(?:19|20)\d{2}\b"
    ),
)
_TECH_PATTERN = re.compile(
    r"(?<![\w.+#-])("
    + "|".join(
        re.escape(t) for t in sorted(_TECHNOLOGIES | MORE_TECHNOLOGIES, key=len, reverse=True)
    )
    + r")(?![\w+#]|\.\w)",
    re.IGNORECASE,
)
_PRODUCT_SHAPE = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z]\d|\.(?:com|io|ai|app|dev|net|org)$")
"""CamelCase ("GTmetrix", "LinkedIn"), a digit in a word ("HTML5", "Argon2") or a domain: a
product's name, not a person's."""
_SOFTWARE_WORDS = frozenset({"API", "SDK", "CLI"})
"""A capitalised name before them is software ("Formspree API")."""
_PRODUCT_WORDS = word_set(
    "Actions Pages Docs Sheets Drive Cloud Teams Lighthouse Maps Analytics Office Search Photos "
    "Calendar Meet Workspace Azure Assistant"
)
"""A well-known company's name before them is a product ("Google Lighthouse", "GitHub Pages")."""
_ADDRESS_BEFORE = re.compile(
    r"(?:^|[,;:!?.(]\s*|\b(?:hey|hi|hello|thanks|thank you|wow|yeah|yep|yup|bye|congrats|"
    r"sorry|absolutely|woohoo|dear|oh|ok|okay|sure|go|yes|no|cheers|love you|miss you|night|"
    r"morning|evening|totally|definitely|nice|great|awesome|cool)[,!]?\s+)$",
    re.IGNORECASE,
)
_ADDRESS_AFTER = re.compile(r"\s*(?:[!?,.;:)]|$|<3|-)")
_ORG_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"\b(?:{_CAP}\s+){{0,4}}{_ORG_SUFFIX}\b(?:\s+of\s+{_CAP}(?:\s+{_CAP})?)?"),
    re.compile(rf"\b(?:University|College|Bank|Museum|Institute)\s+of\s+{_CAP}(?:\s+{_CAP})?"),
)
_CAPITALISED = re.compile(rf"{_CAP}(?:\s+(?:of\s+|de\s+|van\s+|von\s+)?{_CAP})*")
_PLACE_CUE = re.compile(
    r"\b(?:in|to|from|near|visit|visited|visiting|around|across|toward|towards)\s+$", re.IGNORECASE
)
_ORG_CUE = re.compile(
    r"\b(?:work|works|worked|working|job|intern|interning|employed)\s+(?:at|for|with)\s+$"
    r"|\b(?:joined|join|at)\s+$",
    re.IGNORECASE,
)
_PERSON_CUE = re.compile(
    r"\b(?:friend|friends|sister|brother|mom|mother|dad|father|son|daughter|wife|husband|"
    r"partner|boyfriend|girlfriend|cousin|aunt|uncle|boss|colleague|coworker|named|called|"
    r"manager|teammate|neighbor|neighbour|roommate|flatmate|mentor|coach|teacher|grandma|"
    r"grandpa|grandmother|grandfather|niece|nephew|fiancé|fiancée|fiance|fiancee|classmate|"
    r"landlord|landlady|therapist|doctor|dr\.?|mr\.?|mrs\.?|ms\.?|"
    r"met|meet|told|tell|asked|ask|thanks|thank|hey|hi|dear)\s+$",
    re.IGNORECASE,
)
_WEAK_PERSON_CUE = re.compile(r"\b(?:with|and)\s+$", re.IGNORECASE)
"""Weak: "with Helmet", "and WebPageTest" name software as often as people."""
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_EVENT_TAIL = re.compile(
    r"\s+(?:fest|festival|parade|meteor shower|conference|symposium|summit|marathon|expo|"
    r"awards|championship|tournament)\b"
)
_WORD_NAMES = word_set(
    "Joy Grace Rose Ruby Bill Mark Amber Lily Holly Frank Jack Nick Will Pat Sue Rob Art Ray Dawn "
    "Faith Max Eve"
)
"""Given names that are also words: at the start of a sentence, not a name without a cue."""
_CAPITALISED_NEXT = re.compile(
    r"(?:\s+(?:Actions|Pages|Docs|Sheets|Drive|Cloud|Teams|Lighthouse))+"
)
_QUOTED = re.compile(
    r"(?:\"|“)(?P<title>[^\"“”\n]{1,60}?)(?:\"|”)|(?<!\w)'(?P<single>[A-Z][^'\n]{0,60}?)'(?!\w)"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|[\n\"“(]\s*)$")


class RuleBasedEntityExtractor:
    """The offline default: patterns and gazetteers, no model.

    Exact values (URLs, UUIDs, e-mails, file paths, versions, amounts, IP addresses, ticket ids)
    and dates come from patterns; technologies, well-known organisations and places from small
    word lists; other capitalised names from their context ("my friend Ana", "moved to Lyon",
    "works at Initech"). Spans never overlap: a more specific kind wins.

    Args:
        labels: Keep only these labels (default: all).
        min_score: Drop mentions scored below this.

    Example:
        >>> import asyncio
        >>> found = asyncio.run(RuleBasedEntityExtractor().extract(
        ...     "My friend Ana works at Initech Labs and uses PostgreSQL 15.2.1."))
        >>> [(e.name, e.label) for e in found]  # doctest: +NORMALIZE_WHITESPACE
        [('Ana', 'person'), ('Initech Labs', 'organization'),
         ('PostgreSQL', 'technology'), ('15.2.1', 'value')]
    """

    def __init__(self, labels: Sequence[str] | None = None, min_score: float = 0.0) -> None:
        self._labels = frozenset(labels) if labels is not None else None
        self._min_score = min_score

    async def extract(self, text: str) -> list[ExtractedEntity]:
        """Mentions in ``text``, in order of appearance."""
        return self.extract_sync(text)

    def extract_sync(self, text: str) -> list[ExtractedEntity]:
        """The same as :meth:`extract`, without an event loop (pure and fast)."""
        text = text[:MAX_TEXT_CHARS]
        found: list[ExtractedEntity] = []

        def add(start: int, end: int, label: str, score: float) -> None:
            name = text[start:end].strip().rstrip(".,;:!?")
            if not name:
                return
            start = text.index(name, start)
            found.append(ExtractedEntity(name, label, start, start + len(name), score))

        for pattern in _VALUE_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "value", 0.95)
        for pattern in _DATE_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "date", 0.9)
        for match in _TECH_PATTERN.finditer(text):
            word = match.group(1)
            lowered = word.lower()
            if (lowered in _AMBIGUOUS_TECH or lowered in MORE_TECHNOLOGIES) and not word[
                0
            ].isupper():
                continue  # "react", "spark", "rust", "zoom" are words first, products second
            end = match.end(1)
            following = _CAPITALISED_NEXT.match(text, end)
            if following is not None:  # "GitHub Actions", "Google Docs": the product's full name
                end = following.end()
            add(match.start(1), end, "technology", 0.85)
            version = _VERSION_AFTER.match(text, end)
            if version is not None:  # "SQLite 3.39", "Flask 2.3.1": the version, verbatim
                add(version.start(1), version.end(1), "value", 0.9)
        for match in _QUOTED.finditer(text):
            title = (match.group("title") or match.group("single")).strip().rstrip(".,!?")
            if 0 < len(title.split()) <= 5 and title[:1].isupper():
                start = text.index(title, match.start())
                add(start, start + len(title), "title", 0.75)
        for pattern in _ORG_PATTERNS:
            for match in pattern.finditer(text):
                add(match.start(), match.end(), "organization", 0.8)
        for phrase in _PLACE_PHRASES:
            for match in re.finditer(rf"\b{re.escape(phrase)}\b", text):
                add(match.start(), match.end(), "location", 0.85)
        for match in _CAPITALISED.finditer(text):
            self._capitalised(text, match.start(), match.end(), add)
        return self._resolve(found)

    def _capitalised(self, text: str, start: int, end: int, add: Any) -> None:
        tokens = text[start:end].split()
        # Drop leading stop words ("Thanks Mel" -> "Mel", "The Louvre" keeps "Louvre").
        while tokens and _POSSESSIVE.sub("", tokens[0]) in _STOP:
            start = text.index(tokens[0], start) + len(tokens[0])
            tokens = tokens[1:]
        software = False
        while tokens and (
            _POSSESSIVE.sub("", tokens[-1]) in _STOP or tokens[-1] in _SOFTWARE_WORDS
        ):
            software = software or tokens[-1] in _SOFTWARE_WORDS  # "Formspree API"
            tokens = tokens[:-1]
        if tokens and _POSSESSIVE.search(tokens[-1]):
            tokens[-1] = _POSSESSIVE.sub("", tokens[-1])
        if not tokens:
            return
        start = text.index(tokens[0], start)
        end = text.index(tokens[-1], start) + len(tokens[-1])
        name = text[start:end]
        before = text[max(0, start - 40) : start]
        if software and not name.isupper():
            add(start, end, "technology", 0.75)
            return
        tail = _EVENT_TAIL.match(text, end)
        if tail is not None and not name.isupper() and tokens[0] not in FIRST_NAMES:
            add(start, tail.end(), "event", 0.75)  # "Pride fest", "the Perseid meteor shower"
            return
        label, score = self._kind(text, name, tokens, start, end, before)
        if label is not None:
            add(start, end, label, score)
        elif len(tokens) > 1 and tokens[-1] in FIRST_NAMES:
            # "Congrats Caroline", "Yeah Mel": a leading word that is no name
            self._capitalised(text, text.index(tokens[-1], start), end, add)

    def _kind(
        self, text: str, name: str, tokens: list[str], start: int, end: int, before: str
    ) -> tuple[str | None, float]:
        """The label of a capitalised phrase, or ``None`` when nothing says what it names.

        A capitalised word is a person only with evidence (a first name, a cue, a name said in
        address); upper-case words only when known ("LGBTQ", "API" and "MVP" name nothing).
        """
        last = tokens[-1]
        first_name = tokens[0] in FIRST_NAMES
        if name in _ORGANISATIONS or name in ORGANISATION_ACRONYMS:
            return "organization", 0.85
        if name in _PLACES:
            return "location", 0.85
        if name in TECHNOLOGY_ACRONYMS:
            return "technology", 0.8
        if len(tokens) in (2, 3) and tokens[0] in _ORGANISATIONS and last in _PRODUCT_WORDS:
            return "technology", 0.8  # "Google Lighthouse", "Microsoft Teams"
        if tokens[0] in EVENT_NAMES or (len(tokens) > 1 and last in EVENT_NOUNS):
            return "event", 0.75
        if len(tokens) > 1 and last in PLACE_NOUNS:
            return "location", 0.75
        if (
            first_name
            and len(tokens) <= 3
            and not _ORG_CUE.search(before)
            and not (
                len(tokens) == 1
                and name in _WORD_NAMES
                and _SENTENCE_START.search(text[max(0, start - 3) : start])
            )
        ):
            return "person", 0.75
        if _ORG_CUE.search(before):
            return "organization", 0.7
        if _PERSON_CUE.search(before) and len(tokens) <= 3:
            return "person", 0.7  # "my friend Ana", "I met EVA LIND"
        if name.isupper():
            return None, 0.0  # an acronym nobody listed: a name of something, unknown what
        if any(_PRODUCT_SHAPE.search(token) for token in tokens):
            return "technology", 0.6
        if _PLACE_CUE.search(before):
            return "location", 0.7
        if _WEAK_PERSON_CUE.search(before) and len(tokens) <= 3:
            return "person", 0.6
        if (
            len(tokens) == 1
            and _ADDRESS_BEFORE.search(before)
            and _ADDRESS_AFTER.match(text, end)
            and not _SENTENCE_START.search(text[max(0, start - 3) : start])
        ):
            return "person", 0.65  # said in address: "Thanks, Mell!", "Wow, Caro, ..."
        return None, 0.0

    def _resolve(self, found: list[ExtractedEntity]) -> list[ExtractedEntity]:
        rank = {
            "value": 0,
            "date": 1,
            "title": 2,
            "technology": 3,
            "organization": 4,
            "location": 5,
            "event": 6,
        }
        ordered = sorted(found, key=lambda e: (rank.get(e.label, 7), -(e.end - e.start), e.start))
        taken: list[ExtractedEntity] = []
        for entity in ordered:
            if self._labels is not None and entity.label not in self._labels:
                continue
            if entity.score < self._min_score:
                continue
            if any(entity.start < t.end and t.start < entity.end for t in taken):
                continue
            taken.append(entity)
        return sorted(taken, key=lambda e: e.start)
