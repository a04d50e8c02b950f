"""Generated chat-like facts (for ``benchmarks.consolidation_bench --realistic``) and their
consolidation quality (``python -m evals.consolidation_realistic``).

A corpus of plain facts (no triple, as ``ctx.add(text)`` writes them) about a few thousand
people: preferences and tools ("Ben Okafor likes ramen on weekends."), homes and employers,
counts, payments, appointments, service versions, distances and durations, meals with friends.
Each generated statement has a key (what it states); a merge is right when both facts have the
same key. Planted among them, each right after the fact it is about:

* restatements (7.5 % of the facts): the same statement in other words (an intensifier, the
  progressive, "keeps ...ing", "currently", another word order, lower case, no punctuation);
* near-distinct distractors (18 %): the same sentence with another predicate, object or subject,
  a negation, another number, amount, date, version, unit, name or place, or another tense;
* contradictions (1.5 %): a person said to live in one city, later in another, written with
  triples (``lives_in`` holds one value): the older must be superseded.

The vectors are MiniLM's (384-d), embedded once and cached by text in an ``.npz`` file.
"""

from __future__ import annotations

import asyncio
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sagewai import Fact

FIRST = [
    "Ben",
    "Ana",
    "Eli",
    "Chen",
    "Maya",
    "Omar",
    "Lena",
    "Ravi",
    "Sofia",
    "Jonas",
    "Priya",
    "Tom",
    "Nadia",
    "Kenji",
    "Olga",
    "Carlos",
    "Mia",
    "Ahmed",
    "Lucia",
    "Felix",
    "Hana",
    "Ivan",
    "Zoe",
    "Marco",
    "Aisha",
    "Noah",
    "Elena",
    "Yuki",
    "Sam",
    "Leila",
    "Grace",
    "Hugo",
    "Iris",
    "Jamal",
    "Kira",
    "Liam",
    "Nora",
    "Oscar",
    "Paula",
    "Quinn",
    "Rosa",
    "Theo",
    "Uma",
    "Victor",
    "Wendy",
    "Xavier",
    "Yara",
    "Zane",
    "Alma",
]
LAST = [
    "Okafor",
    "Silva",
    "Tanaka",
    "Novak",
    "Haddad",
    "Kowalski",
    "Moreau",
    "Rossi",
    "Jensen",
    "Park",
    "Mendes",
    "Schmidt",
    "Ito",
    "Costa",
    "Dubois",
    "Larsen",
    "Weber",
    "Nakamura",
    "Khan",
    "Ortiz",
    "Fischer",
    "Horvat",
    "Lindqvist",
    "Petrov",
    "Reyes",
    "Sato",
    "Varga",
    "Walsh",
    "Yilmaz",
    "Zhou",
    "Abe",
    "Bauer",
    "Cruz",
    "Diallo",
    "Engel",
    "Fontaine",
    "Gupta",
    "Hale",
    "Iqbal",
]
THINGS = {
    "uses": [
        "Rust",
        "Python",
        "Go",
        "Kotlin",
        "Docker",
        "Kafka",
        "Redis",
        "Figma",
        "Notion",
        "Linux",
        "Vim",
        "Excel",
        "Slack",
        "Terraform",
        "Postgres",
        "Jira",
    ],
    "likes": [
        "ramen",
        "sushi",
        "tacos",
        "jazz",
        "chess",
        "yoga",
        "hiking",
        "pizza",
        "tea",
        "coffee",
        "poetry",
        "salsa",
        "opera",
        "surfing",
        "curry",
        "tennis",
    ],
    "studies": [
        "physics",
        "biology",
        "Spanish",
        "German",
        "history",
        "law",
        "medicine",
        "economics",
        "chemistry",
        "philosophy",
        "statistics",
        "music",
        "architecture",
        "geology",
        "Japanese",
        "astronomy",
    ],
    "recommends": [
        "chess",
        "yoga",
        "Rust",
        "Kafka",
        "Linux",
        "tea",
        "hiking",
        "poetry",
        "Docker",
        "Vim",
        "jazz",
        "tennis",
        "sushi",
        "Notion",
        "Redis",
        "curry",
    ],
}
OTHER_VERB = {
    "uses": ("likes", "recommends", "sells"),
    "likes": ("uses", "recommends", "sells"),
    "studies": ("teaches", "likes", "recommends"),
    "recommends": ("uses", "likes", "sells"),
}
ING = {"uses": "using", "likes": "liking", "studies": "studying", "recommends": "recommending"}
BASE = {"uses": "use", "likes": "like", "studies": "study", "recommends": "recommend"}
WHEN = ("", " at work", " on weekends", " at home", " every morning")
CITIES = [
    "Paris",
    "Berlin",
    "Lisbon",
    "Madrid",
    "Rome",
    "Vienna",
    "Prague",
    "Oslo",
    "Dublin",
    "Warsaw",
    "Athens",
    "Zurich",
    "Lyon",
    "Porto",
    "Kyoto",
    "Seoul",
    "Boston",
    "Denver",
    "Austin",
    "Toronto",
]
COMPANIES = [
    "Initech",
    "Globex",
    "Umbrella",
    "Stark",
    "Wayne",
    "Acme",
    "Hooli",
    "Vandelay",
    "Soylent",
    "Cyberdyne",
]
PETS = ("cats", "dogs", "bikes", "guitars", "plants")
ITEMS = ("the ticket", "the course", "the bike", "the flight", "the laptop")
EVENTS = ("dentist appointment", "flight", "interview", "exam", "birthday party")
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
]
TOOLS = ("Python", "Node", "Postgres", "Django", "React", "Kubernetes", "Redis", "Java")
VERSIONS = ("3.10", "3.11", "3.12", "1.4.2", "2.0.1", "18.2", "5.7", "8.0", "14.1", "0.9.3")
SERVICES = ("billing", "search", "payments", "auth", "reporting")
UNITS = {
    "ran": ("km", "miles"),
    "carried": ("kg", "pounds"),
    "logged": ("hours", "minutes"),
}
MEALS = ("lunch", "dinner", "coffee", "breakfast")

Statement = tuple[Any, ...]


@dataclass
class Planted:
    restatements: dict[str, str] = field(default_factory=dict)
    """restatement id -> the id of the fact it restates."""
    distractors: int = 0
    contradictions: dict[str, str] = field(default_factory=dict)
    """loser id -> winner id."""


def render(statement: Statement) -> str:
    """The sentence of a statement."""
    kind, who, *rest = statement
    if kind == "pref":
        verb, thing, when, negated, tense = rest
        if negated:
            return f"{who} does not {BASE.get(verb, verb)} {thing}{when}."
        if tense == "past":
            return f"{who} {'used' if verb == 'uses' else verb} {thing}{when}."
        return f"{who} {verb} {thing}{when}."
    if kind == "home":
        city, tense = rest
        return f"{who} {'moved to' if tense == 'past' else 'is moving to'} {city}."
    if kind == "job":
        company, city = rest
        return f"{who} works at {company} in {city}."
    if kind == "count":
        n, pet = rest
        return f"{who} has {n} {pet}."
    if kind == "paid":
        amount, item = rest
        return f"{who} paid ${amount} for {item}."
    if kind == "date":
        event, month, day = rest
        return f"{who}'s {event} is on {month} {day}."
    if kind == "version":
        service, tool, version = rest
        return f"{who}'s {service} service runs {tool} {version}."
    if kind == "unit":
        act, n, unit = rest
        return f"{who} {act} {n} {unit} today."
    meal, friend = rest
    return f"{who} had {meal} with {friend}."


class RealisticWorld:
    """Generates the realistic corpus deterministically from a seed (a prefix is a corpus)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.truth = Planted()
        self.serial = 0

    def _person(self) -> str:
        return f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"

    def _statement(self) -> Statement:
        rng, who = self.rng, self._person()
        kind = rng.choices(
            ("pref", "home", "job", "count", "paid", "date", "version", "unit", "meal"),
            weights=(40, 6, 8, 8, 8, 8, 8, 7, 7),
        )[0]
        if kind == "pref":
            verb = rng.choice(list(THINGS))
            return ("pref", who, verb, rng.choice(THINGS[verb]), rng.choice(WHEN), False, "now")
        if kind == "home":
            return ("home", who, rng.choice(CITIES), "past")
        if kind == "job":
            return ("job", who, rng.choice(COMPANIES), rng.choice(CITIES))
        if kind == "count":
            return ("count", who, rng.randint(2, 9), rng.choice(PETS))
        if kind == "paid":
            return ("paid", who, rng.choice((12, 25, 40, 99, 150, 300)), rng.choice(ITEMS))
        if kind == "date":
            return ("date", who, rng.choice(EVENTS), rng.choice(MONTHS), rng.randint(1, 27))
        if kind == "version":
            return ("version", who, rng.choice(SERVICES), rng.choice(TOOLS), rng.choice(VERSIONS))
        if kind == "unit":
            act = rng.choice(list(UNITS))
            return ("unit", who, act, rng.choice((3, 5, 10, 12, 20)), UNITS[act][0])
        return ("meal", who, rng.choice(MEALS), rng.choice(FIRST))

    def _distractor(self, s: Statement) -> Statement:
        rng = self.rng
        kind = s[0]
        if kind == "pref":
            _, who, verb, thing, when, _, _ = s
            change = rng.randrange(5)
            if change == 0:
                return ("pref", who, rng.choice(OTHER_VERB[verb]), thing, when, False, "now")
            if change == 1:
                other = rng.choice([t for t in THINGS[verb] if t != thing])
                return ("pref", who, verb, other, when, False, "now")
            if change == 2:
                return ("pref", self._person(), verb, thing, when, False, "now")
            if change == 3:
                return ("pref", who, verb, thing, when, True, "now")
            return ("pref", who, "uses", thing, when, False, "past") if verb == "uses" else (
                "pref", who, verb, thing, when, True, "now"
            )  # fmt: skip
        if kind == "home":
            return ("home", s[1], s[2], "progressive")
        if kind == "job":
            return ("job", s[1], s[2], rng.choice([c for c in CITIES if c != s[3]]))
        if kind == "count":
            return ("count", s[1], s[2] + rng.choice((1, 2, 10)), s[3])
        if kind == "paid":
            return ("paid", s[1], s[2] + rng.choice((1, 5, 10)), s[3])
        if kind == "date":
            return ("date", s[1], s[2], s[3], s[4] + 1)
        if kind == "version":
            return ("version", s[1], s[2], s[3], rng.choice([v for v in VERSIONS if v != s[4]]))
        if kind == "unit":
            return ("unit", s[1], s[2], s[3], UNITS[s[2]][1])
        return ("meal", s[1], s[2], rng.choice([f for f in FIRST if f != s[3]]))

    def _restatement(self, s: Statement) -> str:
        rng, text = self.rng, render(s)
        if s[0] == "pref" and not s[5]:
            _, who, verb, thing, when, _, _ = s
            form = rng.randrange(6)
            if form == 0:
                return (
                    f"{who} {rng.choice(('really', 'truly', 'definitely'))} {verb} {thing}{when}."
                )
            if form == 1:
                return f"{who} is {ING[verb]} {thing}{when}."
            if form == 2:
                return f"{who} keeps {ING[verb]} {thing}{when}."
            if form == 3:
                return f"{who} currently {verb} {thing}{when}."
            if form == 4 and when:
                place = when.strip()
                return f"{place[0].upper()}{place[1:]}, {who} {verb} {thing}."
        return text.lower().rstrip(".")

    def _fact(self, text: str, project: str, now: datetime, **fields: Any) -> Fact:
        self.serial += 1
        age = timedelta(days=self.rng.uniform(0, 60))
        return Fact(
            id=f"r{self.serial:08d}", project_id=project, content=text, created_at=now - age,
            **fields,
        )  # fmt: skip

    def facts(self, size: int, project: str, now: datetime) -> tuple[list[Fact], dict[str, Any]]:
        """About ``size`` facts and the key (the statement) of each fact id."""
        out: list[Fact] = []
        keys: dict[str, Any] = {}
        seen: set[str] = set()
        rng = self.rng
        while len(out) < size:
            roll = rng.random()
            if roll < 0.01:  # a contradiction, with triples, about a person of its own
                who, (first, second) = f"{self._person()} {self.serial}", rng.sample(CITIES, 2)
                older = self._fact(
                    f"{who} lives in {first}.", project, now - timedelta(days=90),
                    subject=who, predicate="lives_in", object=first,
                )  # fmt: skip
                newer = self._fact(
                    f"{who} lives in {second}.", project, now,
                    subject=who, predicate="lives_in", object=second,
                )  # fmt: skip
                out += (older, newer)
                keys[older.id], keys[newer.id] = ("lives", who, first), ("lives", who, second)
                self.truth.contradictions[older.id] = newer.id
                continue
            statement = self._statement()
            text = render(statement)
            if text in seen:
                continue
            seen.add(text)
            base = self._fact(text, project, now)
            out.append(base)
            keys[base.id] = statement
            if roll < 0.11:  # a restatement
                copy = self._fact(self._restatement(statement), project, now)
                out.append(copy)
                keys[copy.id] = statement
                self.truth.restatements[copy.id] = base.id
            elif roll < 0.36:  # a near-distinct distractor (about 20 % of the corpus)
                other = self._distractor(statement)
                distractor = self._fact(render(other), project, now)
                seen.add(distractor.content)
                out.append(distractor)
                keys[distractor.id] = other
                self.truth.distractors += 1
        return out[:size], keys


Shards = tuple[dict[str, tuple[int, int]], list[npt.NDArray[np.float32]]]


def _read_cache(cache: Path) -> Shards:
    """The cached vectors: text -> (shard, row), and the shards' vectors."""
    if cache.suffix == ".npz":
        files = [cache] if cache.exists() else []
    else:
        files = sorted(cache.glob("shard-*.npz")) if cache.is_dir() else []
    index: dict[str, tuple[int, int]] = {}
    shards: list[npt.NDArray[np.float32]] = []
    for number, path in enumerate(files):
        with np.load(path, allow_pickle=False) as stored:
            shards.append(np.asarray(stored["vectors"], dtype=np.float32))
            for row, text in enumerate(stored["texts"]):
                index.setdefault(str(text), (number, row))
    return index, shards


def _write_shard(folder: Path, texts: list[str], vectors: npt.NDArray[np.float32]) -> None:
    """Write one shard under a temporary name, then rename it (a reader never sees half)."""
    folder.mkdir(parents=True, exist_ok=True)
    serial = len(list(folder.glob("shard-*.npz")))
    partial = folder / f"partial-{serial:05d}.npz"
    np.savez(partial, texts=np.array(texts), vectors=vectors)
    partial.rename(folder / f"shard-{serial:05d}.npz")


async def embedded_vectors(
    texts: list[str], cache: Path, *, step: int = 20_000
) -> npt.NDArray[np.float32]:
    """MiniLM vectors of ``texts``, embedded once per text and cached under ``cache``.

    ``cache`` is a folder of shards (``shard-00000.npz``: texts and their vectors), one per
    ``step`` texts embedded, so a long embedding run resumes where it stopped. A path ending in
    ``.npz`` is read as one shard (the older single-file cache); new shards then go to the
    folder of the same name.
    """
    index, shards = await asyncio.to_thread(_read_cache, cache)
    missing = [t for t in dict.fromkeys(texts) if t not in index]
    if missing:
        from sagewai.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder(batch_size=64)
        folder = cache.with_suffix("") if cache.suffix == ".npz" else cache
        for start in range(0, len(missing), step):
            part = missing[start : start + step]
            vectors = np.asarray(await embedder.embed_documents(part), dtype=np.float32)
            await asyncio.to_thread(_write_shard, folder, part, vectors)
            shards.append(vectors)
            index.update((text, (len(shards) - 1, row)) for row, text in enumerate(part))
            print(f"  embedded {start + len(part)}/{len(missing)}", file=sys.stderr, flush=True)
    out = np.empty((len(texts), shards[0].shape[1] if shards else 384), dtype=np.float32)
    for i, text in enumerate(texts):
        number, row = index[text]
        out[i] = shards[number][row]
    return out


# ------------------------------------------------------------------ copies past the embedded pool

COPY_SURNAMES = (
    "Berg", "Lund", "Stone", "Wood", "Hill", "Brook", "Field", "Marsh", "Reed", "Frost",
    "Vale", "Moss", "Ash", "Wren", "Hart", "Cole", "Lane", "Shaw", "Pike", "Dale",
)  # fmt: skip
"""Second surnames of the people of copy 1, 2, ...: "Ben Okafor" of copy 3 is "Ben Okafor
Wood", another person (the structure reader sees another name, and so does a reader)."""
_SURNAME = re.compile(r"\b(" + "|".join(LAST) + r")\b", re.IGNORECASE)


def copy_text(text: str, copy: int) -> str:
    """``text`` about the people of ``copy`` (copy 0 is the text itself).

    Example:
        >>> copy_text("Ben Okafor had lunch with Ana.", 2)
        'Ben Okafor Lund had lunch with Ana.'
        >>> copy_text("ben okafor really likes ramen", 1)
        'ben okafor berg really likes ramen'
    """
    if copy == 0:
        return text
    extra = COPY_SURNAMES[(copy - 1) % len(COPY_SURNAMES)]
    if copy > len(COPY_SURNAMES):
        extra += f"-{copy}"

    def renamed(match: re.Match[str]) -> str:
        name = match.group(0)
        return f"{name} {extra.lower() if name.islower() else extra}"

    return _SURNAME.sub(renamed, text)


def copy_fact(fact: Fact, copy: int) -> Fact:
    """``fact`` about the people of ``copy``, with an id of its own."""
    if copy == 0:
        return fact
    return fact.model_copy(
        update={
            "id": f"{fact.id}c{copy:02d}",
            "content": copy_text(fact.content, copy),
            "subject": None if fact.subject is None else copy_text(fact.subject, copy),
        }
    )


def rotate(
    vectors: npt.NDArray[np.float32], copy: int, *, cosine: float = 0.9, seed: int = 0
) -> npt.NDArray[np.float32]:
    """The vectors of ``copy``: ``vectors`` turned by one orthogonal map per copy.

    The map rotates 192 planes (a random pairing of the 384 coordinates, one per copy) by the
    same angle, so every vector moves to exactly ``cosine`` from where it was and the cosines
    within a copy are the MiniLM ones, unchanged. Two copies (both turned) sit at about
    ``cosine`` squared from each other (0.81), the cosine MiniLM gives "Ben Okafor likes ramen."
    and "Ben Lindgren likes ramen." (0.80).
    """
    if copy == 0:
        return vectors
    order = np.random.default_rng([seed, copy]).permutation(vectors.shape[1])
    one, two = order[0::2], order[1::2]
    sine = float(np.sqrt(1.0 - cosine**2))
    out = vectors.copy()
    out[:, one] = cosine * vectors[:, one] - sine * vectors[:, two]
    out[:, two] = sine * vectors[:, one] + cosine * vectors[:, two]
    return out


# ---------------------------------------------------------------------------------- quality


async def measure(size: int, seed: int, threshold: float) -> dict[str, Any]:
    """Consolidate a realistic world of ``size`` facts (MiniLM) and score it against its truth.

    A merge is right when both facts state the same thing (the generator's key); recall is the
    share of planted restatements merged with the fact they restate (through chains); the
    contradictions' older facts must end superseded.
    """
    import tempfile

    from sagewai import ContextEngine, FactStatus
    from sagewai.intelligence import MemoryConsolidator

    now = datetime(2026, 1, 1, tzinfo=UTC)
    world = RealisticWorld(seed)
    facts, keys = world.facts(size, "realistic", now)
    fields = ("subject", "predicate", "object")
    items = [
        {"content": f.content, "fact_id": f.id, "created_at": f.created_at,
         **{name: getattr(f, name) for name in fields if getattr(f, name)}}
        for f in facts
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="sagewai-realistic-") as folder:
        async with ContextEngine.local(Path(folder) / "memory", project_id="realistic") as ctx:
            await ctx.add_many(items)
            consolidator = MemoryConsolidator(ctx, similarity_threshold=threshold)
            report = await consolidator.consolidate(now=now)
            final = {f.id: await ctx.get(f.id) for f in facts}
    merged = {i: f.merged_into for i, f in final.items() if f.status is FactStatus.MERGED}

    def root(fact_id: str) -> str:
        seen: set[str] = set()
        while fact_id in merged and merged[fact_id] is not None and fact_id not in seen:
            seen.add(fact_id)
            fact_id = str(merged[fact_id])
        return fact_id

    right = sum(1 for a, b in merged.items() if b is not None and keys.get(a) == keys.get(b))
    planted = world.truth.restatements
    found = sum(1 for copy, base in planted.items() if root(copy) == root(base))
    losers = world.truth.contradictions
    superseded = sum(1 for old in losers if final[old].status is FactStatus.SUPERSEDED)
    return {
        "benchmark": "consolidation_realistic",
        "facts": len(facts),
        "seed": seed,
        "similarity_threshold": threshold,
        "planted_restatements": len(planted),
        "near_distinct_distractors": world.truth.distractors,
        "contradictions": len(losers),
        "merges": len(merged),
        "wrong_merges": len(merged) - right,
        "merge_precision": round(right / len(merged), 4) if merged else 1.0,
        "merge_recall": round(found / len(planted), 4) if planted else 1.0,
        "contradiction_recall": round(superseded / len(losers), 4) if losers else 1.0,
        "duplicates_removed": report.duplicates_removed,
        "contradictions_resolved": report.contradictions_resolved,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m evals.consolidation_realistic``: the quality of one realistic world."""
    import argparse
    import json

    from evals._common import RESULTS, write_json

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--size", type=int, default=2000, help="facts in the world")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--threshold", type=float, default=0.92)
    parser.add_argument("--out", type=Path, default=RESULTS / "consolidation_realistic.json")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.size, args.seed, args.threshold))
    print(json.dumps({k: v for k, v in result.items() if k != "benchmark"}, indent=2))
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
