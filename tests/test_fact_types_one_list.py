"""The fact types are listed once, by :class:`~sagewai.core.FactType`; every surface derives them.

Adding a type is a new enum member, its meaning in ``FACT_TYPE_MEANINGS`` beside it, and the
docs. These tests fail when a surface copies the list by hand (a scan of the source for three or
more quoted type names close together) or when a surface lists other types than the enum.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest

from sagewai.core._records import FACT_TYPE_MEANINGS, FactType

ROOT = Path(__file__).resolve().parents[1]
TYPES = [fact_type.value for fact_type in FactType]

SCANNED = ("sagewai", "benchmarks", "evals", "clients/typescript/src", "clients/typescript/test")
SUFFIXES = frozenset({".py", ".js", ".mjs", ".ts", ".html"})
ALLOWED = frozenset(
    {
        "sagewai/core/_records.py",  # the enum itself
        "clients/typescript/src/schema.ts",  # generated from the OpenAPI schema (check-schema)
    }
)
QUOTED = re.compile(r"""["'`](""" + "|".join(map(re.escape, TYPES)) + r""")["'`]""")


def hand_copies(text: str, window: int = 3) -> list[int]:
    """The line numbers where ``window`` lines hold three or more distinct quoted type names."""
    lines = text.splitlines()
    return [
        number + 1
        for number in range(len(lines))
        if len(set(QUOTED.findall("\n".join(lines[number : number + window])))) >= 3
    ]


def test_the_scan_finds_a_copied_list() -> None:
    assert hand_copies('KINDS = ["a"]\nTYPES = ["decision", "preference",\n  "event"]\n') == [1, 2]
    assert hand_copies("where(fact_types=('decision', 'preference'))\n") == []


def test_no_source_file_copies_the_fact_types() -> None:
    copies = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            relative = path.relative_to(ROOT).as_posix()
            if path.suffix not in SUFFIXES or relative in ALLOWED or "node_modules" in path.parts:
                continue
            found = hand_copies(path.read_text(encoding="utf-8", errors="replace"))
            if found:
                copies[relative] = found
    assert copies == {}, "derive the list from sagewai.core.FactType instead"


def test_every_type_has_its_meaning_in_the_extraction_prompt() -> None:
    from sagewai.extraction._base import ExtractionContext
    from sagewai.extraction._llm_output import FACTS_SCHEMA, build_messages

    assert list(FACT_TYPE_MEANINGS) == list(FactType)
    system = build_messages("hi", ExtractionContext(), max_facts=5, max_chars=100, context_turns=0)[
        0
    ]["content"]
    for fact_type in FactType:
        assert f"\n- {fact_type.value}: {FACT_TYPE_MEANINGS[fact_type]}\n" in system
    item = FACTS_SCHEMA["properties"]["facts"]["items"]
    assert item["properties"]["fact_type"]["enum"] == TYPES


def enum_of(schema: dict[str, Any], field: str) -> list[str]:
    """The enum a JSON schema gives a property, following a ``$ref`` into ``$defs``."""
    prop = schema["properties"][field]
    for ref in [prop.get("$ref"), *(p.get("$ref") for p in prop.get("anyOf", ()))]:
        if ref:
            return list(schema["$defs"][ref.rsplit("/", 1)[1]]["enum"])
    return list(prop["enum"])


def test_the_agents_save_tool_lists_every_type() -> None:
    from sagewai.agent._memory_tools import memory_tools

    async def search(query: str, top_k: int) -> str:
        return ""

    async def save(content: str, fact_type: str, subject: str | None) -> str:
        return ""

    async def forget(ids: list[str]) -> str:
        return ""

    tools = {t.name: t for t in memory_tools(search=search, save=save, forget=forget)}
    assert enum_of(tools["save_memory"].parameters, "fact_type") == TYPES


async def test_the_mcp_remember_tool_lists_every_type() -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from sagewai.context._engine import ContextEngine
    from sagewai.integrations.mcp import build_mcp_server
    from sagewai.testing import FakeEmbedder

    engine = ContextEngine.in_memory(project_id="demo", embedder=FakeEmbedder())
    async with Client(build_mcp_server(engine, user_id="alice")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert enum_of(tools["remember"].input_schema, "fact_type") == TYPES


def test_the_http_api_the_dashboard_and_the_cli_list_every_type() -> None:
    pytest.importorskip("fastapi")
    from sagewai.cli._main import build_parser
    from sagewai.cli._serve import openapi_schema

    assert openapi_schema()["components"]["schemas"]["FactType"]["enum"] == TYPES
    script = (ROOT / "sagewai" / "server" / "static" / "app.js").read_text(encoding="utf-8")
    assert 'fetch("/v1/openapi.json")' in script
    assert "schema.components.schemas.FactType.enum" in script

    def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
        found = {}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found.update({f"{name} {k}": v for k, v in options(child).items()})
            found.update(dict.fromkeys(action.option_strings, action))
        return found

    type_options = {k: v for k, v in options(build_parser()).items() if k.endswith(" --type")}
    assert type_options, "the CLI's --type options were not found"
    for name, action in type_options.items():
        assert list(action.choices or ()) == TYPES, name
