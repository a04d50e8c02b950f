"""Rewriting first person so a fact stands alone: "I moved to Berlin" -> "Alice moved to Berlin".

A stored fact is read later, by someone else, out of its conversation; "I" means nothing there.
First person becomes the speaker (or "the user"/"the assistant" when the speaker is unknown),
with the verb agreeing ("I have" -> "Alice has", "I don't" -> "Alice doesn't"); "my" becomes
"Alice's"; "we" becomes "Alice and others". In an assistant's message "you" becomes the
addressee. Exact values and quoted text are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "default_subject",
    "display_name",
    "possessive",
    "resolve_perspective",
    "stated_name",
    "third_person",
    "we_phrase",
]

_MODALS = frozenset(
    """can could will would shall should may might must can't couldn't won't wouldn't shouldn't
    mustn't cannot was did had used ought""".split()  # noqa: SIM905
)
_IRREGULAR_PRESENT = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "don't": "doesn't",
    "haven't": "hasn't",
    "go": "goes",
    "were": "was",
    "'d": "would",
    "'ll": "will",
    "ain't": "isn't",
    "aren't": "isn't",
    "are": "is",
}
_IRREGULAR_PAST = frozenset(
    """went got had was were did made saw met ran won lost left began broke bought brought caught
    felt found flew held kept knew led paid said sold sent spent stood taught told thought wrote
    gave took came became drove ate fell forgot grew heard hurt let put quit read rode rose sang
    sat slept spoke swam threw understood woke wore built chose drew drank fought forgave hid
    hit lay meant rang shot shut sought stuck swept tore""".split()  # noqa: SIM905
)
_ADVERBS = frozenset(
    """really also still just never always often usually sometimes actually even already only
    definitely absolutely totally truly honestly generally recently finally eventually
    personally currently mostly kind sort pretty basically literally seriously genuinely
    certainly occasionally rarely seldom hardly barely now then again first no longer
    nowadays""".split()  # noqa: SIM905
)
_TOKEN = re.compile(
    r"\b(?P<word>i|me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself)\b"
    r"(?P<clitic>'m|'ve|'ll|'d|'re)?(?![@\w])",
    re.IGNORECASE,
)
_NEXT_WORDS = re.compile(r"\s+([A-Za-z][A-Za-z']*)")
_COORDINATED = re.compile(r"(?:^|[,.;:!?])\s*([^,.;:!?]*?)\s+(?:and|or|&)\s*$", re.IGNORECASE)
_SUBJECT_PRONOUNS = frozenset({"i", "i'm", "i've", "we", "we're", "he", "she", "they", "it", "you"})


def _coordinated(text: str, position: int) -> bool:
    """True for "X and I" as one subject ("my wife and I live"), not "..., and I like it"."""
    match = _COORDINATED.search(text[max(0, position - 60) : position])
    if match is None:
        return False
    words = match.group(1).lower().split()
    return 0 < len(words) <= 4 and _SUBJECT_PRONOUNS.isdisjoint(words)


def third_person(verb: str) -> str:
    """The third-person singular present of ``verb`` ("like" -> "likes", "study" -> "studies").

    Past forms, modals and "-ing" forms are returned unchanged.

    Example:
        >>> [third_person(v) for v in ("like", "go", "watch", "study", "need", "went", "can")]
        ['likes', 'goes', 'watches', 'studies', 'needs', 'went', 'can']
    """
    lower = verb.lower()
    if lower in _IRREGULAR_PRESENT:
        return _match_case(_IRREGULAR_PRESENT[lower], verb)
    if (
        lower in _MODALS
        or lower in _IRREGULAR_PAST
        or (lower.endswith("ed") and not lower.endswith("eed"))
        or lower.endswith(("ing", "n't"))
        or "'" in lower
        or len(lower) < 2
    ):
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _match_case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def default_subject(speaker: str | None, role: str) -> str:
    """The subject first person resolves to: the speaker, else "user" or "assistant"."""
    if speaker:
        return speaker
    return "assistant" if role == "assistant" else "user"


def display_name(speaker: str | None, role: str, user_name: str | None = None) -> str:
    """How first person reads in a fact: the speaker, "Dana (the user)", "the user"...

    Example:
        >>> display_name(None, "user", "Dana"), display_name("Ana", "user", "Dana")
        ('Dana (the user)', 'Ana')
    """
    if speaker:
        return speaker
    if role == "assistant":
        return "the assistant"
    return f"{user_name} (the user)" if user_name else "the user"


def possessive(name: str) -> str:
    """The possessive of a display name: "Ana's", "the user's", "Dana's (the user's)".

    Example:
        >>> possessive("Dana (the user)"), possessive("the user")
        ("Dana's (the user's)", "the user's")
    """
    if name.endswith(" (the user)"):
        return f"{name[: -len(' (the user)')]}'s (the user's)"
    return f"{name}'s"


_WORK_WORDS = frozenset(
    """work job team project projects service services release deploy deployed deploying
    migrate migrated migrating migration build building built ship shipping shipped code
    sprint api database server client customer customers product feature launch launched
    roadmap office company startup meeting standup repo repository stack backend frontend
    decided decide decision quarter deployment deployments deploys pipeline staging production
    cluster codebase infrastructure users""".split()  # noqa: SIM905
)
_FAMILY_WORDS = frozenset(
    """kids kid children child son sons daughter daughters husband wife partner family mom dad
    mother father parents baby grandma grandpa""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z']+")


def we_phrase(name: str, text: str) -> str:
    """Who "we" is in a fact: the user and their team, their family, or others.

    Read from the words of the sentence ("we decided to migrate" is a team; "we took the kids"
    a family); "and others" when the sentence tells neither.

    Example:
        >>> we_phrase("the user", "We decided to migrate to Postgres")
        'the user and their team'
    """
    words = set(_WORD.findall(text.lower()))
    if words & _FAMILY_WORDS:
        return f"{name} and their family"
    if words & _WORK_WORDS:
        return f"{name} and their team"
    return f"{name} and others"


def _protected(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start < stop and begin < end for begin, stop in spans)


def resolve_perspective(
    text: str,
    *,
    speaker: str | None,
    role: str = "user",
    addressee: str | None = None,
    protected: Sequence[tuple[int, int]] = (),
    capitalize: bool = True,
    user_name: str | None = None,
) -> str:
    """Rewrite first person (and, in assistant messages, second person) in ``text``.

    Args:
        text: One clause or sentence.
        speaker: Who said it; ``None`` gives "the user" / "the assistant".
        role: ``user`` or ``assistant``; only an assistant's "you" is resolved (to the user).
        addressee: Who "you" is in an assistant message; default "the user".
        protected: ``(start, end)`` offsets never rewritten (exact values, quotes).
        capitalize: Upper-case the first letter (off for a triple's object).
        user_name: The user's name when known: a user's first person reads "Dana (the user)".

    Example:
        >>> resolve_perspective("I really like my new job", speaker="Alice")
        'Alice really likes their new job'
        >>> resolve_perspective("My sister called me", speaker="Alice")
        "Alice's sister called them"
        >>> resolve_perspective("I'll remind you to call your mom", speaker=None, role="assistant")
        "The assistant will remind the user to call the user's mom"
        >>> resolve_perspective("My team and I lead the platform team", speaker=None,
        ...                     user_name="Dana")
        'Dana (the user) and their team lead the platform team'
        >>> resolve_perspective("I moved again, I live in Hamburg now", speaker=None,
        ...                     user_name="Dana")
        'Dana (the user) moved again, Dana lives in Hamburg now'
    """
    text = _team_first(text)
    name = display_name(speaker, role, user_name)
    you = addressee or ("the user" if role == "assistant" else None)
    pieces: list[str] = []
    cursor = 0
    pending_verb = False
    named = False  # after the first mention, "my" reads "their" and "me" reads "them"
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        if start < cursor or _protected(start, end, protected):
            continue
        word = match.group("word")
        clitic = match.group("clitic") or ""
        lower = word.lower()
        if lower in {"us", "our", "we"} and word.isupper() and len(word) > 1:
            continue  # "US", "OUR" are names, not pronouns
        if lower.startswith("you") or lower == "yourself":
            if you is None:
                continue
            replacement = {
                "you": you,
                "your": f"{you}'s",
                "yours": f"{you}'s",
                "yourself": you,
            }[lower]
            if clitic:
                replacement += {"'re": " is", "'ve": " has", "'ll": " will", "'d": " would"}.get(
                    clitic, clitic
                )
            pieces.append(text[cursor:start])
            pieces.append(replacement)
            cursor = end
            continue
        if lower == "i":
            pieces.append(text[cursor:start])
            # "Dana (the user)" once; a second "I" of the sentence reads "Dana".
            pieces.append(name.removesuffix(" (the user)") if named else name)
            named = True
            cursor = end
            if clitic:
                pieces.append(" " + _IRREGULAR_PRESENT.get(clitic, clitic.lstrip("'")))
            elif not _coordinated(text, start) and not _AND_NEXT.match(text, cursor):
                pending_verb = True  # "my wife and I live": the verb stays plural
            if pending_verb:
                cursor = _conjugate_next(text, cursor, pieces, protected)
                pending_verb = False
            continue
        if lower in {"we", "us", "ourselves"}:
            replacement = we_phrase(name, text)
            if clitic:
                replacement += {"'re": " are", "'ve": " have", "'ll": " will", "'d": " would"}.get(
                    clitic, clitic
                )
        elif lower in {"my", "mine", "our", "ours"}:
            replacement = "their" if named and lower in {"my", "our"} else possessive(name)
            named = True
        elif lower == "me":
            replacement = "them" if named else name
            named = True
        else:  # myself
            replacement = "themself" if speaker else name
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    result = "".join(pieces)
    if not capitalize or not result or any(start == 0 for start, _ in protected):
        return result  # never touch an exact value that opens the text
    return result[:1].upper() + result[1:]


_AND_NEXT = re.compile(r"\s+and\s", re.IGNORECASE)
_TEAM_FIRST = re.compile(
    r"^(?P<lead>\s*)(?P<owner>my|our)\s+(?P<group>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+and\s+I\b",
    re.IGNORECASE,
)


def _team_first(text: str) -> str:
    """ "My team and I are" -> "I and my team are": the user first, the verb stays plural."""
    match = _TEAM_FIRST.match(text)
    if match is None:
        return text
    return f"{match['lead']}I and my {match['group']}{text[match.end() :]}"


def _conjugate_next(
    text: str, cursor: int, pieces: list[str], protected: Sequence[tuple[int, int]]
) -> int:
    """Append the verb after "I" in third person (skipping adverbs); return the new cursor."""
    position = cursor
    for _ in range(4):
        match = _NEXT_WORDS.match(text, position)
        if match is None:
            return cursor
        word = match.group(1)
        if _protected(match.start(1), match.end(1), protected):
            return cursor  # an exact value follows: never conjugate it
        if word.lower() in _ADVERBS or word.lower().endswith("ly"):
            position = match.end()
            continue
        pieces.append(text[cursor : match.start(1)])
        pieces.append(third_person(word))
        return match.end()
    return cursor


_NAME_WORD = r"[A-Z][a-z](?:[\w'-]*[a-z])?"
_STATED_NAME = re.compile(
    rf"\b(?:my\s+name\s+is|my\s+name's|call\s+me|you\s+can\s+call\s+me)\s+"
    rf"(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD})?)",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    """Not Just Really Actually Still Now The A An And But Or So Please Maybe Anything
    Whatever Something Someone Here There Later Back Sir Madam Ma'am""".split()  # noqa: SIM905
)


def stated_name(text: str) -> str | None:
    """The name a speaker gives for themself ("My name is Dana", "call me Dana"), or ``None``.

    Example:
        >>> stated_name("My name is Dana and I lead the platform team.")
        'Dana'
        >>> stated_name("my name is not important") is None
        True
    """
    for match in _STATED_NAME.finditer(text):
        words = match["name"].split()
        if not words[0][:1].isupper() or words[0] in _NOT_NAMES:
            continue
        if len(words) > 1 and (words[1] in _NOT_NAMES or not words[1][:1].isupper()):
            words = words[:1]
        return " ".join(words)
    return None
