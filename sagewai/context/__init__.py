"""The context layer: the engine, its stores, scopes, the memory bridge and episodes.

Names are imported on first use so that importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.context.bridge import MemoryBridge
    from sagewai.core._conversation import ChatMessage, Conversation
    from sagewai.stores._project import ProjectStores

__all__ = ["ChatMessage", "Conversation", "MemoryBridge", "ProjectStores"]

_LAZY = {
    "ChatMessage": "sagewai.core._conversation",
    "Conversation": "sagewai.core._conversation",
    "MemoryBridge": "sagewai.context.bridge",
    "ProjectStores": "sagewai.stores._project",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
