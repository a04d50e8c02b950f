"""What consolidation remembers inside a fact's metadata, under one ``"consolidation"`` key.

Why in the fact: decay must be idempotent, so it is computed from a stored *base* strength and a
reference time, never by halving the current strength again; and a merge or a supersession that a
user reverted must not be redone by the next run, so the pair is remembered as *kept apart*.
Keeping both in the fact (not in a side table) means they travel with it through every store and
are restored by ``ContextEngine.revert`` like any other field.

The same key holds ``structure``: what the fact states, read from its words when it has no
triple (:mod:`.structure`), written whenever a run writes the fact's metadata anyway (a merge
into it, a decay), so a later run reads it instead of reading the words again.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from sagewai.core._records import Fact

__all__ = ["META_KEY", "base_strength", "keep_apart", "with_annotations"]

META_KEY = "consolidation"


def _annotations(fact: Fact) -> dict[str, JsonValue]:
    value = fact.metadata.get(META_KEY)
    return dict(value) if isinstance(value, dict) else {}


def base_strength(fact: Fact) -> float:
    """The strength a fact decays from: recorded at its last reinforcement, else its strength."""
    value = _annotations(fact).get("base_strength")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return fact.strength


def keep_apart(fact: Fact) -> frozenset[str]:
    """Ids of facts a user said this fact must not be merged with nor resolved against."""
    value = _annotations(fact).get("keep_apart")
    if isinstance(value, list):
        return frozenset(item for item in value if isinstance(item, str))
    return frozenset()


def with_annotations(fact: Fact, **updates: Any) -> dict[str, JsonValue]:
    """The fact's metadata with consolidation annotations updated (``None`` removes one)."""
    annotations = _annotations(fact)
    for name, value in updates.items():
        if value is None:
            annotations.pop(name, None)
        else:
            annotations[name] = value
    metadata = dict(fact.metadata)
    if annotations:
        metadata[META_KEY] = annotations
    else:
        metadata.pop(META_KEY, None)
    return metadata
