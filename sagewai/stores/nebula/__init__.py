"""The NebulaGraph graph backend (``pip install "sagewai[nebula]"``) and its nGQL builders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.nebula._graph import NebulaGraphStore

__all__ = [
    "NebulaGraphStore",
]

_LAZY = {
    "NebulaGraphStore": "sagewai.stores.nebula._graph",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
