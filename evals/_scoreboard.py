"""The one runner of the evaluations: every data set found, one scoreboard (JSON and markdown).

Per conversational data set (LoCoMo, BEAM, LongMemEval) one row:

* ``R@5`` / ``R@10``: turn-level retrieval recall, every turn stored verbatim (the data set's own
  recall module, so the figures are the ones ``python -m evals.locomo_recall`` prints).
* ``prompt evidence``: the share of a question's evidence turns that the agent's prompt holds.
  Each conversation is fed to the bridge an agent builds by default (``remember`` per message,
  rules only); then a ``UniversalAgent`` (default ``AgentSettings``, learning off) answers each
  question and its reply names the records its memory block showed.
* ``tokens / query``: the memory block's size in the agent's token estimate.
* ``add p50/p95``: ``MemoryBridge.remember`` per message; ``search p50/p95``:
  ``ContextEngine.search`` (top 10) per question on that memory; milliseconds.
* ``accuracy``: with ``--model`` only, the agent answers with that litellm model
  (``evals/prompts/answer.md`` as its system prompt) and the judge model grades each answer
  against the reference (``evals/prompts/judge.md``); the share graded CORRECT.

Quality rows (consolidation, extraction) run their own modules and report their headline
figures beside.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals import agent_recall, beam_recall, locomo_recall, longmemeval
from evals._common import HashCachingEmbedder, machine, percentiles
from evals.agent_recall import QUESTION_SESSION, USER, Dialogue
from evals.datasets import DATASETS
from evals.locomo_recall import recall_at
from sagewai import ContextEngine, UniversalAgent
from sagewai.agent import AgentSettings
from sagewai.context import MemoryBridge
from sagewai.embeddings import Embedder
from sagewai.extraction import RuleBasedFactExtractor
from sagewai.llm import LiteLLMClient, LLMClient
from sagewai.testing import ScriptedLLM

PROMPTS = Path(__file__).resolve().parent / "prompts"
ANSWER_PROMPT = (PROMPTS / "answer.md").read_text(encoding="utf-8").strip()
"""The answering agent's system prompt (published: ``evals/prompts/answer.md``)."""
JUDGE_PROMPT = (PROMPTS / "judge.md").read_text(encoding="utf-8").strip()
"""The judge's prompt, with ``{question}``, ``{reference}``, ``{answer}`` (``judge.md``)."""

QUICK_CONVERSATIONS = {"locomo": ("conv-26",), "beam": ("1",)}
QUICK_LONGMEMEVAL = 20
"""What ``--quick`` keeps: one LoCoMo sample, one BEAM conversation, 20 LongMemEval questions."""


@dataclass
class Row:
    """One data set's line of the scoreboard."""

    dataset: str
    conversations: int = 0
    questions: int = 0
    recall_at_5: float | None = None
    recall_at_10: float | None = None
    prompt_evidence: float | None = None
    tokens_per_query: float | None = None
    add_p50_ms: float | None = None
    add_p95_ms: float | None = None
    search_p50_ms: float | None = None
    search_p95_ms: float | None = None
    accuracy: float | None = None
    judged: int = 0


@dataclass
class AgentFigures:
    """What the agent pass measures over the conversations of one data set."""

    add_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    evidence: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)


def judged_correct(reply: str | None) -> bool:
    """True when the judge's reply says CORRECT (its first word, any case).

    >>> judged_correct("CORRECT"), judged_correct("wrong."), judged_correct(None)
    (True, False, False)
    """
    words = (reply or "").strip().split()
    return bool(words) and words[0].strip(".:!").upper() == "CORRECT"


async def judge_answer(judge: LLMClient, question: str, reference: str, answer: str) -> bool:
    """Ask the judge whether ``answer`` states the ``reference`` answer."""
    prompt = JUDGE_PROMPT.format(question=question, reference=reference, answer=answer)
    response = await judge.complete([{"role": "user", "content": prompt}])
    return judged_correct(response.content)


async def play(dialogue: Dialogue, bridge: MemoryBridge, figures: AgentFigures) -> None:
    """Feed the dialogue to the bridge as an agent's learner does, timing each ``remember``."""
    for session in dialogue.sessions():
        for message in session:
            started = time.perf_counter()
            await bridge.remember(
                {"role": message.role, "content": message.content, "id": message.message_id},
                session_id=message.session_id,
                user_id=USER,
            )
            figures.add_ms.append(1000 * (time.perf_counter() - started))
        await bridge.flush(session[0].session_id)
    await bridge.flush()


async def agent_pass(
    dialogue: Dialogue,
    embedder: Embedder,
    figures: AgentFigures,
    *,
    model: str | None = None,
    answerer: Callable[[], LLMClient] | None = None,
    judge: LLMClient | None = None,
) -> None:
    """One conversation through the agent's memory: add, search, prompt evidence, answers.

    ``answerer`` makes the agent's model client (a scripted one when None: no answers judged);
    ``judge`` grades the answers when given.
    """
    project = f"eval-{dialogue.dataset}-{dialogue.name}"
    async with ContextEngine.in_memory(project_id=project, embedder=embedder) as engine:
        bridge = MemoryBridge(
            context_engine=engine,
            model=model or "gpt-4o-mini",
            fact_extractor=RuleBasedFactExtractor(),
        )
        await play(dialogue, bridge, figures)
        settings = AgentSettings(
            learn=False, memory_tools=False, system_prompt=ANSWER_PROMPT, model=model or "gpt-4o"
        )
        llm = answerer() if answerer is not None else ScriptedLLM(["-"] * len(dialogue.questions))
        agent = UniversalAgent(name="eval", context=engine, settings=settings, llm=llm)
        try:
            for number, question in enumerate(dialogue.questions):
                started = time.perf_counter()
                await engine.search(question.text, 10, user_id=USER, session_id=QUESTION_SESSION)
                figures.search_ms.append(1000 * (time.perf_counter() - started))
                reply = await agent.respond(
                    question.text, session_id=f"{QUESTION_SESSION}-{number}", user_id=USER
                )
                shown = await engine.stores.metadata.get(
                    engine.project_id, list(reply.memory.fact_ids)
                )
                sources = [s.message_id for f in shown for s in f.sources if s.message_id]
                figures.evidence.append(recall_at([sources], question.evidence, 1))
                figures.tokens.append(reply.memory.tokens)
                if judge is not None and answerer is not None:
                    verdict = await judge_answer(
                        judge, question.text, question.answer, reply.answer or ""
                    )
                    figures.verdicts.append(verdict)
        finally:
            await agent.aclose()
            await bridge.aclose()


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def fill(row: Row, figures: AgentFigures) -> Row:
    """The agent pass's figures into a row."""
    add, search = percentiles(figures.add_ms), percentiles(figures.search_ms)
    row.prompt_evidence = _mean(figures.evidence)
    row.tokens_per_query = round(statistics.fmean(figures.tokens), 1) if figures.tokens else None
    row.add_p50_ms, row.add_p95_ms = add["p50_ms"], add["p95_ms"]
    row.search_p50_ms, row.search_p95_ms = search["p50_ms"], search["p95_ms"]
    row.accuracy = _mean([1.0 if v else 0.0 for v in figures.verdicts])
    row.judged = len(figures.verdicts)
    return row


def recall_row(dataset: str, report: Mapping[str, Any]) -> Row:
    """R@5 / R@10 of the raw-turn system of a recall module's report."""
    overall = report["systems"]["sagewai_raw"]["overall"]
    return Row(dataset, recall_at_5=overall.get("R@5"), recall_at_10=overall.get("R@10"))


async def dataset_row(
    name: str,
    path: Path,
    folder: Path,
    *,
    quick: bool,
    conversations: Sequence[str],
    limit: int | None,
    embedding_cache: Path | None,
    model: str | None,
    judge_model: str | None,
    baselines: bool,
) -> tuple[Row, dict[str, Any]]:
    """Run one data set's recall module and the agent pass; returns its row and full report."""
    out = folder / f"{name}.json"
    cache = ["--embedding-cache", str(embedding_cache / f"{name}.npz")] if embedding_cache else []
    chosen = list(conversations) or list(QUICK_CONVERSATIONS.get(name, ()) if quick else ())
    if name == "locomo":
        args = ["--data", str(path), "--out", str(out), *cache]
        args += ["--conversations", ",".join(chosen)] if chosen else []
        args += [] if baselines else ["--no-baselines"]
        report = await locomo_recall.main(args)
        dialogues = agent_recall.locomo_dialogues(path, chosen)
    elif name == "beam":
        chosen = chosen or sorted(beam_recall.TUNING_SPLIT, key=int)
        args = ["--data", str(path), "--out", str(out), "--conversations", ",".join(chosen)]
        args += [*cache, *([] if baselines else ["--no-baselines"])]
        report = await beam_recall.main(args)
        dialogues = agent_recall.beam_dialogues(path, chosen)
    else:
        count = limit or (QUICK_LONGMEMEVAL if quick else None)
        args = ["--data", str(path), "--out", str(out), *cache]
        args += ["--limit", str(count)] if count else []
        report = await longmemeval.main(args)
        dialogues = longmemeval.load_dialogues(path, count)
    row = recall_row(name, report)
    row.conversations = len(dialogues)
    row.questions = sum(len(d.questions) for d in dialogues)
    from sagewai.embeddings import MiniLMEmbedder

    embedder = HashCachingEmbedder(
        MiniLMEmbedder(), embedding_cache / f"{name}-agent.npz" if embedding_cache else None
    )
    figures = AgentFigures()
    answerer = (lambda: LiteLLMClient(model)) if model else None
    judge = LiteLLMClient(judge_model or model) if model else None
    for dialogue in dialogues:
        started = time.perf_counter()
        await agent_pass(dialogue, embedder, figures, model=model, answerer=answerer, judge=judge)
        print(
            f"{name} {dialogue.name}: agent pass {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    embedder.save()
    return fill(row, figures), report


def quality_rows(names: Sequence[str], folder: Path) -> dict[str, dict[str, Any]]:
    """Headline figures of the consolidation and extraction evaluations (subprocesses)."""
    out: dict[str, dict[str, Any]] = {}
    runs: dict[str, list[str]] = {}
    if "consolidation" in names:
        runs["consolidation_eval"] = []
        runs["consolidation_near_distinct"] = []
        runs["consolidation_planted"] = []
        runs["consolidation_realistic"] = []
    if "extraction" in names:
        runs["extraction_eval"] = ["--split", "dev", "--throughput-seconds", "0", "--json"]
    for module, extra in runs.items():
        path = folder / f"{module}.json"
        command = [sys.executable, "-m", f"evals.{module}", *extra, "--out", str(path)]
        done = subprocess.run(
            command, cwd=Path(__file__).resolve().parent.parent, check=False, capture_output=True
        )
        if done.returncode != 0 or not path.is_file():
            out[module] = {"error": done.stderr.decode(errors="replace").strip()[-300:]}
            continue
        out[module] = headline(module, json.loads(path.read_text(encoding="utf-8")))
    return out


def headline(module: str, report: Mapping[str, Any]) -> dict[str, Any]:
    """The few figures of a quality evaluation the scoreboard shows."""
    if module == "extraction_eval":
        split = report["splits"]["dev"]
        return {
            "save_f1": split["save"]["f1"],
            "save_precision": split["save"]["precision"],
            "save_recall": split["save"]["recall"],
            "type_accuracy": split["type_accuracy"],
        }
    if module == "consolidation_planted":
        return {key: report[key] for key in ("precision", "recall", "wrong_merges")}
    if module == "consolidation_realistic":
        keys = ("merge_precision", "merge_recall", "contradiction_recall", "wrong_merges")
        return {key: report[key] for key in keys}
    merge = report.get("merge", {})
    figures = {f"merge_{k}": merge[k] for k in ("precision", "recall") if k in merge}
    supersede = report.get("supersede")
    if isinstance(supersede, Mapping):
        figures.update({f"supersede_{k}": supersede[k] for k in ("precision", "recall")})
    return figures


COLUMNS = (
    ("dataset", "data set"),
    ("conversations", "conv."),
    ("questions", "questions"),
    ("recall_at_5", "R@5"),
    ("recall_at_10", "R@10"),
    ("prompt_evidence", "prompt evidence"),
    ("tokens_per_query", "tokens / query"),
    ("add_p50_ms", "add p50 ms"),
    ("add_p95_ms", "add p95 ms"),
    ("search_p50_ms", "search p50 ms"),
    ("search_p95_ms", "search p95 ms"),
    ("accuracy", "accuracy"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)


def markdown(board: Mapping[str, Any]) -> str:
    """The scoreboard as a markdown table (and the quality figures below it).

    >>> print(markdown({"rows": [asdict(Row("locomo", 3, 10, 0.5, 0.75))], "quality": {},
    ...                  "model": None}).splitlines()[2])
    | locomo | 3 | 10 | 0.500 | 0.750 | - | - | - | - | - | - | - |
    """
    lines = [
        "| " + " | ".join(title for _, title in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    for row in board["rows"]:
        lines.append("| " + " | ".join(_cell(row[key]) for key, _ in COLUMNS) + " |")
    if board.get("model") is None:
        lines.append("")
        lines.append("accuracy: not measured (give --model to answer and judge)")
    for module, figures in board.get("quality", {}).items():
        shown = ", ".join(f"{k} {_cell(v)}" for k, v in figures.items())
        lines.append(f"- {module}: {shown}")
    return "\n".join(lines) + "\n"


def scoreboard(rows: Sequence[Row], quality: Mapping[str, Any], **about: Any) -> dict[str, Any]:
    """The scoreboard JSON."""
    return {
        "scoreboard": "sagewai evals",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **about,
        "prompts": {"answer": "evals/prompts/answer.md", "judge": "evals/prompts/judge.md"},
        "rows": [asdict(row) for row in rows],
        "quality": dict(quality),
    }


async def run(
    data: Path,
    *,
    datasets: Sequence[str],
    quality: Sequence[str],
    quick: bool = False,
    conversations: Sequence[str] = (),
    limit: int | None = None,
    embedding_cache: Path | None = None,
    model: str | None = None,
    judge_model: str | None = None,
    baselines: bool = True,
) -> dict[str, Any]:
    """Every data set found under ``data`` and every quality evaluation named; the board."""
    rows: list[Row] = []
    found: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="sagewai-evals-") as tmp:
        for name in datasets:
            path = DATASETS[name].find(data)
            if path is None:
                print(f"{name}: not under {data}; {DATASETS[name].source}", file=sys.stderr)
                continue
            found[name] = path.name
            row, _ = await dataset_row(
                name,
                path,
                Path(tmp),
                quick=quick,
                conversations=conversations if name != "longmemeval" else (),
                limit=limit,
                embedding_cache=embedding_cache,
                model=model,
                judge_model=judge_model,
                baselines=baselines,
            )
            rows.append(row)
        measured = quality_rows(quality, Path(tmp))
    return scoreboard(
        rows,
        measured,
        data_files=found,
        quick=quick,
        model=model,
        judge_model=(judge_model or model) if model else None,
    )
