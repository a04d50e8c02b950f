"""The context layer: the engine, its stores, scopes, the memory bridge and episodes.

Names are imported on first use so that importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.context.bridge import MemoryBridge
    from sagewai.context.stores import ProjectStores
    from sagewai.core.conversation import ChatMessage, Conversation

__all__ = ["ChatMessage", "Conversation", "MemoryBridge", "ProjectStores"]

_LAZY = {
    "ChatMessage": "sagewai.core.conversation",
    "Conversation": "sagewai.core.conversation",
    "MemoryBridge": "sagewai.context.bridge",
    "ProjectStores": "sagewai.context.stores",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
