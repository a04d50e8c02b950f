"""Conformance suites for store backends: a factory in, the whole suite out.

Each suite is a pytest class. Subclass it in a test file of your own, override its
``make_store`` fixture to return a function that makes a new store of your backend, and pytest
runs every test of the contract against it, exactly as sagewai runs them against its own
backends::

    import pytest
    from sagewai.testing.conformance import MetadataStoreConformance

    class TestMyMetadataStore(MetadataStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyMetadataStore(tmp_path / "facts.db")

* :class:`MetadataStoreConformance` for a :class:`~sagewai.stores.MetadataStore`;
* :class:`VectorStoreConformance` for a :class:`~sagewai.stores.VectorStore`;
* :class:`GraphStoreConformance` for a :class:`~sagewai.stores.GraphStore`;
* :class:`EpisodeStoreConformance` for an :class:`~sagewai.stores.EpisodeStoreBase`.

The suites need ``pytest`` and ``pytest-asyncio``; importing one without them raises
:class:`~sagewai.errors.MissingDependencyError` with the command to run. ``docs/backends.md``
walks through a complete example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.testing.conformance._episodes import EpisodeStoreConformance
    from sagewai.testing.conformance._graph import GraphStoreConformance
    from sagewai.testing.conformance._metadata import MetadataStoreConformance
    from sagewai.testing.conformance._vector import VectorStoreConformance

__all__ = [
    "EpisodeStoreConformance",
    "GraphStoreConformance",
    "MetadataStoreConformance",
    "VectorStoreConformance",
]

_LAZY = {
    "EpisodeStoreConformance": "sagewai.testing.conformance._episodes",
    "GraphStoreConformance": "sagewai.testing.conformance._graph",
    "MetadataStoreConformance": "sagewai.testing.conformance._metadata",
    "VectorStoreConformance": "sagewai.testing.conformance._vector",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
