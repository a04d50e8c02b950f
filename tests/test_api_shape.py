"""The shape of the main objects stays small (issue 36): a reader meets few parameters and few
members, and one configuration convention."""

from __future__ import annotations

import inspect

from sagewai import ContextEngine, UniversalAgent
from sagewai.context import BridgeSettings, MemoryBridge
from sagewai.intelligence import ConsolidationSettings, MemoryConsolidator
from sagewai.testing import FakeEmbedder


def _parameters(function: object) -> list[str]:
    """The parameters of a constructor but ``self`` and the settings object."""
    names = list(inspect.signature(function).parameters)  # type: ignore[arg-type]
    return [name for name in names if name not in {"self", "settings"}]


def test_the_bridge_and_the_agent_take_few_parameters_besides_their_settings() -> None:
    assert len(_parameters(MemoryBridge.__init__)) <= 8
    assert len(_parameters(UniversalAgent.__init__)) <= 8
    assert len(_parameters(MemoryConsolidator.__init__)) <= 8


def test_every_part_takes_a_settings_object_and_its_fields_by_name() -> None:
    for part, settings in (
        (MemoryBridge, BridgeSettings),
        (MemoryConsolidator, ConsolidationSettings),
    ):
        parameter = inspect.signature(part.__init__).parameters["settings"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, part
        assert settings.__name__ in str(parameter.annotation), part
    engine = ContextEngine.in_memory(embedder=FakeEmbedder())
    by_name = MemoryBridge(context_engine=engine, extract_every_n_turns=3, journal=False)
    given = MemoryBridge(engine, settings=BridgeSettings(extract_every_n_turns=3, journal=False))
    assert by_name.settings == given.settings
    overridden = MemoryBridge(
        engine, settings=BridgeSettings(extract_every_n_turns=3), journal=False
    )
    assert overridden.settings.extract_every_n_turns == 3
    assert overridden.settings.journal is False


def test_the_engine_has_at_most_thirty_public_members() -> None:
    engine = ContextEngine.in_memory(embedder=FakeEmbedder())
    members = [name for name in dir(engine) if not name.startswith("_")]
    assert len(members) <= 30, members
