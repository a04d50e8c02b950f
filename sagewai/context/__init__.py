"""The context layer: the engine, the memory bridge, episodes and archives.

* :class:`ContextEngine` (also named at the root, ``from sagewai import ContextEngine``): the one
  door to a project's stored knowledge;
* :class:`ForgetReport`: the receipt ``ContextEngine.forget`` returns, counted per store;
* :class:`MemoryBridge` with its :class:`BridgeSettings`: conversation turns in, verbatim records
  and reconciled facts out (:mod:`sagewai.context.bridge` holds its collaborators);
* :class:`Profile`: a user's standing instructions, preferences and identity
  (``ctx.profile(user_id=...)``);
* :mod:`sagewai.context.episodes`: whole sessions; :mod:`sagewai.context.archive`: export,
  import and migration of a project.

Names are imported on first use so that importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.context._forgetting import ForgetReport
    from sagewai.context._profile import Profile
    from sagewai.context.bridge._bridge import MemoryBridge
    from sagewai.context.bridge._settings import BridgeOptions, BridgeSettings
    from sagewai.context.bridge._turns import BridgeStats, BridgeTurn

__all__ = [
    "BridgeOptions",
    "BridgeSettings",
    "BridgeStats",
    "BridgeTurn",
    "ContextEngine",
    "ForgetReport",
    "MemoryBridge",
    "Profile",
]

_LAZY = {
    "BridgeOptions": "sagewai.context.bridge._settings",
    "BridgeSettings": "sagewai.context.bridge._settings",
    "BridgeStats": "sagewai.context.bridge._turns",
    "BridgeTurn": "sagewai.context.bridge._turns",
    "ContextEngine": "sagewai.context._engine",
    "ForgetReport": "sagewai.context._forgetting",
    "MemoryBridge": "sagewai.context.bridge._bridge",
    "Profile": "sagewai.context._profile",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
