"""``sagewai eval``: measure sagewai's parts on labelled data.

``sagewai eval extraction`` scores a fact extractor on a labelled set (``--data PATH``, or the
``SAGEWAI_EVAL_DATA`` environment variable; the set is ``evals/data/extraction_labelled.jsonl``
of the source repository): save-decision precision, recall and F1, type
accuracy, per-type figures, triples, negation, exact values, event times and a reliability table
(confidence bins vs precision), for the ``dev`` and ``heldout`` splits. With ``--locomo`` it
also measures how much of LoCoMo's reference observations the extracted facts cover. It prints
a report and writes the figures as JSON.

Example:
    sagewai eval extraction --data evals/data/extraction_labelled.jsonl --locomo locomo10.json
    sagewai eval extraction --data labelled.jsonl --extractor hybrid --model gpt-4o-mini --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sagewai.errors import ConfigurationError

__all__ = [
    "DATA_ENV",
    "DEFAULT_OUT",
    "WHERE_TO_GET",
    "data_path",
    "register",
    "run_extraction_eval",
]

DATA_ENV = "SAGEWAI_EVAL_DATA"
"""The environment variable naming the data when ``--data`` is not given."""
DEFAULT_OUT = "extraction_eval.json"
WHERE_TO_GET = (
    "the labelled set is evals/data/extraction_labelled.jsonl in the sagewai source repository;"
    " LoCoMo: https://github.com/snap-research/locomo (data/locomo10.json);"
    " BEAM: https://github.com/mohammadtavakoli78/BEAM (chats/100K)"
)
"""Where the evaluation data come from (said in one line when the data are missing)."""
_SPLITS = ("dev", "heldout", "all")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``eval`` and its ``extraction`` subcommand."""
    parser = subparsers.add_parser("eval", help="measure sagewai's parts on labelled data")
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    extraction = targets.add_parser(
        "extraction", help="score a fact extractor on the labelled set (and LoCoMo coverage)"
    )
    extraction.add_argument(
        "--data", default=None, help=f"labelled JSONL file, or a folder holding it (${DATA_ENV})"
    )
    extraction.add_argument("--split", choices=_SPLITS, default=None, help="one split only")
    extraction.add_argument(
        "--extractor", choices=("rules", "llm", "hybrid"), default="rules", help="what to score"
    )
    extraction.add_argument("--min-confidence", type=float, default=0.4)
    extraction.add_argument("--model", default="gpt-4o-mini", help="litellm model (llm, hybrid)")
    extraction.add_argument("--api-base", default=None, help="OpenAI-compatible server URL")
    extraction.add_argument("--locomo", default=None, help="LoCoMo JSON file for coverage")
    extraction.add_argument("--locomo-threshold", type=float, default=0.7)
    extraction.add_argument(
        "--embedder", choices=("minilm", "fake"), default="minilm", help="for LoCoMo coverage"
    )
    extraction.add_argument(
        "--throughput-seconds", type=float, default=2.0, help="0 skips the throughput run"
    )
    extraction.add_argument("--errors", type=int, default=20, help="errors listed per split")
    extraction.add_argument("--out", default=DEFAULT_OUT, help="JSON results file")
    extraction.add_argument("--json", action="store_true", help="print the JSON, not a report")
    extraction.set_defaults(handler=_handle_extraction)


def _handle_extraction(args: argparse.Namespace) -> int:
    results = run_extraction_eval(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        _print_report(results, sys.stdout)
        print(f"\nwritten: {out}")
    return 0


def _extractor(args: argparse.Namespace) -> Any:
    from sagewai.extraction import (
        HybridFactExtractor,
        LLMFactExtractor,
        RuleBasedFactExtractor,
    )

    rules = RuleBasedFactExtractor(min_confidence=args.min_confidence)
    if args.extractor == "rules":
        return rules
    llm = LLMFactExtractor(model=args.model, api_base=args.api_base, fallback=rules)
    if args.extractor == "llm":
        return llm
    return HybridFactExtractor(rule_extractor=rules, llm_extractor=llm)


def _embedder(name: str) -> Callable[[Sequence[str]], Any]:
    if name == "fake":
        from sagewai.embeddings._fake import FakeEmbedder

        return FakeEmbedder(dimension=128).embed_sync
    from sagewai.embeddings._minilm import MiniLMEmbedder

    return MiniLMEmbedder().embed_sync


def _throughput(extractor: Any, corpora: dict[str, list[Any]], seconds: float) -> dict[str, Any]:
    """Messages per second of the rule extractor on one core (best of three CPU-time runs)."""
    extract = getattr(extractor, "extract_sync", None)
    if extract is None or seconds <= 0:
        return {}
    figures: dict[str, Any] = {}
    for name, corpus in corpora.items():
        if not corpus:
            continue
        best = 0.0
        done = 0
        for _ in range(3):
            count = 0
            started = time.process_time()
            while time.process_time() - started < seconds / 3:
                for text, context in corpus:
                    extract(text, context)
                count += len(corpus)
            rate = count / max(time.process_time() - started, 1e-9)
            best, done = max(best, rate), done + count
        figures[name] = {
            "messages": done,
            "mean_chars": round(sum(len(text) for text, _ in corpus) / len(corpus), 1),
            "messages_per_cpu_second": round(best, 1),
        }
    with contextlib.suppress(OSError):
        figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    return figures


def data_path(given: str | None, env: Mapping[str, str] | None = None) -> Path:
    """The labelled set: ``--data``, else ``$SAGEWAI_EVAL_DATA``; a folder means the
    ``extraction_labelled.jsonl`` inside it.

    Raises:
        ConfigurationError: neither names an existing file (the message says where to get it).

    Example:
        >>> data_path(None, env={})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        sagewai.errors.ConfigurationError: no labelled set: pass --data PATH or set ...
    """
    chosen = given or (os.environ if env is None else env).get(DATA_ENV)
    if not chosen:
        raise ConfigurationError(
            f"no labelled set: pass --data PATH or set {DATA_ENV} ({WHERE_TO_GET})"
        )
    path = Path(chosen)
    if path.is_dir():
        path = path / "extraction_labelled.jsonl"
    if not path.is_file():
        raise ConfigurationError(f"labelled set not found: {path} ({WHERE_TO_GET})")
    return path


def run_extraction_eval(args: argparse.Namespace) -> dict[str, Any]:
    """Run the whole evaluation described by ``args`` and return the figures."""
    from sagewai.extraction._base import ExtractionContext
    from sagewai.extraction._evaluation import (
        context_for,
        load_labelled,
        locomo_coverage,
        locomo_turns,
        predict,
        score,
    )

    data = data_path(args.data)
    turns = []
    if args.locomo:
        if not Path(args.locomo).is_file():
            raise ConfigurationError(f"LoCoMo file not found: {args.locomo} ({WHERE_TO_GET})")
        turns = locomo_turns(args.locomo)
    items = load_labelled(data)
    extractor = _extractor(args)

    async def measure() -> tuple[list[Any], dict[str, Any] | None]:
        predictions = await predict(extractor, items)
        coverage = None
        if turns:
            coverage = await locomo_coverage(
                turns, extractor, _embedder(args.embedder), threshold=args.locomo_threshold
            )
            coverage["embedder"] = args.embedder
        return predictions, coverage

    predictions, coverage = asyncio.run(measure())
    splits: dict[str, Any] = {}
    for split in (args.split,) if args.split else _SPLITS:
        chosen = [i for i, item in enumerate(items) if split == "all" or item.split == split]
        figures = score([items[i] for i in chosen], [predictions[i] for i in chosen])
        figures["errors"] = figures["errors"][: args.errors]
        splits[split] = figures
    results: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "extractor": repr(extractor),
        "min_confidence": args.min_confidence,
        "data": str(data),
        "splits": splits,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count()},
    }  # fmt: skip
    corpora: dict[str, list[Any]] = {"labelled": [(i.text, context_for(i)) for i in items]}
    if coverage is not None:
        results["locomo"] = coverage
        corpora["locomo"] = [
            (t.text, ExtractionContext(speaker=t.speaker or None, timestamp=t.timestamp))
            for t in turns
        ]
    results["throughput"] = _throughput(extractor, corpora, args.throughput_seconds)
    stats = getattr(extractor, "stats", None)
    if stats is not None and args.extractor != "rules":
        results["extractor_stats"] = {
            key: value for key, value in vars(stats).items() if not key.startswith("_")
        }
        share = getattr(stats, "llm_share", None)
        if share is not None:
            results["extractor_stats"]["llm_share"] = round(share, 4)
    return results


def _fmt(value: Any) -> str:
    return "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def _print_report(results: dict[str, Any], out: Any) -> None:
    write = out.write
    write(f"extractor: {results['extractor']}  (min_confidence {results['min_confidence']})\n")
    for split, figures in results["splits"].items():
        save = figures["save"]
        write(f"\n== {split}: {figures['utterances']} utterances\n")
        write(
            f"save decision  precision {_fmt(save['precision'])}  recall {_fmt(save['recall'])}"
            f"  F1 {_fmt(save['f1'])}  (tp {save['tp']} fp {save['fp']} fn {save['fn']}"
            f" tn {save['tn']})\n"
        )
        write(f"type accuracy  {_fmt(figures['type_accuracy'])}\n")
        triples = figures["triples"]
        write(
            f"triples        {_fmt(triples['matched'])} of {triples['labelled']} labelled;"
            f" negation right {_fmt(triples['negation_correct'])}\n"
        )
        write(
            f"exact values   recall {_fmt(figures['exact_values']['recall'])}"
            f" of {figures['exact_values']['labelled']};"
            f" event time accuracy {_fmt(figures['event_time']['accuracy'])}"
            f" of {figures['event_time']['labelled']}\n"
        )
        write("per type       " + "  ".join(
            f"{name} P {_fmt(v['precision'])} R {_fmt(v['recall'])} F1 {_fmt(v['f1'])}"
            for name, v in figures["per_type"].items()
        ) + "\n")  # fmt: skip
        write("negatives      " + ", ".join(
            f"{name} {v['wrongly_saved']}/{v['total']}"
            for name, v in figures["negatives_saved"].items()
        ) + " wrongly saved\n")  # fmt: skip
        write("reliability    " + "  ".join(
            f"{row['bin']} n={row['facts']} conf {row['mean_confidence']:.2f}"
            f" prec {row['precision']:.2f}"
            for row in figures["reliability"]
        ) + "\n")  # fmt: skip
        for error in figures["errors"][:10]:
            write(f"  error {error['id']}: {error['text'][:70]!r} expected {error['expected']}"
                  f" got {error['got']}\n")  # fmt: skip
    locomo = results.get("locomo")
    if locomo:
        write(
            f"\n== LoCoMo ({locomo['turns']} turns, {locomo['observations']} observations,"
            f" cosine >= {locomo['threshold']}, {locomo['embedder']})\n"
            f"observation coverage {_fmt(locomo['observation_coverage'])}"
            f"  fact precision {_fmt(locomo['fact_precision'])}"
            f"  ({locomo['facts']} facts from {locomo['turns_with_facts']} turns;"
            f" raw-turn coverage for reference {_fmt(locomo['raw_turn_coverage'])})\n"
        )
    throughput = results.get("throughput") or {}
    for name, figures in throughput.items():
        if isinstance(figures, dict):
            write(
                f"throughput {name}: {figures['messages_per_cpu_second']:.0f} messages per"
                f" CPU-second (mean {figures['mean_chars']} chars)\n"
            )
    if "load_average_1min" in throughput:
        write(f"machine load average (1 min): {throughput['load_average_1min']}\n")
    stats = results.get("extractor_stats")
    if stats:
        write(f"extractor stats: {json.dumps(stats)}\n")
