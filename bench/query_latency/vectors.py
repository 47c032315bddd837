"""The units' vectors from the app's own local embedder, cached in `--cache-dir` (keyed by the
generator's version, the seed and the model), saved as the embedding goes."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness.measure import log
from bench.harness.services import DIM, MODEL
from bench.query_latency.units import GENERATOR_VERSION


def load_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from app.providers.embeddings import LocalEmbedder

    return LocalEmbedder(MODEL, DIM)  # the app's own embedder


def encode(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(model.embed_sync(texts), dtype=np.float32)


@dataclass
class Vectors:
    array: np.ndarray
    embedded: int  # how many were embedded (the rest: pool vectors, perturbed)
    cached: int  # of those, how many came from the cache
    embed_seconds: float  # spent embedding now
    embed_rate: float | None


def vectors_for(
    model_getter: Callable[[], Any], texts: list[str], cache_dir: Path, seed: int, pool: int
) -> Vectors:
    """Vectors of `texts` (a prefix of the generator's stream), reusing and extending the cache,
    which is saved as the embedding goes (an interrupted run loses at most one checkpoint)."""
    need = len(texts) if pool <= 0 else min(pool, len(texts))
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = cache_dir / f"{GENERATOR_VERSION}-seed{seed}-{MODEL}"
    npy, names = stem.with_suffix(".npy"), stem.with_suffix(".json")
    cached_texts: list[str] = json.loads(names.read_text()) if names.exists() and npy.exists() else []
    cached = np.load(npy) if cached_texts else np.zeros((0, DIM), np.float32)
    same = 0
    for a, b in zip(cached_texts, texts[:need], strict=False):
        if a != b:
            break
        same += 1
    parts, done, embed_seconds, rate = [cached[:same]], same, 0.0, None
    if done < need:
        model = model_getter()
        started, saved = time.perf_counter(), done
        while done < need:
            part = texts[done : min(done + 4096, need)]
            parts.append(encode(model, part))
            done += len(part)
            embed_seconds = time.perf_counter() - started
            rate = (done - same) / embed_seconds
            log(f"  embedding: {done:,}/{need:,} ({rate:,.0f} texts/s, ~{(need - done) / rate:,.0f}s left)")
            if done - saved >= 16_384 or done == need:
                parts = [np.concatenate(parts)]
                np.save(stem.with_suffix(".tmp.npy"), parts[0])
                stem.with_suffix(".tmp.json").write_text(json.dumps(texts[:done], ensure_ascii=False))
                stem.with_suffix(".tmp.npy").replace(npy)
                stem.with_suffix(".tmp.json").replace(names)
                saved = done
    base = np.concatenate(parts)
    if need < len(texts):
        # Past the pool: the pool's vectors again, each moved a little (cosine ~0.97) and renormalised.
        noise = np.random.default_rng(seed).normal(0, 0.0125, (len(texts) - need, DIM)).astype(np.float32)
        extra = base[np.arange(need, len(texts)) % need] + noise
        extra /= np.linalg.norm(extra, axis=1, keepdims=True)
        base = np.concatenate([base, extra])
    return Vectors(base, need, same, embed_seconds, rate)
