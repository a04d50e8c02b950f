"""The context layer: the engine, scopes, the memory bridge and episodes.

``MemoryBridge`` is imported on first use so that importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagewai.context.bridge import MemoryBridge

__all__ = ["MemoryBridge"]


def __getattr__(name: str) -> Any:
    if name == "MemoryBridge":
        from sagewai.context.bridge import MemoryBridge

        return MemoryBridge
    raise AttributeError(f"module 'sagewai.context' has no attribute {name!r}")
