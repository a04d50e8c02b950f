"""A search that names only a subject shows that subject's synthesis first.

Why: consolidation's reflection writes one synthesis per subject (what is current about it),
but a person named in hundreds of records is named in each of them, so "What do you know about
Caroline?" ranked a dozen of her facts above her synthesis on LoCoMo. When a query asks about
a subject and nothing more (its words, once the question words are set aside, are exactly a
subject's name), the subject's synthesis in the searched scopes is put first. A question about
anything more specific ("What did Caroline research?") is ranked as before, so syntheses take
no place from the facts that answer it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from sagewai.core._port import MemoryPort
from sagewai.core._queries import FactQuery
from sagewai.core._records import Fact, FactKind, SearchResult
from sagewai.core._scope import ContextScope

__all__ = ["named_subject", "synthesis_first"]

_NEARNESS = {
    ContextScope.ORG: 0,
    ContextScope.PROJECT: 1,
    ContextScope.USER: 2,
    ContextScope.SESSION: 3,
}
_WORD = re.compile(r"[^\W_][\w'.-]*")
_MAX_NAME_WORDS = 4
_QUESTION_WORDS = frozenset(
    """
    a about all an any anything are can could details do does did everything give info
    information is know knows learned me of on overview please profile recall remember s say
    show summarise summarize summary tell the us was we what who whom would you your
    """.split()  # noqa: SIM905 - a paragraph of words reads better than 46 strings
)
"""Words that ask about a subject without saying anything about it."""


def named_subject(query: str) -> str | None:
    """What a query names once its question words are set aside, as written: the subject it
    asks about when that is a subject's name (``None``: nothing, or more than a name's length).

    Example:
        >>> named_subject("What do you know about Caroline?")
        'Caroline'
        >>> named_subject("Tell me about the billing-api")
        'billing-api'
        >>> named_subject("What did Caroline research?")  # no subject is called that
        'Caroline research'
        >>> named_subject("What did Caroline research in the library last year?") is None
        True
    """
    words = [w.rstrip(".'") for w in _WORD.findall(query)]
    words = [w[:-2] if w.casefold().endswith("'s") else w for w in words]
    kept = [w for w in words if w and w.casefold() not in _QUESTION_WORDS]
    if not kept or len(kept) > _MAX_NAME_WORDS:
        return None
    return " ".join(kept)


def _key(subject: str) -> str:
    return " ".join(subject.casefold().split())


async def synthesis_first(
    port: MemoryPort,
    query: str,
    where: FactQuery,
    results: Sequence[SearchResult],
    top_k: int,
) -> list[SearchResult]:
    """``results`` with the synthesis of the subject ``query`` names put first (if any).

    ``where`` is the search's own filter (scopes, statuses, types, tags); a search that leaves
    syntheses out, or asks about the past, is returned as it is.
    """
    name = named_subject(query)
    if name is None or where.valid_at is not None:
        return list(results)
    if where.kinds is not None and FactKind.SYNTHESIS not in where.kinds:
        return list(results)
    key = _key(name)
    spellings = tuple(dict.fromkeys([name, name[:1].upper() + name[1:], name.casefold()]))
    wanted = dataclasses.replace(where, kinds=(FactKind.SYNTHESIS,), subjects=spellings, limit=10)
    found: list[Fact] = [
        f for f in await port.find(wanted) if f.subject is not None and _key(f.subject) == key
    ]
    if not found:
        return list(results)
    synthesis = max(found, key=lambda f: (_NEARNESS[f.scope], f.created_at))  # nearest scope
    rest = [r for r in results if r.fact.id != synthesis.id]
    score = max([r.score for r in results], default=1.0)
    return [SearchResult(fact=synthesis, score=score), *rest][:top_k]
