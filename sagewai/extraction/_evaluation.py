"""Measuring an extractor: the labelled set, LoCoMo coverage, and throughput.

Used by ``evals/extraction_eval.py`` and ``sagewai eval extraction``. Scoring is pure
(:func:`score`); reading files and running extractors happen at the edges.

The labelled set (``evals/data/extraction_labelled.jsonl``) holds one utterance per line
with its speaker, role and time, and labels: ``should_save``, ``fact_type``, the expected
``subject``/``predicate``/``object`` and ``negated`` where a triple can be read off, the expected
``exact_values`` and ``event_time``, a contradiction ``pair_id``, and ``split`` (``dev`` for
tuning, ``heldout`` for reporting only).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sagewai.core._predicates import canonical_polarity, normalize_predicate
from sagewai.core._progress import progress_bar
from sagewai.core._records import FactType
from sagewai.errors import InvalidInputError
from sagewai.extraction._base import ExtractedFact, ExtractionContext, FactExtractor

__all__ = [
    "LabelledUtterance",
    "context_for",
    "load_labelled",
    "locomo_coverage",
    "locomo_turns",
    "predict",
    "reliability_table",
    "score",
    "throughput",
]

TYPES = tuple(t.value for t in FactType)
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset("""a an the my our your to of in on at for and with""".split())  # noqa: SIM905


@dataclass(frozen=True)
class LabelledUtterance:
    """One labelled line of the evaluation set."""

    id: str
    split: str
    text: str
    speaker: str | None
    role: str
    timestamp: datetime | None
    should_save: bool
    fact_type: str | None
    subject: str | None
    predicate: str | None
    object: str | None
    negated: bool
    exact_values: tuple[str, ...]
    event_time: str | None
    pair_id: str | None
    category: str

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> LabelledUtterance:
        """Validate one JSON line."""
        try:
            stamp = row.get("timestamp")
            return cls(
                id=str(row["id"]),
                split=str(row.get("split", "dev")),
                text=str(row["text"]),
                speaker=row.get("speaker"),
                role=str(row.get("role", "user")),
                timestamp=datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None,
                should_save=bool(row["should_save"]),
                fact_type=row.get("fact_type"),
                subject=row.get("subject"),
                predicate=row.get("predicate"),
                object=row.get("object"),
                negated=bool(row.get("negated", False)),
                exact_values=tuple(row.get("exact_values") or ()),
                event_time=row.get("event_time"),
                pair_id=row.get("pair_id"),
                category=str(row.get("category", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(f"bad labelled row {row.get('id')!r}: {exc}") from exc


def load_labelled(path: str | Path, split: str | None = None) -> list[LabelledUtterance]:
    """Read the labelled JSONL file; ``split`` keeps only ``dev`` or ``heldout`` rows."""
    items = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = LabelledUtterance.from_json(json.loads(line))
                if split in (None, "all") or item.split == split:
                    items.append(item)
    return items


def context_for(item: LabelledUtterance) -> ExtractionContext:
    """The extraction context an utterance was said in."""
    return ExtractionContext(
        speaker=item.speaker if item.role == "user" else None,
        role=item.role,
        timestamp=item.timestamp,
        message_id=item.id,
    )


async def predict(
    extractor: FactExtractor, items: Sequence[LabelledUtterance], *, progress: bool | None = None
) -> list[list[ExtractedFact]]:
    """Run ``extractor`` on every utterance, in order (a bar on a terminal, see
    :func:`~sagewai.core._progress.wants_progress`: a model takes seconds an utterance)."""
    out: list[list[ExtractedFact]] = []
    with progress_bar(len(items), "extracting", show=progress) as bar:
        for item in items:
            out.append(await extractor.extract(item.text, context_for(item)))
            bar.advance()
    return out


def _tokens(text: str | None) -> set[str]:
    return {w for w in _WORD.findall((text or "").lower()) if w not in _STOPWORDS}


def _object_matches(expected: str | None, got: str | None) -> bool:
    if expected is None:
        return True
    want, have = _tokens(expected), _tokens(got)
    if not want:
        return True
    return len(want & have) / len(want) >= 0.6


def _triple_matches(item: LabelledUtterance, fact: ExtractedFact) -> bool:
    if item.predicate is None or fact.predicate is None:
        return False
    want, _ = canonical_polarity(normalize_predicate(item.predicate) or item.predicate, False)
    have, _ = canonical_polarity(fact.predicate, False)
    if want != have:
        return False
    if item.subject and _tokens(item.subject) - _tokens(fact.subject):
        return False
    return _object_matches(item.object, fact.object)


def _polarity(predicate: str, negated: bool) -> bool:
    return canonical_polarity(normalize_predicate(predicate) or predicate, negated)[1]


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | int | None]:
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = (
        round(2 * precision * recall / (precision + recall), 4)
        if precision and recall
        else (0.0 if precision is not None and recall is not None else None)
    )
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def reliability_table(
    items: Sequence[LabelledUtterance],
    predictions: Sequence[Sequence[ExtractedFact]],
    edges: Sequence[float] = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001),
) -> list[dict[str, Any]]:
    """Confidence bins of every returned fact vs the share that were right.

    A fact is right when its utterance should be saved and its type is the labelled type (facts
    of an utterance labelled with a triple must also match it, for that fact to count as right).
    """
    bins: list[list[tuple[float, bool]]] = [[] for _ in range(len(edges) - 1)]
    for item, facts in zip(items, predictions, strict=True):
        for fact in facts:
            right = item.should_save and fact.fact_type.value == item.fact_type
            index = next(
                i for i in range(len(edges) - 1) if edges[i] <= fact.confidence < edges[i + 1]
            )
            bins[index].append((fact.confidence, right))
    table = []
    for index, members in enumerate(bins):
        if not members:
            continue
        table.append(
            {
                "bin": f"[{edges[index]:.1f}, {min(edges[index + 1], 1.0):.1f})",
                "facts": len(members),
                "mean_confidence": round(sum(c for c, _ in members) / len(members), 3),
                "precision": round(sum(1 for _, r in members if r) / len(members), 3),
            }
        )
    return table


def score(
    items: Sequence[LabelledUtterance], predictions: Sequence[Sequence[ExtractedFact]]
) -> dict[str, Any]:
    """Save-decision precision/recall/F1, type accuracy, per-type figures, triples, values, dates.

    * save decision: an utterance is *saved* when the extractor returns at least one fact;
    * type accuracy: over utterances that should be saved and were, the share whose most
      confident fact has the labelled type;
    * per type: precision/recall/F1 of "the top fact has type T" against "labelled T";
    * triples: over utterances labelled with a predicate, the share with a fact of the same
      (canonical) predicate, subject and object (60% of the object's words), and of those the
      share with the right negation;
    * exact values: share of labelled values found verbatim in a fact's ``exact_values``;
    * event time: share of labelled ISO times equal to a fact's ``event_time``;
    * negatives: per category, the share of must-not-save utterances wrongly saved.
    """
    if len(items) != len(predictions):
        raise InvalidInputError("items and predictions differ in length")
    tp = fp = fn = tn = 0
    typed = typed_right = 0
    per_type: dict[str, Counter[str]] = {t: Counter() for t in TYPES}
    triple_total = triple_hit = negation_hit = 0
    values_total = values_hit = 0
    time_total = time_hit = 0
    negatives: dict[str, Counter[str]] = defaultdict(Counter)
    errors: list[dict[str, Any]] = []
    for item, facts in zip(items, predictions, strict=True):
        saved = bool(facts)
        top = facts[0].fact_type.value if facts else None
        if item.should_save and saved:
            tp += 1
            typed += 1
            typed_right += top == item.fact_type
        elif item.should_save:
            fn += 1
        elif saved:
            fp += 1
        else:
            tn += 1
        if not item.should_save:
            negatives[item.category]["total"] += 1
            negatives[item.category]["saved"] += saved
        for fact_type in TYPES:
            if top == fact_type and item.fact_type == fact_type:
                per_type[fact_type]["tp"] += 1
            elif top == fact_type:
                per_type[fact_type]["fp"] += 1
            elif item.fact_type == fact_type:
                per_type[fact_type]["fn"] += 1
        if item.predicate:
            triple_total += 1
            matching = [fact for fact in facts if _triple_matches(item, fact)]
            if matching:
                triple_hit += 1
                want = _polarity(item.predicate, item.negated)
                negation_hit += any(
                    _polarity(fact.predicate or "", fact.negated) == want for fact in matching
                )
        for value in item.exact_values:
            values_total += 1
            values_hit += any(value in fact.exact_values for fact in facts)
        if item.event_time:
            time_total += 1
            time_hit += any(fact.event_time == item.event_time for fact in facts)
        wrong_save = saved != item.should_save
        wrong_type = item.should_save and saved and top != item.fact_type
        if wrong_save or wrong_type:
            errors.append(
                {
                    "id": item.id,
                    "text": item.text,
                    "expected": item.fact_type if item.should_save else None,
                    "got": top,
                    "facts": [f"{f.fact_type.value} {f.confidence} {f.content}" for f in facts],
                }
            )
    return {
        "utterances": len(items),
        "save": {**_prf(tp, fp, fn), "tn": tn},
        "type_accuracy": _ratio(typed_right, typed),
        "per_type": {t: _prf(c["tp"], c["fp"], c["fn"]) for t, c in per_type.items()},
        "triples": {
            "labelled": triple_total,
            "matched": _ratio(triple_hit, triple_total),
            "negation_correct": _ratio(negation_hit, triple_hit),
        },
        "exact_values": {"labelled": values_total, "recall": _ratio(values_hit, values_total)},
        "event_time": {"labelled": time_total, "accuracy": _ratio(time_hit, time_total)},
        "negatives_saved": {
            category: {"total": c["total"], "wrongly_saved": c["saved"]}
            for category, c in sorted(negatives.items())
        },
        "reliability": reliability_table(items, predictions),
        "errors": errors,
    }


# ---------------------------------------------------------------- LoCoMo
_DIA = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class LocomoTurn:
    """One turn of a LoCoMo conversation, with the reference observations tied to it."""

    sample_id: str
    dia_id: str
    speaker: str
    text: str
    timestamp: datetime | None
    observations: tuple[str, ...]


def _locomo_time(text: str | None) -> datetime | None:
    if not text:
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def locomo_turns(path: str | Path) -> list[LocomoTurn]:
    """Every turn of a LoCoMo file with its session time and its reference observations.

    Observations name their turn by dia_id; malformed references are split on separators and
    ids that resolve to no turn are dropped (see the data README).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    turns: list[LocomoTurn] = []
    for sample in data:
        conversation = sample["conversation"]
        by_turn: dict[str, list[str]] = defaultdict(list)
        for per_speaker in (sample.get("observation") or {}).values():
            for facts in per_speaker.values():
                for entry in facts:
                    if not isinstance(entry, list) or len(entry) < 2:
                        continue
                    fact, refs = entry[0], entry[1]
                    refs_text = " ".join(refs) if isinstance(refs, list) else str(refs)
                    for dia in _DIA.findall(refs_text):
                        by_turn[dia].append(str(fact))
        index = 1
        while f"session_{index}" in conversation:
            stamp = _locomo_time(conversation.get(f"session_{index}_date_time"))
            for turn in conversation[f"session_{index}"]:
                dia = str(turn.get("dia_id", ""))
                turns.append(
                    LocomoTurn(
                        sample_id=str(sample.get("sample_id", "")),
                        dia_id=dia,
                        speaker=str(turn.get("speaker", "")),
                        text=str(turn.get("text", "")),
                        timestamp=stamp,
                        observations=tuple(by_turn.get(dia, ())),
                    )
                )
            index += 1
    return turns


async def locomo_coverage(
    turns: Sequence[LocomoTurn],
    extractor: FactExtractor,
    embed: Callable[[Sequence[str]], Any],
    threshold: float = 0.7,
) -> dict[str, Any]:
    """How much of LoCoMo's reference observations the extractor's facts cover.

    * ``observation_coverage``: share of reference observations with an extracted fact from the
      same turn at cosine >= ``threshold``;
    * ``fact_precision``: share of extracted facts that match some observation of their turn;
    * ``raw_turn_coverage``: the same coverage when the raw turn text ("speaker: text") stands
      in for the facts, for reference.

    Args:
        turns: From :func:`locomo_turns`.
        extractor: Any fact extractor.
        embed: ``texts -> (n, d)`` unit vectors (e.g. ``MiniLMEmbedder().embed_sync``).
        threshold: Cosine at which a fact matches an observation.
    """
    import numpy as np

    facts_per_turn: list[list[str]] = []
    for turn in turns:
        context = ExtractionContext(
            speaker=turn.speaker or None, timestamp=turn.timestamp, message_id=turn.dia_id
        )
        facts_per_turn.append(
            [fact.content for fact in await extractor.extract(turn.text, context)]
        )
    observations = [obs for turn in turns for obs in turn.observations]
    fact_texts = [text for texts in facts_per_turn for text in texts]
    raw_texts = [f"{turn.speaker}: {turn.text}" for turn in turns]
    obs_vectors = np.asarray(embed(observations)) if observations else np.zeros((0, 1))
    fact_vectors = np.asarray(embed(fact_texts)) if fact_texts else np.zeros((0, 1))
    raw_vectors = np.asarray(embed(raw_texts)) if raw_texts else np.zeros((0, 1))
    covered = raw_covered = matched_facts = 0
    obs_cursor = fact_cursor = 0
    for index, turn in enumerate(turns):
        n_obs, n_facts = len(turn.observations), len(facts_per_turn[index])
        turn_obs = obs_vectors[obs_cursor : obs_cursor + n_obs]
        turn_facts = fact_vectors[fact_cursor : fact_cursor + n_facts]
        if n_obs:
            raw_sims = turn_obs @ raw_vectors[index]
            raw_covered += int((raw_sims >= threshold).sum())
        if n_obs and n_facts:
            sims = turn_obs @ turn_facts.T
            covered += int((sims.max(axis=1) >= threshold).sum())
            matched_facts += int((sims.max(axis=0) >= threshold).sum())
        obs_cursor += n_obs
        fact_cursor += n_facts
    turns_with_facts = sum(1 for texts in facts_per_turn if texts)
    return {
        "turns": len(turns),
        "observations": len(observations),
        "facts": len(fact_texts),
        "turns_with_facts": turns_with_facts,
        "threshold": threshold,
        "observation_coverage": _ratio(covered, len(observations)),
        "fact_precision": _ratio(matched_facts, len(fact_texts)),
        "raw_turn_coverage": _ratio(raw_covered, len(observations)),
    }


def throughput(
    extract: Callable[[str, ExtractionContext | None], object],
    texts: Iterable[tuple[str, ExtractionContext | None]],
    *,
    min_seconds: float = 2.0,
) -> dict[str, float]:
    """Messages per second of a synchronous extract function, repeated for ``min_seconds``."""
    corpus = list(texts)
    if not corpus:
        raise InvalidInputError("no texts to time")
    done = 0
    started = time.perf_counter()
    elapsed = 0.0
    while elapsed < min_seconds:
        for text, context in corpus:
            extract(text, context)
        done += len(corpus)
        elapsed = time.perf_counter() - started
    return {
        "messages": done,
        "seconds": round(elapsed, 3),
        "messages_per_second": round(done / elapsed, 1),
    }
