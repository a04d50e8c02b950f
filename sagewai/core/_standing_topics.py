"""When a user's new instruction ends an earlier one: the same topic, changed or reversed.

A standing instruction carries a single-valued triple ``(user, instruction_<aspect>, said)``
(:mod:`sagewai.core._profile`), so a new instruction about the same aspect replaces the old
one by the triple rule ("always answer in French" -> "from now on answer in German"). People
also change an instruction in words that name no aspect the same way: "Never deploy to
production on Fridays." is lifted by "Actually, you can deploy on Fridays now.", "Always end with
a question." by "Stop ending with a question.", "I prefer aisle seats." by "I now prefer window
seats.". :func:`ends_standing` decides those, for the reconciliation rules
(:func:`sagewai.core._claims.supersedes`) and the profile's own ``set``:

* the two statements are about the same **topic**: their content words, with the modal,
  negation, standing and change words taken out (:func:`topic_words`), overlap so that at
  least three quarters of the new statement's topic and 40% of the old one's are shared
  (:func:`same_topic`);
  a change that names what it replaces ("instead of bullet points", "forget what I said about
  emojis") is compared by that name;
* and the new statement **changes** something: it says it is a change (the extractor's
  ``change`` mark: "actually", "now", "anymore", "feel free to", "no need to", "instead of",
  "I've changed my mind"), or it reverses the old one's polarity ("never X" -> "always X",
  "always X" -> "stop X-ing").

Two instructions of the same polarity about overlapping things, with no change said ("Always
cite your sources." and "Always cite sources with links."), both stand. Pure functions.
"""

from __future__ import annotations

import functools
import re

from sagewai.core._predicates import INSTRUCTION_PREFIX

__all__ = [
    "MIN_NEW_SHARE",
    "MIN_OLD_SHARE",
    "ends_standing",
    "is_standing_predicate",
    "polarity",
    "same_topic",
    "topic_words",
]

MIN_NEW_SHARE = 0.75
"""Share of the new statement's topic words the old one must have: a change names (nearly)
only what it changes ("deploy on Fridays"), an unrelated instruction brings words of its own."""
MIN_OLD_SHARE = 0.4
"""Share of the old statement's topic words the new one must have."""

_STANDING_PREFERENCES = frozenset({"prefers"})
_NEGATIVE = re.compile(
    r"\b(?:never|not|no more|don'?t|doesn'?t|avoid|refrain|stop|quit|without)\b|n't\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'+#-]*")
_FUNCTION_WORDS = frozenset(
    """
    a an the and or but to of in on at for with by from as into about over under than then
    i me my mine myself we us our you your yours yourself it its this that these those there
    here he she they them his her their what which who whom when where why how whatever
    please always never ever now anymore any more longer no not don't dont do does did doing
    done isn't aren't wasn't won't can't cannot shouldn't stop stopped quit avoid refrain
    from going forward future henceforth whenever every each time times onward onwards
    is are am was were be been being has have had having will would shall should can could
    may might must need needs needed want wants wanted like would'd i'd i'm i've it's that's
    there's let's let make sure remember just also only all some so very really actually
    okay ok alright fine free feel allowed welcome go ahead again instead change changed mind
    forget ignore disregard scratch said say told tell earlier before previous previously rule
    rules instruction instructions whole thing things after these days nowadays nevermind
    use using used uses prefer prefers preferred preference answer answers answering answered
    reply replies replying respond responses response anything something everything thing
    things stuff
    """.split()  # noqa: SIM905 - a word list reads best as prose
)


def _stem(word: str) -> str:
    word = word.strip("'-")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if (
            len(word) > len(suffix) + 2
            and word.endswith(suffix)
            and not word.endswith(("ss", "us"))
        ):
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]  # "stopp(ing)", "formatt(ing)"
    return word


@functools.lru_cache(maxsize=4096)
def topic_words(text: str) -> frozenset[str]:
    """The content words of an instruction, stemmed, without its modal, negation, standing
    and change words: what it is about.

    Example:
        >>> sorted(topic_words("Never deploy on Fridays."))
        ['deploy', 'friday']
        >>> sorted(topic_words("Actually, you can deploy on Fridays again now."))
        ['deploy', 'friday']
        >>> sorted(topic_words("Stop ending your answers with a question."))
        ['end', 'question']
    """
    words = (w for w in _WORD.findall(text.casefold().replace("’", "'")))
    return frozenset(
        _stem(w) for w in words if w not in _FUNCTION_WORDS and w.strip("'-") and len(w) > 1
    )


def polarity(text: str) -> int:
    """-1 for an instruction that forbids ("never", "don't", "stop", "avoid"), else 1.

    Example:
        >>> polarity("Never deploy on Fridays."), polarity("You can deploy on Fridays.")
        (-1, 1)
    """
    return -1 if _NEGATIVE.search(text.replace("’", "'")) else 1


def same_topic(new: str, old: str) -> bool:
    """True when ``new`` and ``old`` are about the same thing (see the module).

    Example:
        >>> same_topic("deploy on Fridays", "Never deploy to production on Fridays.")
        True
        >>> same_topic("deploy the docs site whenever", "Never deploy on Fridays.")
        False
    """
    a, b = topic_words(new), topic_words(old)
    if not a or not b:
        return False
    shared = len(a & b)
    return shared > 0 and shared / len(a) >= MIN_NEW_SHARE and shared / len(b) >= MIN_OLD_SHARE


def is_standing_predicate(predicate: str) -> bool:
    """An instruction's predicate, or a stable preference's (``prefers``)."""
    return predicate.startswith(INSTRUCTION_PREFIX) or predicate in _STANDING_PREFERENCES


def ends_standing(
    new: str, old: str, *, changed: bool = False, replaces: str | None = None
) -> bool:
    """True when the statement ``new`` ends the standing statement ``old`` (see the module).

    Args:
        new: What the new statement says (its object: the user's words).
        old: What the earlier statement says.
        changed: The new statement says it is a change (an extractor's ``change`` mark).
        replaces: What a change names as replaced ("bullet points" of "instead of bullet
            points, ..."); the topic is compared by it.

    Example:
        >>> ends_standing("You can deploy on Fridays now.", "Never deploy on Fridays.",
        ...               changed=True)
        True
        >>> ends_standing("Always deploy on Fridays.", "Never deploy on Fridays.")
        True
        >>> ends_standing("Always cite sources with links.", "Always cite your sources.")
        False
        >>> ends_standing("Feel free to use emojis.", "Never deploy on Fridays.", changed=True)
        False
    """
    if replaces and same_topic(replaces, old):
        return True
    if not same_topic(new, old):
        return False
    return changed or polarity(new) != polarity(old)
