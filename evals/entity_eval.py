"""Entity extraction quality on a labelled set: precision and recall per type.

Three parts are reported: all items; the held-out part (labelled before the rules changed, never
tuned on); the fresh part (sampled and labelled after the change, from messages never looked at
before: the honest figure). See ``split`` in the labels file.

The labels (``evals/data/entity_labels.json``) name messages of LoCoMo dev and BEAM 100K dev
and the character spans of the entities in them; the texts are read from the data folder. A
found entity counts when its span and its label both match a labelled one ("typed"); the
"spans" figures ignore the label. Mentions the graph builder would drop (pronouns, articles...)
are dropped here too (:func:`usable_entity_name`, the builder's own test of a name), so the
figures are those of the entities that reach the graph.

Run:
    python -m evals.entity_eval [--data DIR] [--extractor rules|gliner]
        [--out evals/results/entity_eval.json]

``DIR`` (default ``$SAGEWAI_EVAL_DATA``) holds ``locomo/locomo_dev.json`` and ``beam/100K/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evals._common import RESULTS, write_json
from evals.datasets import DATA_ENV, where_to_get
from sagewai.graph import name_key
from sagewai.intelligence import EntityExtractor, GLiNEREntityExtractor, RuleBasedEntityExtractor

LABELS = Path(__file__).resolve().parent / "data" / "entity_labels.json"
HELD_OUT = {("locomo", "conv-41"), ("beam", "6"), ("beam", "7")}

_MAX_MENTION_CHARS = 120
_JUNK_NAMES = frozenset(
    re.split(
        r"\s+",
        "i me my mine you your he him his she her it its we us our they them their this that "
        "these those there here who what which someone something anyone anything everyone "
        "everything nothing none one a an the some any another every each",
    )
)


def usable_entity_name(name: str) -> bool:
    """Whether ``ConversationGraphBuilder`` keeps a mention of this name (not a pronoun, an
    article or a quantifier, at most 120 characters, some letter or digit): the builder's own
    rule, repeated here (it is not public API); ``tests/test_entity_quality.py`` checks that
    the two agree.

    >>> usable_entity_name("Caroline"), usable_entity_name("she"), usable_entity_name("--")
    (True, False, False)
    """
    key = name_key(name)
    return (
        bool(key)
        and key not in _JUNK_NAMES
        and len(name) <= _MAX_MENTION_CHARS
        and any(ch.isalnum() for ch in key)
    )


def load_texts(data: Path, items: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    """The text of every labelled message, read from the LoCoMo and BEAM files."""
    wanted = {(i["source"], i["conversation"], i["message"]) for i in items}
    texts: dict[tuple[str, str, str], str] = {}
    locomo = json.loads((data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    for sample in locomo:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    ref = ("locomo", sample["sample_id"], turn["dia_id"])
                    if ref in wanted:
                        texts[ref] = turn["text"]
    for source, conversation, _ in {w for w in wanted if w[0] == "beam"}:
        chat_file = data / "beam" / "100K" / conversation / "chat.json"
        chat = json.loads(chat_file.read_text(encoding="utf-8"))
        for batch in chat:
            for turn in batch["turns"]:
                for message in turn:
                    ref = (source, conversation, str(message["id"]))
                    if ref in wanted:
                        texts[ref] = message["content"]
    missing = wanted - set(texts)
    if missing:
        raise SystemExit(
            f"{len(missing)} labelled messages are not in {data}: {sorted(missing)[:3]}"
        )
    return texts


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def score(
    gold: Iterable[tuple[int, int, str]], found: Iterable[tuple[int, int, str]]
) -> dict[str, Any]:
    """Typed and span-only precision and recall, overall and per label."""
    gold_set, found_set = set(gold), set(found)
    hits = gold_set & found_set
    gold_spans = {(a, b) for a, b, _ in gold_set}
    found_spans = {(a, b) for a, b, _ in found_set}
    per_label: dict[str, dict[str, Any]] = {}
    for label in sorted({g[2] for g in gold_set} | {f[2] for f in found_set}):
        g = {x for x in gold_set if x[2] == label}
        f = {x for x in found_set if x[2] == label}
        per_label[label] = {
            "gold": len(g),
            "found": len(f),
            "precision": _ratio(len(g & f), len(f)),
            "recall": _ratio(len(g & f), len(g)),
        }
    return {
        "gold": len(gold_set),
        "found": len(found_set),
        "precision": _ratio(len(hits), len(found_set)),
        "recall": _ratio(len(hits), len(gold_set)),
        "span_precision": _ratio(len(gold_spans & found_spans), len(found_spans)),
        "span_recall": _ratio(len(gold_spans & found_spans), len(gold_spans)),
        "per_label": per_label,
    }


def _parts(item: dict[str, Any]) -> list[str]:
    """The parts an item counts in: all; held out (never tuned on); fresh (labelled after)."""
    parts = ["all"]
    if item.get("fresh"):
        parts.append("fresh")
    elif (item["source"], item["conversation"]) in HELD_OUT:
        parts.append("held_out")
    return parts


async def evaluate(extractor: EntityExtractor, data: Path) -> dict[str, Any]:
    """Run ``extractor`` on every labelled message; figures for all, the held-out part, errors."""
    items = json.loads(LABELS.read_text(encoding="utf-8"))["items"]
    texts = load_texts(data, items)
    parts: dict[str, tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]] = {
        "all": ([], []),
        "held_out": ([], []),
        "fresh": ([], []),
    }
    wrong: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for number, item in enumerate(items):
        text = texts[(item["source"], item["conversation"], item["message"])]
        found = [e for e in await extractor.extract(text) if usable_entity_name(e.name)]
        # offsets are made unique per message by the item number
        gold = [(number, e["start"], e["end"], e["label"]) for e in item["entities"]]
        got = [(number, e.start, e.end, e.label) for e in found]
        for key in _parts(item):
            parts[key][0].extend((n * 100_000 + a, b + n * 100_000, lab) for n, a, b, lab in gold)
            parts[key][1].extend((n * 100_000 + a, b + n * 100_000, lab) for n, a, b, lab in got)
        gold_set = {(a, b, lab) for _, a, b, lab in gold}
        for _, a, b, label in got:
            if (a, b, label) not in gold_set:
                wrong[f"{text[a:b]}/{label}"] += 1
        got_set = {(a, b, lab) for _, a, b, lab in got}
        for _, a, b, label in gold:
            if (a, b, label) not in got_set:
                missed[f"{text[a:b]}/{label}"] += 1
    return {
        "messages": len(items),
        "mentions": sum(len(i["entities"]) for i in items),
        "all": score(*parts["all"]),
        "held_out": score(*parts["held_out"]),
        "fresh": score(*parts["fresh"]),
        "wrong": dict(wrong.most_common(40)),
        "missed": dict(missed.most_common(40)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=None, help=f"the data folder (default: ${DATA_ENV})"
    )
    parser.add_argument("--extractor", choices=["rules", "gliner"], default="rules")
    parser.add_argument("--out", type=Path, default=RESULTS / "entity_eval.json")
    args = parser.parse_args(argv)
    data = args.data or (Path(os.environ[DATA_ENV]) if os.environ.get(DATA_ENV) else None)
    if data is None or not (data / "locomo").is_dir():
        raise SystemExit(
            f"the data folder (locomo/, beam/100K/) not found: pass --data or set {DATA_ENV}. "
            + where_to_get(("locomo", "beam"))
        )
    extractor: EntityExtractor = (
        RuleBasedEntityExtractor() if args.extractor == "rules" else GLiNEREntityExtractor()
    )
    result = {"extractor": args.extractor, **asyncio.run(evaluate(extractor, data))}
    for part in ("all", "held_out", "fresh"):
        figures = result[part]
        print(
            f"{part:>9}: {figures['gold']} labelled, {figures['found']} found, precision "
            f"{figures['precision']:.3f}, recall {figures['recall']:.3f} "
            f"(spans only: {figures['span_precision']:.3f} / {figures['span_recall']:.3f})"
        )
        for label, row in figures["per_label"].items():
            print(
                f"{'':>11}{label:<13} gold {row['gold']:>3}  found {row['found']:>3}  "
                f"P {row['precision']:.3f}  R {row['recall']:.3f}"
            )
    print("wrong:", result["wrong"])
    print("missed:", result["missed"])
    write_json(args.out, result)


if __name__ == "__main__":
    main()
