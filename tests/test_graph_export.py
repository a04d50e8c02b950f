"""Graph export: JSON loads, GraphML parses as XML, HTML carries the data escaped, the CLI works.

The last test opens the HTML page in headless Chromium (when installed) with networking cut off,
lets the script run and counts the nodes it drew in the DOM.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sagewai.cli._main import EXIT_OK, EXIT_USAGE, main
from sagewai.core._records import Provenance
from sagewai.errors import InvalidInputError
from sagewai.graph import (
    Entity,
    Relation,
    export_graph,
    graph_to_graphml,
    graph_to_html,
    graph_to_json,
)
from sagewai.stores import SqliteGraphStore

T0 = datetime(2024, 3, 1, tzinfo=UTC)
XSS = '</script><script>alert("pwned")</script><img src=x onerror=alert(1)>'
NS = {"g": "http://graphml.graphdrawing.org/xmlns"}


def sample() -> tuple[list[Entity], list[Relation]]:
    ana = Entity(project_id="p", name="Ana", label="person", aliases=("A & B",), created_at=T0)
    evil = Entity(project_id="p", name=XSS, label="person", created_at=T0)
    lisbon = Entity(project_id="p", name='Lisbon\n"quoted"', label="location", created_at=T0)
    relations = [
        Relation(
            project_id="p",
            subject_id=ana.id,
            predicate="lives_in",
            object_id=lisbon.id,
            valid_from=T0,
            sources=(Provenance(session_id="s1", message_id="D1:3"),),
        ),
        Relation(
            project_id="p",
            subject_id=evil.id,
            predicate="<b>knows</b>",
            object_id=ana.id,
            valid_from=T0,
            valid_to=T0 + timedelta(days=1),
        ),
        Relation(project_id="p", subject_id=ana.id, predicate="dangling", object_id="gone"),
    ]
    return [ana, evil, lisbon], relations


def test_json_export_loads_and_drops_dangling_edges() -> None:
    entities, relations = sample()
    document = json.loads(graph_to_json("p", entities, relations))
    assert document["project_id"] == "p"
    assert [e["name"] for e in document["entities"]] == [e.name for e in entities]
    assert [r["predicate"] for r in document["relations"]] == ["lives_in", "<b>knows</b>"]
    assert document["relations"][0]["sources"][0]["message_id"] == "D1:3"


def test_graphml_parses_as_xml_with_every_node_and_edge() -> None:
    entities, relations = sample()
    root = ET.fromstring(graph_to_graphml("p & <q>", entities, relations).encode())
    graph = root.find("g:graph", NS)
    assert graph is not None
    assert graph.get("id") == "p & <q>"
    nodes = graph.findall("g:node", NS)
    names = [n.find("g:data[@key='n_name']", NS).text for n in nodes]  # type: ignore[union-attr]
    assert names == [e.name for e in entities]
    edges = graph.findall("g:edge", NS)
    assert [(e.get("source"), e.get("target")) for e in edges] == [
        (relations[0].subject_id, relations[0].object_id),
        (relations[1].subject_id, relations[1].object_id),
    ]
    active = [e.find("g:data[@key='e_active']", NS).text for e in edges]  # type: ignore[union-attr]
    assert active == ["true", "false"]


def test_html_embeds_the_data_escaped_and_needs_no_network() -> None:
    entities, relations = sample()
    page = graph_to_html("<p>", entities, relations)
    assert "<title>sagewai graph: &lt;p&gt;</title>" in page
    # Exactly two script elements (data + code), so no name could open or close one.
    assert page.count("<script") == 2
    assert page.count("</script>") == 2
    assert "onerror" not in page.split('id="graph-data">')[0]
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', page, re.S)
    assert data is not None
    embedded = json.loads(data.group(1))
    assert embedded["entities"][1]["name"] == XSS  # intact once parsed
    assert "<" not in data.group(1)
    assert ">" not in data.group(1)
    assert "innerHTML" not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    assert "default-src 'none'" in page


async def test_export_graph_reads_a_project_view(tmp_path: Path) -> None:
    entities, relations = sample()
    async with SqliteGraphStore(tmp_path) as store:
        graph = store.for_project("p")
        await graph.upsert_entities(entities)
        await graph.upsert_relations(relations[:2])
        assert json.loads(await export_graph(graph, "json"))["project_id"] == "p"
        with pytest.raises(InvalidInputError):
            await export_graph(graph, "pdf")


def _seed(folder: Path) -> None:
    entities, relations = sample()

    async def write() -> None:
        async with SqliteGraphStore(folder) as store:
            await store.upsert_entities("p", entities)
            await store.upsert_relations("p", relations[:2])
            await store.upsert_entity("other", Entity(project_id="other", name="Secret"))

    asyncio.run(write())


@pytest.mark.parametrize("fmt", ["html", "graphml", "json"])
def test_cli_export_writes_each_format(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    out = tmp_path / f"graph.{fmt}"
    code = main(
        [
            "graph",
            "export",
            "--project",
            "p",
            "--format",
            fmt,
            "--store",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    assert code == EXIT_OK
    text = out.read_text(encoding="utf-8")
    assert "Secret" not in text
    assert "wrote 3 entities and 2 relations" in capsys.readouterr().err
    if fmt == "json":
        assert len(json.loads(text)["entities"]) == 3
    elif fmt == "graphml":
        assert len(ET.fromstring(text.encode()).findall(".//g:node", NS)) == 3
    else:
        assert text.startswith("<!DOCTYPE html>")


def test_cli_export_to_stdout_and_missing_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    assert (
        main(
            [
                "graph",
                "export",
                "--project",
                "p",
                "--format",
                "json",
                "--store",
                str(tmp_path / "graph.sqlite3"),
            ]
        )
        == EXIT_OK
    )
    assert json.loads(capsys.readouterr().out)["project_id"] == "p"
    missing = tmp_path / "nowhere"
    assert main(["graph", "export", "--project", "p", "--store", str(missing)]) == EXIT_USAGE
    assert "no graph database" in capsys.readouterr().err
    assert not missing.exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_html_page_draws_every_node_in_headless_chromium(tmp_path: Path) -> None:
    entities, relations = sample()
    page = tmp_path / "graph.html"
    page.write_text(graph_to_html("p", entities, relations), encoding="utf-8")
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    dom = done.stdout
    assert '<g class="node"' in dom, done.stderr[-2000:]
    assert dom.count('<g class="node"') == 3
    assert dom.count("<line") == 2
    assert "3 entities · 2 relations" in dom
    # The hostile name is drawn as text: no element was made from it.
    assert dom.count("<script") == 2
    assert "<img" not in dom
    assert "&lt;/script&gt;&lt;script&gt;alert" in dom
