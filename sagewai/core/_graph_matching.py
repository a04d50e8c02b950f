"""Pure decisions shared by every graph backend: name keys, mentions in a text, paths, forgetting.

Backends only store and fetch; everything that decides (what counts as the same name, which
entities a text mentions, which paths join two entities, what forgetting a session removes) lives
here once, so it is tested without a backend and behaves the same on all of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from sagewai.core._graph_records import Entity, Relation
from sagewai.core._text import clean_text

__all__ = [
    "MAX_MENTION_WORDS",
    "SessionForgetPlan",
    "adjacency_of",
    "entity_keys",
    "mention_keys",
    "name_key",
    "plan_session_forget",
    "simple_paths",
]

MAX_MENTION_WORDS = 8
"""Longest name, in words, that :func:`mention_keys` looks for in a text."""

_EDGE_PUNCTUATION = ".,;:!?\"'`()[]{}<>«»“”‘’…—–-"
_SPACES = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"(?:'s|'|’s|’)$")


def name_key(name: str) -> str:
    """The form two names must share to be the same name.

    Repaired like every stored name (a lone surrogate becomes U+FFFD, see
    :func:`~sagewai.core._text.clean_text`), so a name is found and forgotten by the text it was
    written with; Unicode-normalised (NFKC), case-folded, whitespace collapsed, curly apostrophes
    made straight, and sentence punctuation trimmed from both ends. Inner punctuation is kept, so
    ``C++``, ``node.js`` and ``AT&T`` stay distinct.

    Example:
        >>> name_key("  The   Hague. ")
        'the hague'
        >>> name_key("Tea \\ud800") == name_key("tea \\ufffd")
        True
    """
    text = unicodedata.normalize("NFKC", clean_text(name)).casefold().replace("’", "'")
    text = _SPACES.sub(" ", text).strip()
    return text.strip(_EDGE_PUNCTUATION + " ")


def entity_keys(entity: Entity) -> tuple[str, ...]:
    """The keys an entity is found by: its name's and every alias's, without repeats or empties."""
    return tuple(k for k in dict.fromkeys(name_key(n) for n in entity.all_names) if k)


def mention_keys(text: str, *, max_words: int = MAX_MENTION_WORDS) -> set[str]:
    """Every key a word-bounded, case-insensitive mention in ``text`` could have.

    The text is split on whitespace; each run of up to ``max_words`` consecutive words becomes a
    candidate (with and without a trailing possessive). An entity is mentioned when one of its
    :func:`entity_keys` is among the candidates, so "Bob" matches "bob's car" but not "Bobby".

    Example:
        >>> sorted(mention_keys("Met Alice Smith."))
        ['alice', 'alice smith', 'met', 'met alice', 'met alice smith', 'smith']
    """
    words = name_key(text).split(" ")
    out: set[str] = set()
    for start in range(len(words)):
        for end in range(start + 1, min(start + max_words, len(words)) + 1):
            candidate = " ".join(words[start:end]).strip(_EDGE_PUNCTUATION + " ")
            if not candidate:
                continue
            out.add(candidate)
            stripped = _POSSESSIVE.sub("", candidate).strip(_EDGE_PUNCTUATION + " ")
            if stripped:
                out.add(stripped)
    return out


def simple_paths(
    adjacency: Mapping[str, Sequence[tuple[str, Relation]]],
    source: str,
    target: str,
    *,
    max_depth: int,
    limit: int,
) -> list[list[tuple[str, Relation]]]:
    """Simple paths from ``source`` to ``target`` of at most ``max_depth`` edges, shortest first.

    ``adjacency`` maps an entity id to its ``(neighbour id, relation)`` pairs (edges are walked in
    both directions). Each path is a list of ``(entity reached, relation walked)`` steps. The search
    is breadth first, so the first paths found are the shortest; it stops after ``limit`` paths.
    """
    if source == target:
        return []
    found: list[list[tuple[str, Relation]]] = []
    queue: deque[tuple[str, list[tuple[str, Relation]], frozenset[str]]] = deque(
        [(source, [], frozenset({source}))]
    )
    while queue and len(found) < limit:
        node, path, seen = queue.popleft()
        if len(path) >= max_depth:
            continue
        for neighbour, relation in adjacency.get(node, ()):
            if neighbour in seen:
                continue
            step = [*path, (neighbour, relation)]
            if neighbour == target:
                found.append(step)
                if len(found) >= limit:
                    break
            else:
                queue.append((neighbour, step, seen | {neighbour}))
    return found


def adjacency_of(relations: Iterable[Relation]) -> dict[str, list[tuple[str, Relation]]]:
    """Both directions of every relation, keyed by entity id, in a stable order."""
    out: dict[str, list[tuple[str, Relation]]] = {}
    for relation in sorted(relations, key=lambda r: (r.created_at, r.id)):
        out.setdefault(relation.subject_id, []).append((relation.object_id, relation))
        if relation.object_id != relation.subject_id:
            out.setdefault(relation.object_id, []).append((relation.subject_id, relation))
    return out


class SessionForgetPlan:
    """What forgetting one session does to a project's graph (see :func:`plan_session_forget`)."""

    __slots__ = ("delete_entities", "delete_relations", "update_entities", "update_relations")

    def __init__(self) -> None:
        self.delete_relations: list[Relation] = []
        self.update_relations: list[Relation] = []
        self.delete_entities: list[str] = []
        self.update_entities: list[Entity] = []


def plan_session_forget(
    session_id: str, entities: Sequence[Entity], relations: Sequence[Relation]
) -> SessionForgetPlan:
    """Decide what forgetting ``session_id`` removes.

    * A relation whose every source is from the session is deleted; one that other sessions (or
      unattributed sources) also support is kept with the session's sources removed.
    * An entity that only the session introduced (``session_ids == (session_id,)``) and that has
      no edge left afterwards is deleted; other entities only lose the session from
      ``session_ids``. Entities added by hand (no ``session_ids``) are never removed this way.
    """
    plan = SessionForgetPlan()
    remaining_edges: dict[str, int] = {}
    for relation in relations:
        if session_id not in relation.session_ids:
            for end in (relation.subject_id, relation.object_id):
                remaining_edges[end] = remaining_edges.get(end, 0) + 1
            continue
        kept = tuple(s for s in relation.sources if s.session_id != session_id)
        if not kept:
            plan.delete_relations.append(relation)
            continue
        plan.update_relations.append(relation.model_copy(update={"sources": kept}))
        for end in (relation.subject_id, relation.object_id):
            remaining_edges[end] = remaining_edges.get(end, 0) + 1
    for entity in entities:
        if session_id not in entity.session_ids:
            continue
        if entity.session_ids == (session_id,) and not remaining_edges.get(entity.id):
            plan.delete_entities.append(entity.id)
        else:
            others = tuple(s for s in entity.session_ids if s != session_id)
            plan.update_entities.append(entity.model_copy(update={"session_ids": others}))
    return plan
