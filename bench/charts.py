"""The charts of docs/benchmark-runs.md, drawn from the benchmarks' JSON reports (matplotlib, Agg).

    python -m bench.charts [--results bench/results] [--img-dir docs/img]

Each chart is drawn when its report is there, skipped (and said so) when not:
- query_latency.json → latency_vs_bank_size.png: HTTP p50 / p95 / p99 against the bank size, the
  target marked;
- locomo_product.json and locomo_dense.json → locomo_recall_by_category.png: evidence recall@10
  per question category, product vs the dense baseline;
- ingest.json → ingest_throughput.png: events/s of single appends and 100-event batches per API
  configuration, the targets marked;
- distill.json → distill_time_split.png: where the in-process distillation's time goes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
DOCS_IMG = (ROOT / "docs" / "img").resolve()
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")


def load(path: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data


def _save(fig: Figure, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _subtitle(ax: Axes, report: dict[str, Any]) -> None:
    m = report.get("machine") or {}
    date = str(report.get("date", ""))[:10]
    ax.set_title(
        f"{m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB, {date}", fontsize=8, loc="right"
    )


def latency_vs_bank_size(report: dict[str, Any], out: Path) -> Path:
    results = sorted(report["results"], key=lambda r: r["units"])
    sizes = [r["units"] for r in results]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, q in enumerate(("p50", "p95", "p99")):
        ax.plot(sizes, [r["http"]["client_wall_ms"][q] for r in results], "o-", color=COLOURS[i], label=q)
    target = report.get("target") or {}
    if target:
        for q, style, va in (("p50_ms", ":", "top"), ("p95_ms", "--", "bottom")):
            ax.axhline(target[q], color="grey", linestyle=style, linewidth=1)
            ax.annotate(f"target {q[:3]} {target[q]:.0f} ms", (sizes[0], target[q]), fontsize=7, va=va)
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.minorticks_off()
    ax.set_xlabel("active units in the bank")
    ax.set_ylabel("HTTP latency per query (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Query latency vs bank size", loc="left")
    _subtitle(ax, report)
    return _save(fig, out)


def locomo_recall_by_category(
    product: dict[str, Any], dense: dict[str, Any] | None, out: Path, k: str = "10"
) -> Path:
    runs = [("product", product)] + ([("dense baseline", dense)] if dense else [])
    categories = [c for c in product["results"][k]["by_category"].values() if c.get("questions")]
    names = [c["name"] for c in categories] + ["all"]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    width = 0.8 / len(runs)
    keys = _keys(product, k)
    for i, (label, report) in enumerate(runs):
        row = report["results"][k]
        values = [(row["by_category"].get(key) or {}).get("recall") or 0.0 for key in keys]
        values.append(row["recall"] or 0.0)
        xs = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(names))]
        bars = ax.bar(xs, values, width, label=label, color=COLOURS[i])
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"evidence recall@{k}")
    ax.legend()
    ax.set_title("LoCoMo (dev split): recall by question category", loc="left")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, out)


def _keys(report: dict[str, Any], k: str) -> list[str]:
    return [key for key, c in report["results"][k]["by_category"].items() if c.get("questions")]


def ingest_throughput(report: dict[str, Any], out: Path) -> Path:
    runs = report["results"]
    labels = [
        f"{r['uvicorn_processes']} uvicorn process{'es' if r['uvicorn_processes'] > 1 else ''}" for r in runs
    ]
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    target = report.get("target") or {}
    for ax, phase, key, title in (
        (axes[0], "single", "single_events_per_s", "single-event appends, 32 clients"),
        (axes[1], "batched", "batched_events_per_s", "100-event batches"),
    ):
        values = [r[phase]["events_per_s"] for r in runs]
        bars = ax.bar(labels, values, color=COLOURS[: len(runs)])
        ax.bar_label(
            bars,
            labels=[
                f"{v:,.0f}\np99 {r[phase]['latency_ms']['p99']:.0f} ms"
                for v, r in zip(values, runs, strict=True)
            ],
            fontsize=7,
        )
        if key in target:
            ax.axhline(target[key], color="grey", linestyle="--", linewidth=1)
            ax.annotate(f"target {target[key]:,.0f}", (0, target[key]), fontsize=7, va="bottom")
        ax.set_ylim(0, max([*values, target.get(key, 0)]) * 1.25)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("events/s")
        ax.grid(axis="y", alpha=0.3)
    m = report.get("machine") or {}
    fig.suptitle(
        f"Ingest throughput (client on the same machine; {m.get('cores', '?')} cores, "
        f"{m.get('memory_gib', '?')} GiB, {str(report.get('date', ''))[:10]})",
        fontsize=10,
        x=0.02,
        ha="left",
    )
    return _save(fig, out)


def distill_time_split(report: dict[str, Any], out: Path) -> Path:
    split = report["profile"]["split_s"]
    parts = [("heuristic distiller", split["distiller"]), ("local embedder", split["embedding"]),
             ("database and the rest", split["database_and_rest"])]  # fmt: skip
    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    left = 0.0
    for i, (label, seconds) in enumerate(parts):
        ax.barh([0], [seconds], left=left, color=COLOURS[i], label=f"{label} {seconds:.1f} s")
        left += seconds
    ax.set_yticks([])
    ax.set_xlabel("seconds (in process, under cProfile)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=3, fontsize=8, frameon=False)
    w = report["worker"]
    ax.set_title(
        f"Distillation: where the time goes ({w['events_per_s']} events/s through one worker)",
        loc="left",
        fontsize=9,
    )
    return _save(fig, out)


CAPTIONS = {
    "latency_vs_bank_size.png": "Query latency vs bank size (*Query latency at scale*)",
    "locomo_recall_by_category.png": "LoCoMo recall@10 by question category, product vs dense baseline",
    "ingest_throughput.png": "Ingest throughput, single appends and 100-event batches (*Ingest*)",
    "distill_time_split.png": "Where the distillation's time goes (*Distillation throughput*)",
}


def write_docs(written: list[Path]) -> None:
    from bench.harness.docs import write_section

    lines = [
        "## Charts",
        "",
        "Drawn by `python -m bench.charts` from the JSON reports in `bench/results/` (the runs above).",
        "",
    ]
    for path in written:
        lines += [f"![{CAPTIONS.get(path.name, path.stem)}](img/{path.name})", ""]
    write_section("Charts", "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.charts", description=__doc__.split("\n")[0])
    parser.add_argument("--results", default="bench/results", help="where the JSON reports are")
    parser.add_argument("--img-dir", default="docs/img", help="where the PNGs go")
    parser.add_argument("--no-docs", action="store_true", help="do not write the docs' Charts section")
    args = parser.parse_args(argv)
    results, img = Path(args.results), Path(args.img_dir)
    written, skipped = [], []
    if report := load(results / "query_latency.json"):
        written.append(latency_vs_bank_size(report, img / "latency_vs_bank_size.png"))
    else:
        skipped.append("query_latency.json")
    if product := load(results / "locomo_product.json"):
        dense = load(results / "locomo_dense.json")
        written.append(locomo_recall_by_category(product, dense, img / "locomo_recall_by_category.png"))
    else:
        skipped.append("locomo_product.json")
    if report := load(results / "ingest.json"):
        written.append(ingest_throughput(report, img / "ingest_throughput.png"))
    else:
        skipped.append("ingest.json")
    if report := load(results / "distill.json"):
        written.append(distill_time_split(report, img / "distill_time_split.png"))
    else:
        skipped.append("distill.json")
    for path in written:
        print(f"wrote {path}")
    if written and img.resolve() == DOCS_IMG and not args.no_docs:
        write_docs(written)
        print("wrote the 'Charts' section of docs/benchmark-runs.md")
    if skipped:
        print(f"no chart for missing reports in {results}: {', '.join(skipped)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
