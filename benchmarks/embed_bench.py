"""Benchmark the default embedder: cold start and throughput on short conversational sentences.

Why: MiniLM runs on every fact written and every search, so its start-up time and sentences per
second bound the whole embedded pipeline. The figures land in a JSON file so that runs on
different machines and versions can be compared.

Usage (from the repository root, with sagewai importable)::

    python -m benchmarks.embed_bench                      # synthetic sentences
    python -m benchmarks.embed_bench --data $DATA/locomo/locomo_dev.json
    python -m benchmarks.embed_bench --batch-sizes 16,32,64 --threads 2 --out bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(__file__).parent / "results" / "embed_bench.json"

_SUBJECTS = ["I", "My sister", "Caroline", "We", "Our team", "Melanie", "My dad", "The kids"]
_VERBS = ["went to", "talked about", "painted", "signed up for", "can't stop thinking about"]
_OBJECTS = [
    "the LGBTQ support group",
    "a pottery class",
    "the beach near our old house",
    "a charity run last weekend",
    "adoption agencies",
    "the new camping gear",
    "a sunrise over the lake",
    "her counseling certification",
]
_TAILS = ["", " yesterday", " and it was amazing!", " - so proud of that.", " last summer."]


def synthetic_sentences(count: int, seed: int = 7) -> list[str]:
    """Short chat-like sentences (LoCoMo-style) from a fixed seed, so runs are comparable."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)}"
        for _ in range(count)
    ]


def locomo_turns(path: Path) -> list[str]:
    """Every dialogue turn text of a LoCoMo JSON file, in conversation order."""
    samples: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    texts: list[str] = []
    for sample in samples:
        conversation: dict[str, Any] = sample["conversation"]
        sessions = sorted(
            (key for key, value in conversation.items() if isinstance(value, list)),
            key=lambda key: int(key.rsplit("_", 1)[1]),
        )
        for key in sessions:
            texts.extend(turn["text"] for turn in conversation[key] if turn.get("text"))
    return texts


def measure_throughput(
    texts: Sequence[str], batch_size: int, threads: int | None, repeats: int
) -> dict[str, Any]:
    """Sentences per second of ``embed_sync`` on a loaded, warmed-up embedder."""
    from sagewai.embeddings import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=batch_size, intra_op_threads=threads)
    embedder.embed_sync(list(texts[:batch_size]))  # load and warm up
    seconds: list[float] = []
    cpu_seconds: list[float] = []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        embedder.embed_sync(texts)
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
    median = statistics.median(seconds)
    cpu_median = statistics.median(cpu_seconds)
    return {
        "batch_size": batch_size,
        "sentences": len(texts),
        "repeats": repeats,
        "seconds_median": round(median, 4),
        "sentences_per_second": round(len(texts) / median, 1),
        "sentences_per_second_best": round(len(texts) / min(seconds), 1),
        # CPU time of all threads: less sensitive than wall time to other load on the machine.
        "cpu_seconds_median": round(cpu_median, 4),
        "sentences_per_cpu_second": round(len(texts) / cpu_median, 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure import, cold start and throughput; returns the JSON-ready report."""
    load_at_start = _load_average()
    started = time.perf_counter()
    from sagewai.embeddings import MiniLMEmbedder

    import_seconds = time.perf_counter() - started

    if args.data is not None:
        texts = locomo_turns(args.data)
        source = f"locomo:{args.data.name}"
    else:
        texts = synthetic_sentences(args.sentences)
        source = "synthetic"
    texts = texts[: args.sentences]
    if not texts:
        raise SystemExit("no sentences to embed")

    started = time.perf_counter()
    embedder = MiniLMEmbedder(intra_op_threads=args.threads)
    construct_seconds = time.perf_counter() - started
    embedder.embed_sync([texts[0]])
    cold_start_seconds = time.perf_counter() - started

    import onnxruntime

    throughput = [
        measure_throughput(texts, batch_size, args.threads, args.repeats)
        for batch_size in args.batch_sizes
    ]
    return {
        "benchmark": "embed_bench",
        "embedder": embedder.name,
        "dimension": embedder.dimension,
        "data": source,
        "sentences": len(texts),
        "mean_characters": round(statistics.fmean(len(text) for text in texts), 1),
        "import_seconds": round(import_seconds, 4),
        "construct_seconds": round(construct_seconds, 6),
        "cold_start_seconds": round(cold_start_seconds, 4),
        "throughput": throughput,
        "machine": {
            "cpu_count": os.cpu_count(),
            "intra_op_threads": args.threads,
            "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__,
            "platform": platform.platform(),
            "load_average_1min_start": load_at_start,
            "load_average_1min_end": _load_average(),
        },
    }


def _load_average() -> float | None:
    """The 1-minute load average: above the core count, figures are contended and low."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def _batch_sizes(value: str) -> list[int]:
    sizes = [int(part) for part in value.split(",") if part.strip()]
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("batch sizes must be positive integers, e.g. 32,64")
    return sizes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, help="LoCoMo JSON file; its turn texts are embedded")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--sentences", type=int, default=1024, help="sentences per run")
    parser.add_argument("--batch-sizes", type=_batch_sizes, default=[32, 64])
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per batch size")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"embedder      {report['embedder']} ({report['dimension']}-d)")
    print(f"data          {report['data']}: {report['sentences']} sentences")
    print(f"import        {report['import_seconds']:.3f} s (sagewai.embeddings)")
    print(f"cold start    {report['cold_start_seconds']:.3f} s (construct + load + first vector)")
    for row in report["throughput"]:
        print(
            f"batch {row['batch_size']:>3}     {row['sentences_per_second']:.1f} sentences/s "
            f"(median of {row['repeats']}, best {row['sentences_per_second_best']:.1f}; "
            f"{row['sentences_per_cpu_second']:.1f} per CPU-second)"
        )
    machine = report["machine"]
    print(
        f"load average  {machine['load_average_1min_start']} -> "
        f"{machine['load_average_1min_end']} on {machine['cpu_count']} cores"
    )
    print(f"written to    {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
