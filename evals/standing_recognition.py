"""Standing statements: does the rule extractor recognise what a user says once and means for good?

Usage:
    python -m evals.standing_recognition [--data evals/data/standing_statements.jsonl]
        [--show-errors] [--out evals/results/standing_recognition.json]

Method (issue 42, acceptance 2; ``docs/profile.md`` has the figures):

* ``evals/data/standing_statements.jsonl`` holds user messages, each labelled ``standing``
  (an instruction, preference, constraint or identity fact the user expects kept in later
  answers: "Bullet points work best for me.", "We don't eat meat at home.", "When I ask about
  X, ...", often inside a longer message about something else) or not (one-off requests such
  as "Can you make this one shorter?", questions, events, plans, feelings, statements about
  other people, pasted assistant-like text). It was written before the recognition rules it
  measures were changed, and the rules were then tuned on it: it is a development set.
* Each message is read by ``RuleBasedFactExtractor`` as a user turn; it is **recognised**
  when at least one fact it yields carries a profile mark (``metadata["profile"]``: what the
  bridge turns into a standing profile entry shown in every prompt).
* Precision and recall of "recognised" against the label, overall and per ``form``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals._common import RESULTS, write_json
from sagewai.core import PROFILE_TAG
from sagewai.extraction import ExtractionContext
from sagewai.intelligence import RuleBasedFactExtractor

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "standing_statements.jsonl"
DEFAULT_OUT = RESULTS / "standing_recognition.json"
MARK = PROFILE_TAG
"""The metadata key of an extractor's profile mark: the bridge turns a marked fact of a user's
turn into an entry tagged ``profile`` (the same word)."""


def load(path: Path) -> list[dict[str, Any]]:
    """The labelled messages of ``path`` (one JSON object a line)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [row for row in rows if isinstance(row.get("text"), str)]


def recognised(extractor: RuleBasedFactExtractor, text: str) -> list[str]:
    """The profile entries (kind: words) the extractor marks in a user's ``text``."""
    analysis = extractor.analyze(text, ExtractionContext(role="user"))
    return [
        f"{fact.metadata[MARK]}: {fact.content}"
        for fact in analysis.facts
        if fact.metadata.get(MARK) is not None
    ]


def run(rows: Sequence[dict[str, Any]], *, show_errors: bool = False) -> dict[str, Any]:
    extractor = RuleBasedFactExtractor()
    tally: Counter[str] = Counter()
    by_form: dict[str, Counter[str]] = {}
    errors: list[dict[str, Any]] = []
    for row in rows:
        entries = recognised(extractor, row["text"])
        label, said = bool(row["standing"]), bool(entries)
        outcome = {(True, True): "tp", (True, False): "fn", (False, True): "fp"}.get(
            (label, said), "tn"
        )
        tally[outcome] += 1
        by_form.setdefault(row.get("form", "?"), Counter())[outcome] += 1
        if outcome in ("fp", "fn"):
            errors.append({"outcome": outcome, "text": row["text"], "entries": entries})
    precision = tally["tp"] / max(1, tally["tp"] + tally["fp"])
    recall = tally["tp"] / max(1, tally["tp"] + tally["fn"])
    if show_errors:
        for error in errors:
            print(f"  {error['outcome']}: {error['text']}")
            for entry in error["entries"]:
                print(f"        -> {entry}")
    return {
        "standing": tally["tp"] + tally["fn"],
        "not_standing": tally["fp"] + tally["tn"],
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "false_positives": tally["fp"],
        "false_negatives": tally["fn"],
        "by_form": {form: dict(counts) for form, counts in sorted(by_form.items())},
        "errors": errors,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(load(args.data), show_errors=args.show_errors)
    result["seconds"] = round(time.perf_counter() - started, 2)
    print(
        f"standing {result['standing']}  not standing {result['not_standing']}  "
        f"precision {result['precision']:.3f}  recall {result['recall']:.3f}  "
        f"(fp {result['false_positives']}, fn {result['false_negatives']})"
    )
    write_json(args.out, {"data": str(args.data), **result})


if __name__ == "__main__":
    main()
