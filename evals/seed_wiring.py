"""The seed's wiring as a user types it, then a second process reading back what it learned.

Issue 42, acceptance 4: after the seed's ``chat()`` turns the graph holds the entities and
relations those turns name, and in a second process the first search result of "database
migration", "who leads the platform team" and "answer style" names Postgres, Dana and short
answers in its own text. No model is reachable (no key, no network): the agent answers offline
and still learns, as the seed promises.

Run:
    python -m evals.seed_wiring [--folder DIR] [--out evals/results/seed_wiring.json]

Each step runs in its own process (``python -m evals.seed_wiring --step seed``, then ``read``);
the JSON (printed, and written to ``--out``) holds both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from evals._common import RESULTS, machine

ROOT = Path(__file__).resolve().parent.parent
TURNS = (
    "We decided to migrate to Postgres next quarter.",
    "My name is Dana and I lead the platform team.",
    "I prefer short answers.",
    "My sister Eva lives in Oslo and she works at Initech.",
)
QUESTIONS = (
    ("database migration", "Postgres"),
    ("who leads the platform team", "Dana"),
    ("answer style", "short answers"),
)
LATER_TURN = "I moved to Lisbon last year."


async def seed(folder: Path) -> dict[str, object]:
    """The seed's lines as written (DESIGN section 1), then its chat turns."""
    from sagewai import ContextEngine, UniversalAgent
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import (
        ConversationGraphBuilder,
        GLiNEREntityExtractor,
        HeuristicRelationExtractor,
        HybridFactExtractor,
    )

    ctx = ContextEngine.local(folder, project_id="proj_123")
    bridge = MemoryBridge(
        context_engine=ctx,
        model="gpt-4o-mini",
        extract_every_n_turns=5,
        fact_extractor=HybridFactExtractor(),
    )
    graph_builder = ConversationGraphBuilder(  # noqa: F841 - the seed builds it and passes it nowhere
        graph_store=ctx.graph_store,
        entity_extractor=GLiNEREntityExtractor(),
        relation_extractor=HeuristicRelationExtractor(),
    )
    agent = UniversalAgent(name="assistant", model="gpt-4o", context=ctx, memory_bridge=bridge)
    for turn in TURNS:
        await agent.chat(turn)
    graph = ctx.graph_store
    assert graph is not None
    entities = await graph.entities()
    names = {e.id: e.name for e in entities}
    relations = await graph.relations()
    return {
        "entities": sorted([e.name, e.label] for e in entities),
        "relations": sorted(
            [names.get(r.subject_id, "?"), r.predicate, names.get(r.object_id, "?")]
            for r in relations
        ),
    }


async def read(folder: Path) -> dict[str, object]:
    """A later process on the same folder: the first result of each question, and a new turn."""
    from sagewai import ContextEngine, UniversalAgent
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import HybridFactExtractor

    ctx = ContextEngine.local(folder, project_id="proj_123")
    first: dict[str, str | None] = {}
    for question, _ in QUESTIONS:
        found = await ctx.search(question, top_k=5)
        first[question] = found[0].fact.content if found else None
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=HybridFactExtractor())
    agent = UniversalAgent(name="assistant", model="gpt-4o", context=ctx, memory_bridge=bridge)
    await agent.chat(LATER_TURN)
    await agent.flush()
    later = [f.content for f in await ctx.list(kinds=["fact"], limit=1000) if "Lisbon" in f.content]
    return {"first": first, "later_facts": later}


def _child(step: str, folder: Path) -> dict[str, object]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "evals.seed_wiring", "--step", step, "--folder", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"step {step} failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run(folder: Path) -> dict[str, object]:
    """Both steps, each in a fresh process; the figures of acceptance 4."""
    seeded = _child("seed", folder)
    read_back = _child("read", folder)
    first = read_back["first"]
    assert isinstance(first, dict)
    return {
        **seeded,
        **read_back,
        "first_result_names": {
            question: bool(first.get(question)) and word.lower() in str(first[question]).lower()
            for question, word in QUESTIONS
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--step", choices=["seed", "read"], default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "seed_wiring.json")
    args = parser.parse_args(argv)
    if args.step is not None:
        step = seed if args.step == "seed" else read
        print(json.dumps(asyncio.run(step(args.folder))), flush=True)
        return
    with tempfile.TemporaryDirectory() as scratch:
        result = run(args.folder or Path(scratch) / "seed")
    print(json.dumps(result, indent=2), flush=True)  # stdout is the JSON alone
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"machine": machine(), **result}, indent=2) + "\n", encoding="utf-8"
    )
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
