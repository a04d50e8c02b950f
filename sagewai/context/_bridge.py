"""MemoryBridge: conversation turns in, verbatim messages and reconciled facts (and episodes) out.

The bridge is where an agent's conversation becomes memory. Each accepted message goes through
two stages:

1. **Record** (at once, for every message): the message is stored verbatim as a record of kind
   ``message`` (:data:`~sagewai.core._records.FactKind.MESSAGE`, id :func:`message_record_id`,
   with its provenance), and the cheap rule extractor's facts of it are reconciled and stored.
   Both are searchable from the next turn on.
2. **Extract** (``extract_every_n_turns`` turns at a time): the expensive part of the extractor
   (the model of a :class:`~sagewai.intelligence.HybridFactExtractor`, or a whole
   LLM/custom extractor) reads the buffered turns, each with the turns before it as context.
   ``extract_every_n_turns`` sets how often the model runs, never whether a turn is remembered.

Every fact carries its provenance (session, message id, turn index, role, speaker, time,
extractor): the facts drawn from a message have the message record's ``session_id`` and
``sources[0].message_id``. Facts are reconciled with what the scope already holds (ADD / UPDATE /
NOOP, see :mod:`sagewai.context._reconcile`) and written atomically; messages are never
reconciled, merged or decayed (they are the verbatim source).

Durable on return: with a write-ahead journal (:mod:`sagewai.context.bridge._journal`) every accepted
message is appended to it before the call returns, and only marked done once both stages are
stored. An engine made by ``ContextEngine.local(folder)`` gives its bridges a journal in that
folder by default (``bridge-<project>.journal``); a bridge opened on the folder replays what was
accepted but not stored before its first operation. An engine without a folder (in memory, or
stores you built) has no default journal: pass ``journal_path=`` to have one. Ids are
deterministic (``uuid5(project, session, message id, ...)``), so a replay of work that did land
changes nothing.

Three ways in:

* ``await bridge.process_message(...)`` / ``await bridge.bridge_conversation(...)`` do the work
  before they return (the extract stage when a turn completes the buffer).
* ``await bridge.remember(...)`` (what :class:`~sagewai.UniversalAgent` calls) journals and
  records the message before it returns and leaves the extract stage to the background.
* ``await bridge.submit(...)`` returns as soon as the message is journaled (well under a
  millisecond): a bounded queue feeds background workers that record and extract. When the queue
  is full, ``submit`` waits up to ``submit_timeout`` seconds for room and then raises
  :class:`~sagewai.errors.SagewaiTimeoutError` (the message is then *not* accepted: nothing is
  journaled). ``flush()`` waits until everything accepted so far is stored; ``aclose()`` flushes
  and stops the workers.
"""

from __future__ import annotations

from sagewai.context._memory_bridge import MemoryBridge
from sagewai.context.bridge._turns import BridgeStats, BridgeTurn, fact_id_for, message_record_id

__all__ = ["BridgeStats", "BridgeTurn", "MemoryBridge", "fact_id_for", "message_record_id"]
