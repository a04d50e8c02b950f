"""BEAM instruction and preference following: is the evidence in the prompt the agent builds?

Usage:
    python -m evals.beam_profile [--data DIR/beam/100K]
        [--conversations 1,2] [--embedder fake|minilm] [--embedding-cache PATH]
        [--profile-tokens 400] [--memory-tokens 1200]
        [--out evals/results/beam_profile.json]

``--data`` defaults to ``$SAGEWAI_EVAL_DATA/beam/100K`` (``evals/datasets.py`` says where BEAM
comes from).

Method (issue 42, acceptance 2; ``docs/profile.md`` has the figures):

* Each BEAM conversation (``beam_recall.load_conversation``) is learned the way the agent
  learns: every batch through ``MemoryBridge`` (the rule extractor, no model) as one user's
  conversation (``user_id="beam-user"``), so the verbatim messages and the facts drawn from them
  are stored at the user's scope, and the user's own instructions and preferences enter the
  profile.
* Every ``instruction_following`` and ``preference_following`` question with evidence is then
  asked of a ``UniversalAgent`` (the scripted model of ``sagewai.testing``, no learning) in a
  new session, twice in the same run: with ``profile_tokens=0`` (the memory block alone, chosen
  by similarity to the question: the behaviour before issue 42) and with the profile section.
* The records shown to the model are the memory block's items (with the profile on, the
  block also holds the exchange of the entries a question is about: the user's next turns of
  the session the entry was said in that belong to its thread, ``sagewai/agent/_exchange.py``)
  and the profile section's entries; their source message ids are compared with the question's
  evidence ids. ``prompt_tokens_mean`` is what they cost (memory block plus profile). A question
  is **found** when every evidence message is in the prompt (``all``); ``any`` counts a
  question when at least one is; ``statement`` when its first evidence message (the
  instruction or the preference as the user stated it; the others are follow-ups such as "Got
  it, thanks!") is; ``evidence_recall`` is the mean share of evidence messages in the prompt;
  ``statement_in_profile`` when the statement is the source of any profile entry, shown or not
  (a statement in the profile but not in the prompt was not chosen; one in neither was never
  recognised: a total that says which to work on without reading a blind set's misses).
* Splits: conversations 1-10 are the tuning split (the instruction rules were read against
  them), 11-20 the held-out split, reported separately. ``--profile-tokens`` below what a
  conversation's profile needs (150) shows how the section chooses when it does not all fit,
  as in a longer conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals._common import RESULTS, HashCachingEmbedder, write_json
from evals.beam_recall import Conversation, Question, batch_messages, load_conversations
from evals.datasets import DATA_ENV, DATASETS, where_to_get
from sagewai import ContextEngine, UniversalAgent
from sagewai.context import MemoryBridge
from sagewai.core import Conversation as ChatConversation
from sagewai.embeddings import Embedder
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder, ScriptedLLM

DEFAULT_OUT = RESULTS / "beam_profile.json"
CATEGORIES = ("instruction_following", "preference_following")
USER = "beam-user"
TUNING_SPLIT = frozenset(str(n) for n in range(1, 11))


@dataclass(slots=True)
class Tally:
    """Questions counted for one configuration, one split."""

    questions: int = 0
    found_all: int = 0
    found_any: int = 0
    found_first: int = 0
    first_in_profile: int = 0
    """Questions whose statement is the source of some profile entry, shown or not: a
    statement missing from the prompt but counted here was recognised and not chosen (the
    budget, the selection), one missing from both was never recognised."""
    recall: float = 0.0
    tokens: int = 0
    """Tokens of the memory block and the profile section, summed over the questions."""
    by_category: dict[str, list[int]] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)

    def add(
        self,
        question: Question,
        shown: set[str],
        conversation: str,
        tokens: int = 0,
        profiled: frozenset[str] = frozenset(),
    ) -> None:
        evidence = set(question.evidence)
        every, some = evidence <= shown, bool(evidence & shown)
        self.questions += 1
        self.tokens += tokens
        self.found_all += every
        self.found_any += some
        self.found_first += question.evidence[0] in shown
        self.first_in_profile += question.evidence[0] in profiled
        self.recall += len(evidence & shown) / len(evidence)
        counts = self.by_category.setdefault(question.category, [0, 0])
        counts[0] += 1
        counts[1] += every
        if not every:
            self.missed.append(f"{conversation}: {question.text[:90]}")

    def summary(self) -> dict[str, Any]:
        n = max(self.questions, 1)
        return {
            "questions": self.questions,
            "evidence_in_prompt_all": round(self.found_all / n, 4),
            "evidence_in_prompt_any": round(self.found_any / n, 4),
            "statement_in_prompt": round(self.found_first / n, 4),
            "statement_in_profile": round(self.first_in_profile / n, 4),
            "evidence_recall": round(self.recall / n, 4),
            "prompt_tokens_mean": round(self.tokens / n, 1),
            "by_category": {
                name: round(found / max(total, 1), 4)
                for name, (total, found) in sorted(self.by_category.items())
            },
            "missed": self.missed[:40],
        }


async def learn(engine: ContextEngine, conversation: Conversation) -> None:
    """Every batch of the conversation through the bridge, as the user's conversation."""
    async with MemoryBridge(
        context_engine=engine,
        fact_extractor=RuleBasedFactExtractor(),
        save_episodes=False,
        journal=False,
    ) as bridge:
        for batch in sorted({m.batch for m in conversation.messages}):
            chat = ChatConversation.of(
                batch_messages(conversation, batch),
                session_id=f"beam-{conversation.name}-b{batch}",
                user_id=USER,
            )
            await bridge.bridge_conversation(chat)
        await bridge.flush()


async def shown_sources(engine: ContextEngine, fact_ids: Sequence[str]) -> set[str]:
    """The message ids of the records shown."""
    records = await engine.port.get_many(list(dict.fromkeys(fact_ids)))
    return {s.message_id for f in records for s in f.sources if s.message_id is not None}


async def ask(
    engine: ContextEngine,
    conversation: Conversation,
    tallies: dict[str, Tally],
    *,
    profile_tokens: int,
    memory_tokens: int,
) -> None:
    """Ask the conversation's questions with the profile off and on."""
    questions = [q for q in conversation.questions if q.category in CATEGORIES]
    entries = await engine.profile(user_id=USER).entries()
    profiled = frozenset(await shown_sources(engine, [entry.id for entry in entries]))
    for name, budget in (("memory_block_only", 0), ("with_profile", profile_tokens)):
        llm = ScriptedLLM(["ok"] * len(questions))
        async with UniversalAgent(
            name="helper",
            context=engine,
            llm=llm,
            user_id=USER,
            learn=False,
            memory_tools=False,
            profile_tokens=budget,
            memory_token_budget=memory_tokens,
        ) as agent:
            for index, question in enumerate(questions):
                reply = await agent.respond(question.text, session_id=f"{name}-{index}")
                ids = [*reply.memory.fact_ids, *reply.profile.fact_ids]
                tallies[name].add(
                    question,
                    await shown_sources(engine, ids),
                    conversation.name,
                    reply.memory.tokens + reply.profile.tokens,
                    profiled,
                )


def make_embedder(name: str, cache: Path | None) -> Embedder:
    if name == "fake":
        return FakeEmbedder(dimension=256)
    from sagewai.embeddings import MiniLMEmbedder

    return HashCachingEmbedder(MiniLMEmbedder(), cache)


def default_data() -> Path:
    """BEAM's 100K folder under ``$SAGEWAI_EVAL_DATA``.

    Raises:
        SystemExit: neither ``--data`` nor the environment names a folder holding it.
    """
    folder = os.environ.get(DATA_ENV)
    found = DATASETS["beam"].find(Path(folder)) if folder else None
    if found is None:
        raise SystemExit(
            f"BEAM not found: pass --data or set {DATA_ENV}. {where_to_get(('beam',))}"
        )
    return found


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"BEAM's 100K folder (default: ${DATA_ENV}/beam/100K)",
    )
    parser.add_argument("--conversations", default="")
    parser.add_argument("--embedder", choices=("fake", "minilm"), default="minilm")
    parser.add_argument("--embedding-cache", type=Path, default=None)
    parser.add_argument("--profile-tokens", type=int, default=400)
    parser.add_argument("--memory-tokens", type=int, default=1200)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    data = args.data or default_data()
    wanted = [c for c in args.conversations.split(",") if c]
    conversations = load_conversations(data, wanted)
    embedder = make_embedder(args.embedder, args.embedding_cache)
    splits: dict[str, dict[str, Tally]] = {}
    started = time.perf_counter()
    for conversation in conversations:
        split = "dev" if conversation.name in TUNING_SPLIT else "held_out"
        tallies = splits.setdefault(split, {"memory_block_only": Tally(), "with_profile": Tally()})
        began = time.perf_counter()
        async with ContextEngine.in_memory(
            project_id=f"beam-{conversation.name}", embedder=embedder
        ) as engine:
            await learn(engine, conversation)
            entries = await engine.profile(user_id=USER).entries()
            await ask(
                engine,
                conversation,
                tallies,
                profile_tokens=args.profile_tokens,
                memory_tokens=args.memory_tokens,
            )
        if isinstance(embedder, HashCachingEmbedder):
            embedder.save()
        print(
            f"conversation {conversation.name}: {len(entries)} profile entries, "
            f"{time.perf_counter() - began:.0f} s",
            flush=True,
        )
    payload: dict[str, Any] = {
        "embedder": args.embedder,
        "profile_tokens": args.profile_tokens,
        "memory_tokens": args.memory_tokens,
        "conversations": [c.name for c in conversations],
        "splits": {
            split: {name: tally.summary() for name, tally in tallies.items()}
            for split, tallies in sorted(splits.items())
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    for split, tallies in sorted(splits.items()):
        off, on = tallies["memory_block_only"].summary(), tallies["with_profile"].summary()
        print(
            f"{split}: {on['questions']} questions; evidence in the prompt (all / any / "
            f"statement / recall): memory block only {off['evidence_in_prompt_all']:.3f} / "
            f"{off['evidence_in_prompt_any']:.3f} / {off['statement_in_prompt']:.3f} / "
            f"{off['evidence_recall']:.3f}, with the profile "
            f"{on['evidence_in_prompt_all']:.3f} / {on['evidence_in_prompt_any']:.3f} / "
            f"{on['statement_in_prompt']:.3f} / {on['evidence_recall']:.3f}; prompt tokens "
            f"(memory block + profile, mean) {off['prompt_tokens_mean']:.0f} -> "
            f"{on['prompt_tokens_mean']:.0f}; statement in the profile, shown or not "
            f"{on['statement_in_profile']:.3f}"
        )
    write_json(args.out, payload)
    return payload


if __name__ == "__main__":
    asyncio.run(main())
