"""The rule table of :class:`~.rules.RuleBasedFactExtractor`: English ways of stating a fact.

Base confidences were calibrated on the development part of the labelled set (see
``docs/extraction.md``); builders adjust them per match (see :mod:`.readers`).
"""

from __future__ import annotations

from sagewai.extraction._patterns import Rule
from sagewai.extraction._rulebook_change import CHANGE_RULES
from sagewai.extraction._rulebook_intent import INTENT_RULES
from sagewai.extraction._rulebook_world import WORLD_RULES

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (*INTENT_RULES, *WORLD_RULES, *CHANGE_RULES)
"""Every rule, in table order (ties between equally confident readings keep this order)."""
