"""Memory consolidation: merge near-duplicates, decay unused facts, reconcile contradictions.

Run it on a schedule (``sagewai consolidate``, see docs/consolidation.md) or from code:

    report = await MemoryConsolidator(context_engine=ctx).consolidate(dry_run=True)

Import :class:`~sagewai.intelligence.MemoryConsolidator` and its records from
:mod:`sagewai.intelligence`; this package holds their implementation.
"""
