"""The local embedder alone: texts/s of all-MiniLM-L6-v2 (fp32) and all-MiniLM-L6-v2-int8 by batch size,
on LoCoMo turns (what distillation embeds is one sentence each), and how close the two models' vectors are.

    python -m bench.embedder [--texts 640] [--rounds 5] [--batch-sizes 1,8,32,64] [--out FILE]

Rounds interleave the models and batch sizes, so a machine that gets busier or quieter meanwhile moves
every cell alike; the cells are medians over rounds. The app's own `LocalEmbedder` (`embed_sync`, in this
thread): token-length buckets and all. Prints a Markdown table and writes JSON (`--out`)."""

from __future__ import annotations

import random
import statistics
import time
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bench.harness import cli, measure
from bench.harness.measure import log

MODELS = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8")


def texts(count: int, seed: int) -> list[str]:
    from bench.ingest.load import turn_texts

    pool = [text for _, text in turn_texts()]
    return random.Random(seed).sample(pool, min(count, len(pool)))


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.embedder", __doc__)
    parser.add_argument("--texts", type=int, default=640)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-sizes", default="1,8,32,64")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="bench/results/embedder.json")
    args = parser.parse_args(argv)
    from app.providers.embeddings import LocalEmbedder

    sample = texts(args.texts, args.seed)
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    embedders = {(m, b): LocalEmbedder(m, 384, batch_size=b) for m in MODELS for b in sizes}
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in embedders}
    for round_ in range(args.rounds):
        for key, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed_sync(sample)
            rates[key].append(len(sample) / (time.perf_counter() - started))
        log(f"round {round_ + 1}/{args.rounds} done")
    exact = np.array(embedders[(MODELS[0], sizes[-1])].embed_sync(sample))
    quantised = np.array(embedders[(MODELS[1], sizes[-1])].embed_sync(sample))
    cosines = (exact * quantised).sum(axis=1)
    cells: dict[str, dict[str, float]] = {
        model: {str(b): round(statistics.median(rates[(model, b)]), 1) for b in sizes} for model in MODELS
    }
    report: dict[str, Any] = {
        "command": cli.command_line("bench.embedder", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": measure.machine(),
        "texts": len(sample),
        "texts_per_s_median": cells,
        "int8_over_fp32": {
            str(b): round(cells[MODELS[1]][str(b)] / cells[MODELS[0]][str(b)], 2) for b in sizes
        },
        "cosine_fp32_int8": {
            "min": round(float(cosines.min()), 4),
            "p5": round(float(np.percentile(cosines, 5)), 4),
            "median": round(float(np.median(cosines)), 4),
        },
    }
    cli.write_json(args.out, report)
    print("| model | " + " | ".join(f"batch {b}" for b in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for model in MODELS:
        print(f"| `{model}` texts/s | " + " | ".join(str(cells[model][str(b)]) for b in sizes) + " |")
    print("| int8 / fp32 | " + " | ".join(str(report["int8_over_fp32"][str(b)]) for b in sizes) + " |")
    print(f"cosine fp32 vs int8 over {len(sample)} texts: {report['cosine_fp32_int8']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
