"""The memory bridge's collaborators (see :mod:`sagewai.context.bridge._bridge`).

Import :class:`~sagewai.context.MemoryBridge` and :class:`~sagewai.context.BridgeSettings` from
:mod:`sagewai.context`; ``docs/architecture.md`` draws the path of one message through them.
"""
