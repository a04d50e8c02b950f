"""Which records of a turn take a vector the write has anyway instead of embedding their text.

Embedding is most of what a message costs to store. A turn used to embed three texts: the
message, its context record (the end of the turn before it, then the message) and each fact
drawn from it, though the last two mostly say what is embedded already. The rule:

* the **message** is embedded (each distinct text once per write, see
  :func:`sagewai.context._reconcile.embed_distinct`);
* its **context record** takes the sum of the message's vector and the vector of the turn
  before it, weighted by how much of each the record holds (its characters), normalised: a
  mean-pooled sentence embedding of two texts put together is close to that sum, and both
  vectors are at hand. Only when the record holds the whole turn before (:func:`holds_whole`):
  a record that holds only the end of a long turn (the last 300 characters of a 4,000-character
  reply) is embedded, since the turn's vector says what the rest of the turn says;
* a **fact that restates its message** (:func:`restates`: it holds at least
  :data:`RESTATES` of the message's words, the speaker's pronouns aside) takes the message's
  vector, one fact per message (the one that holds most); any other fact is embedded.

``docs/bridge.md`` has the measured cost in recall and the gain in speed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sagewai.context._reconcile import Candidate, SharedVector

__all__ = ["RESTATES", "holds_whole", "restates", "restating_fact"]

RESTATES = 0.8
"""The share of a message's words a fact must hold to take the message's vector."""

_WORD = re.compile(r"[a-z0-9]+")
_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves "  # noqa: SIM905
    "im ive id ill s t re ve ll d".split()
)
"""Words the rules rewrite in a fact ("I" -> "Dana", "my" -> "their") or that are pieces of
contractions; a message is not judged by them."""


def holds_whole(prefix_chars: int, previous: str) -> bool:
    """Whether a context record whose prefix is ``prefix_chars`` long holds the whole turn
    before it (``previous``), so the turn's vector says what the record holds of it.

    Example:
        >>> holds_whole(17, "  Did you go there?  ")
        True
        >>> holds_whole(300, "A long reply. " * 100)  # the record holds its last 300 characters
        False
    """
    return prefix_chars > 0 and prefix_chars >= len(previous.strip())


def _words(text: str) -> set[str]:
    """The text's words, lowercased, a plural or third-person ``s`` dropped."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower().replace("'", "").replace("\u2019", "")):
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return out


def restates(fact: str, message: str) -> float:
    """The share of ``message``'s words that ``fact`` holds (its pronouns aside); 0 when the
    message has no such word.

    Example:
        >>> restates("Dana loves painting sunsets.", "I love painting sunsets!")
        1.0
        >>> restates("Dana has a dog.", "I have a dog and two cats.")  # a, dog of six words
        0.3333333333333333
    """
    wanted = _words(message) - _PRONOUNS
    if not wanted:
        return 0.0
    return len(wanted & _words(fact)) / len(wanted)


def restating_fact(
    candidates: Sequence[Candidate], message: str, message_record: str
) -> dict[str, SharedVector]:
    """The one candidate (of one message) that restates it, mapped to the message's vector.

    Example:
        >>> from sagewai import Fact, Provenance
        >>> fact = Fact(id="f1", project_id="p", content="Dana loves painting.")
        >>> one = Candidate(fact=fact, role="user", source=Provenance(message_id="m1"))
        >>> restating_fact([one], "I love painting!", "m-record")
        {'f1': SharedVector(parts=(('m-record', 1.0),))}
    """
    best: tuple[float, str] | None = None
    for candidate in candidates:
        share = restates(candidate.fact.content, message)
        if share >= RESTATES and (best is None or share > best[0]):
            best = (share, candidate.fact.id)
    return {} if best is None else {best[1]: SharedVector(((message_record, 1.0),))}
