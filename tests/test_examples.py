"""Smoke test of the numbered examples: each runs offline, exits 0 and prints what it shows.

The examples run as separate processes (as a user runs them), several at a time, in an empty
working directory with the backend variables removed, so they take the embedded, offline path.
Each must leave its working directory empty: examples write only under a temporary folder.
An example of a framework that is not installed here is skipped (CrewAI's runs in the CrewAI
environment that ``.ci/run`` builds, as CrewAI and the MCP server cannot share one); only the
examples a session selected are run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TIMEOUT = 300
PARALLEL = 4

EXPECTED: dict[str, list[str]] = {
    "01_quickstart": ["-> Alice prefers green tea over coffee", "stored 3 facts"],
    "02_scopes": ["[session] Alice is asking about invoice INV-2291", "[user   ] Bob is on the"],
    "03_documents": ["make rollback VERSION=<previous>", "facts only: Maria is the billing"],
    "04_rule_extraction": ["Priya works at Initech.", "(nothing worth remembering)"],
    "05_llm_extraction": [
        "offline scripted stand-in",
        "Ticket SUP-4471 is blocked until the vendor ships firmware 2.4.1.",
        "(rules fallback)",
    ],
    "06_hybrid_extraction": ["1 of 4 messages went to the model", "[llm]"],
    "07_memory_bridge": ["The user's budget is 4000 EUR.", "session planning-1"],
    "08_background_bridge": ["facts stored after flush(): 4"],
    "09_reconciliation_and_history": [
        "on 2024-03-01: The user lives in Paris.",
        "superseded by reconcile.triple",
    ],
    "10_episodes": ["-> session launch-planning", "forgot session 'hiring' (1 episode)"],
    "11_consolidation": ["real run: merged 1", "supersede contradiction"],
    "12_scheduled_consolidation": ["[scheduled]", "`sagewai consolidate` exited 0"],
    "13_knowledge_graph": ["Caroline lives_in Denver", "exported the graph to graph.html"],
    "14_graph_search": ["2 hops from Caroline: Sara works_as nurse"],
    "15_forgetting": [
        "facts_deleted=4",
        "the dry run's receipt: True",
        "search 'Who lives in Oslo?' now finds: ['Nina",
    ],
    "16_postgres_backend": [
        "SAGEWAI_POSTGRES_DSN is not set",
        "fact search    -> Invoices are archived for 10 years",
    ],
    "17_qdrant_backend": ["QDRANT_URL is not set", "-> Search latency budget is 200 ms at p95"],
    "18_nebula_backend": ["NEBULA_ADDRESS is not set", "Lina lives_in Dubai"],
    "19_self_learning_agent": [
        "offline scripted stand-in",
        # session 2 answers from what session 1 taught it
        " sage: From memory: The user's favourite drink is green tea.",
        "=== restart",
        # after the change in session 3, the new value is current and the old one is history
        "espresso now. (It used to be: The user's favourite drink is green tea.)",
        "tools used: ['forget_memory']",
        " sage: I don't know that yet.",
        "episodes saved: ['s1', 's2', 's3', 's4', 's5']",
    ],
    "20_mcp_server": [
        "tools: ['remember', 'recall', 'forget', 'history', 'revert', 'list_facts', 'profile', "
        "'set_profile']",
        "recall 'Where do I live?' -> I live in Oslo.",
        "dry run would forget: ['I live in Oslo.', 'The user lives in Oslo.']",
        "after forget, recall finds: ['I prefer green tea.', 'I work at Initech.']",
        "'The user lives in Oslo.' is back",
        "project 'payroll' refused: MCP error -32003",
        "over stdio, recall 'What do I drink?' -> I prefer green tea.",
    ],
    "21_inspect_memory": [
        "superseded  general     user:lea  user     The user lives in Paris.",
        "was superseded by reconcile.triple",
        "is active:",
        "would forget 2 facts of project 'travel'",
        "forgot 2 facts of project 'travel'",
        "sagewai: no fact with id 'no-such-fact' in this project",
        "(exit 1)",
    ],
    "22_langgraph_store": [
        "[recalled before the model] ['- Maya is vegetarian']",
        "store.search(('users', 'maya'), 'diet') -> [{'content': 'Maya is vegetarian'}]",
        "sagewai sees it as a user fact of maya: Maya is vegetarian",
        "leo's recall of it: []",
        "  [system message before the model] - Maya is vegetarian\n"
        "create_agent for maya: A chickpea salad: no meat.",
    ],
    "23_export_import": [
        "exported: 3 facts, 4 changes, 2 entities, 1 relations, 1 episodes",
        "same search results after the move: True -> Priya leads the payments team",
        "imported again: 0 new",
        "imported into project 'billing': 3 facts, 4 changes, 2 entities, 1 relations, 1 episodes",
    ],
    "24_sync_facade": [
        "quickstart: ",
        "Alice prefers green tea over coffee",
        "bridge learned: ['The user moved to Berlin last month",
        "agent: From memory: The user moved to Berlin last month",
        "consolidation dry run looked at",
    ],
    "25_openai_agents": [
        "tool said: ['remembered [",
        "agent: A mushroom risotto, as you're vegetarian.",
        "] Maya is vegetarian']",
        "leo (chat-1): What should I cook tonight?\n  agent: I don't know your diet yet.",
        "tool said: ['nothing remembered about that']",
        "leo's chat-1 holds 4 items, first: 'What should I cook tonight?'",
        "leo's recall of 'vegetarian': []",
    ],
    "26_crewai_memory": [
        "maya: Plan my dinner for Friday.\n  crew: a mushroom risotto",
        "leo: Plan my dinner for Friday.\n  crew: a steak with fries",
        "sagewai sees it as a user fact of maya: Maya is vegetarian",
        "leo's recall of it: []",
        "subject: Maya; CrewAI path: /users/maya ['diet']",
    ],
    "27_llama_index": [
        "maya: Where do I keep bees?\n  agent: On your roof, where your bee hives are.",
        "leo: Where do I keep bees?\n  agent: I don't know yet.",
        "retrieved (user): I keep three bee hives on the roof of my flat.",
        "leo retrieves: ['Honey is harvested in late August']",
    ],
    "28_autogen_memory": [
        "'Maya is allergic to peanuts'",
        "agent: Skip the satay: it has peanuts.",
        "recalled before the model: ['The canteen serves lunch from 12:00 to 14:00']\n"
        "  agent: Enjoy it.",
    ],
}
NEEDS: dict[str, str] = {
    "25_openai_agents": "agents",
    "26_crewai_memory": "crewai",
    "27_llama_index": "llama_index.core",
    "28_autogen_memory": "autogen_ext",
}
"""The framework module an example needs; without it here, the example is skipped."""


def _missing(name: str) -> str | None:
    module = NEEDS.get(name)
    if module is None:
        return None
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    return None if found else module


_UNSET = (
    "SAGEWAI_MODEL",
    "SAGEWAI_API_BASE",
    "SAGEWAI_EXAMPLES_DIR",
    "SAGEWAI_POSTGRES_DSN",
    "QDRANT_URL",
    "NEBULA_ADDRESS",
    "SAGEWAI_GLINER_MODEL",
    "CREWAI_STORAGE_DIR",
)


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    leftovers: list[str]


def _run(name: str, base: Path) -> Run:
    workdir = base / name / "cwd"
    tmp = base / name / "tmp"
    workdir.mkdir(parents=True)
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update({"TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    try:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / f"{name}.py")],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return Run(-1, f"timed out after {TIMEOUT} s\n{exc.stdout!r}\n{exc.stderr!r}", [])
    return Run(
        done.returncode,
        done.stdout + "\n--- stderr ---\n" + done.stderr,
        sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*")),
    )


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[dict[str, Run]]:
    """Every selected example that can run here, several at a time."""
    selected = {
        item.callspec.params["name"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == "test_example_runs_offline"
    }
    names = [name for name in EXPECTED if name in selected and _missing(name) is None]
    base = tmp_path_factory.mktemp("examples")
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {name: pool.submit(_run, name, base) for name in names}
        yield {name: future.result() for name, future in futures.items()}


def test_every_example_is_listed() -> None:
    found = sorted(p.stem for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
    assert found == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name: str, runs: dict[str, Run]) -> None:
    missing = _missing(name)
    if missing is not None:
        pytest.skip(f"{missing} is not installed here (CrewAI's example runs in .venv-crewai)")
    run = runs[name]
    assert run.returncode == 0, run.output
    for line in EXPECTED[name]:
        assert line in run.output, f"{line!r} missing from the output of {name}:\n{run.output}"
    assert "Traceback" not in run.output
    assert run.leftovers == [], f"{name} wrote into its working directory: {run.leftovers}"
