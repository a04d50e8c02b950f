"""Render the benchmark JSON in ``benchmarks/results`` as PNGs in ``docs/assets/benchmarks``.

Usage (from the repository root)::

    python -m benchmarks.plots [--results benchmarks/results] [--out docs/assets/benchmarks]

Size-dependent figures are drawn with logarithmic axes (corpus size against latency or time);
LoCoMo recall is a bar chart. A missing or unreadable JSON file is skipped with a note, and only
PNGs that have data are written.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
ASSETS = ROOT / "docs" / "assets" / "benchmarks"

Report = dict[str, Any]
Series = dict[str, list[tuple[float, float]]]


def load(results: Path, name: str) -> Report | None:
    """The JSON ``results/<name>.json``, or ``None`` (with a note) if absent or unreadable."""
    path = results / f"{name}.json"
    if not path.is_file():
        print(f"skip {name}: {path} not found")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"skip {name}: cannot read {path}: {exc}")
        return None
    if not isinstance(data, dict):
        print(f"skip {name}: {path} is not a JSON object")
        return None
    return data


def _log_axes(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("corpus size (facts)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)


def _plot_series(ax: Axes, series: Series, style: str = "-", suffix: str = "") -> None:
    for label, points in sorted(series.items()):
        points = sorted(p for p in points if p[0] > 0 and p[1] > 0)
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, style, marker="o", label=f"{label}{suffix}")


def _save(fig: Figure, out: Path, name: str, written: list[Path]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    print(f"wrote {path}")


def _latency_grid(
    panels: dict[str, tuple[Series, Series]], title: str, out: Path, name: str, written: list[Path]
) -> None:
    """One panel per query kind: p50 (solid) and p95 (dashed) per backend against size."""
    panels = {k: v for k, v in panels.items() if any(v[0].values())}
    if not panels:
        print(f"skip {name}: no latency figures")
        return
    cols = min(2, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    for ax, (kind, (p50, p95)) in zip(axes.flat, panels.items(), strict=False):
        _plot_series(ax, p50, "-", " p50")
        ax.set_prop_cycle(None)
        _plot_series(ax, p95, "--", " p95")
        _log_axes(ax, kind, "latency (ms)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title)
    _save(fig, out, name, written)


def _time_plot(
    series: Series, title: str, ylabel: str, out: Path, name: str, written: list[Path]
) -> None:
    if not any(series.values()):
        print(f"skip {name}: no timing figures")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    _plot_series(ax, series)
    _log_axes(ax, title, ylabel)
    ax.legend(fontsize=8)
    _save(fig, out, name, written)


def plot_vector(results: Path, out: Path, written: list[Path]) -> None:
    """Vector search latency and load time against size, per backend."""
    report = load(results, "vector_bench")
    if report is None:
        return
    panels: dict[str, tuple[Series, Series]] = defaultdict(
        lambda: (defaultdict(list), defaultdict(list))
    )
    load_time: Series = defaultdict(list)
    for row in report.get("results", []):
        backend, size = row["backend"], float(row["size"])
        for kind, stats in row.get("queries", {}).items():
            panels[kind][0][backend].append((size, float(stats["p50_ms"])))
            panels[kind][1][backend].append((size, float(stats["p95_ms"])))
        total = float(row["upsert_seconds"]) + float(row.get("index_build_seconds") or 0.0)
        load_time[backend].append((size, total))
    _latency_grid(
        dict(panels), "Vector search latency (top-k, filtered)", out, "vector_latency", written
    )
    _time_plot(
        load_time, "Vector store load time (upsert + index build)", "seconds", out,
        "vector_load_time", written,
    )  # fmt: skip


METADATA_FIGURES = {
    "get_50_ids": "get 50 ids",
    "keyword_search_top10": "keyword search, top 10",
    "keyword_search_rare_words_top10": "keyword search (rare words), top 10",
    "filtered_query_limit50": "filtered query, limit 50",
}


def plot_metadata(results: Path, out: Path, written: list[Path]) -> None:
    """Metadata store get/keyword latency and insert time against size, per backend."""
    report = load(results, "metadata_bench")
    if report is None:
        return
    panels: dict[str, tuple[Series, Series]] = {
        title: (defaultdict(list), defaultdict(list)) for title in METADATA_FIGURES.values()
    }
    insert: Series = defaultdict(list)
    for row in report.get("results", []):
        backend, size = row["backend"], float(row["facts"])
        for key, title in METADATA_FIGURES.items():
            stats = row.get(key)
            if stats:
                panels[title][0][backend].append((size, float(stats["p50_ms"])))
                panels[title][1][backend].append((size, float(stats["p95_ms"])))
        insert[backend].append((size, float(row["insert_seconds"])))
    _latency_grid(panels, "Metadata store latency", out, "metadata_latency", written)
    _time_plot(
        insert, "Metadata store bulk insert time", "seconds", out, "metadata_insert_time", written
    )


def plot_consolidation(results: Path, out: Path, written: list[Path]) -> None:
    """Consolidation wall time (and load / index build) against size."""
    report = load(results, "consolidation_bench")
    if report is None:
        return
    labels = {
        "consolidation_seconds": "consolidation run",
        "load_seconds": "load",
        "index_build_seconds": "index build",
    }
    series: Series = defaultdict(list)
    for row in report.get("results", []):
        for key, label in labels.items():
            if row.get(key) is not None:
                series[label].append((float(row["size"]), float(row[key])))
    _time_plot(
        series, "Consolidation time against size", "seconds", out, "consolidation_time", written
    )


def plot_store(results: Path, out: Path, written: list[Path]) -> None:
    """Engine search p50/p95 against size per backend, if ``store_bench*.json`` cover 2+ sizes."""
    p50: Series = defaultdict(list)
    p95: Series = defaultdict(list)
    sizes: set[int] = set()
    for path in sorted(results.glob("store_bench*.json")):
        report = load(results, path.stem)
        if report is None:
            continue
        for row in report.get("results", []):
            size = int(row["size"])
            sizes.add(size)
            p50[row["backend"]].append((size, float(row["search"]["p50_ms"])))
            p95[row["backend"]].append((size, float(row["search"]["p95_ms"])))
    if len(sizes) < 2:
        print(f"skip store_latency: store search measured at {len(sizes)} size(s), need 2+")
        return
    _latency_grid(
        {"search top 10 (query embedding excluded)": (p50, p95)},
        "ContextEngine search latency per backend", out, "store_latency", written,
    )  # fmt: skip


def plot_locomo(results: Path, out: Path, written: list[Path]) -> None:
    """Bar chart of LoCoMo R@10 per system (ablation steps left out)."""
    report = load(results, "locomo_recall")
    if report is None:
        return
    bars = [
        (name, float(summary["overall"]["R@10"]))
        for name, summary in report.get("systems", {}).items()
        if not name.startswith("ablation_") and summary["overall"].get("R@10") is not None
    ]
    if not bars:
        print("skip locomo_recall_r10: no R@10 figures")
        return
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(bars)), 4))
    names, values = zip(*bars, strict=True)
    colours = ["tab:orange" if n.startswith("sagewai") else "tab:gray" for n in names]
    ax.bar(names, values, color=colours)
    for index, value in enumerate(values):
        ax.text(index, value + 0.01, f"{value:.3f}", ha="center", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("recall@10")
    conversations = ", ".join(report.get("conversations", []))
    ax.set_title(f"LoCoMo retrieval R@10 ({conversations})", fontsize=10)
    ax.tick_params(axis="x", labelrotation=30)
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, out, "locomo_recall_r10", written)


def plot_scale(results: Path, out: Path, written: list[Path]) -> None:
    """``scale_bench.json``: search latency and throughput against size per deployment."""
    report = load(results, "scale_bench")
    if report is None:
        return
    excluded_p50: Series = defaultdict(list)
    excluded_p95: Series = defaultdict(list)
    included_p50: Series = defaultdict(list)
    included_p95: Series = defaultdict(list)
    throughput: Series = defaultdict(list)
    for row in report.get("results", []):
        if "error" in row or "search_excluded" not in row:  # failed, or --fill-only
            continue
        size, name = int(row["size"]), row["backend"]
        excluded_p50[name].append((size, float(row["search_excluded"]["p50_ms"])))
        excluded_p95[name].append((size, float(row["search_excluded"]["p95_ms"])))
        included_p50[name].append((size, float(row["search_included"]["p50_ms"])))
        included_p95[name].append((size, float(row["search_included"]["p95_ms"])))
        for searchers, qps in row["throughput_qps"].items():
            throughput[f"{name}, {searchers} searchers"].append((size, float(qps)))
    _latency_grid(
        {
            "search top 10, query embedding excluded": (excluded_p50, excluded_p95),
            "search top 10, query embedding included": (included_p50, included_p95),
        },
        "ContextEngine search at scale (scale_bench)", out, "scale_latency", written,
    )  # fmt: skip
    _time_plot(
        throughput, "Searches per second (scale_bench)", "searches/s", out, "scale_throughput",
        written,
    )  # fmt: skip


PLOTS: list[Callable[[Path, Path, list[Path]], None]] = [
    plot_vector,
    plot_metadata,
    plot_consolidation,
    plot_store,
    plot_locomo,
    plot_scale,
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=ASSETS)
    args = parser.parse_args(argv)
    written: list[Path] = []
    for plot in PLOTS:
        try:
            plot(args.results, args.out, written)
        except (KeyError, TypeError, ValueError) as exc:
            print(f"skip {plot.__name__}: unexpected JSON shape ({exc!r})")
    print(f"{len(written)} PNG(s) in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
