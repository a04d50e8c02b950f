"""The memory bridge: where an agent's conversation becomes memory.

:class:`MemoryBridge` takes chat turns and stores each one verbatim, with a context record and
the facts an extractor reads from it, reconciled with what the scope already holds; see
:mod:`sagewai.context.bridge._bridge` for its collaborators and ``docs/architecture.md`` for the
path of one message. Every tunable value is a field of :class:`BridgeSettings`.

Example:
    >>> from sagewai.context.bridge import BridgeSettings, fact_id_for
    >>> BridgeSettings(extract_every_n_turns=2).extract_every_n_turns
    2
    >>> fact_id_for("p", "s1", "m1", 0) == fact_id_for("p", "s1", "m1", 0)
    True
"""

from sagewai.context.bridge._bridge import MemoryBridge
from sagewai.context.bridge._settings import BridgeOptions, BridgeSettings
from sagewai.context.bridge._turns import BridgeStats, BridgeTurn, fact_id_for, message_record_id

__all__ = [
    "BridgeOptions",
    "BridgeSettings",
    "BridgeStats",
    "BridgeTurn",
    "MemoryBridge",
    "fact_id_for",
    "message_record_id",
]
