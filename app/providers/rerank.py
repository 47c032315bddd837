"""Rerank providers over HTTP, in the two shapes real servers speak:

- Hugging Face text-embeddings-inference (`kind` `tei`): `POST {url}/rerank` `{query, texts, truncate}` →
  `[{index, score}]`;
- Cohere, Jina and vLLM (`kind` `cohere` | `jina` | `vllm`): `POST {url}/v1/rerank`
  `{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`.

`HINDSIGHT_RERANK_URL` is the server's base URL; a URL that already ends in `/rerank` is used as it is, and
one ending in a version (`…/v1`, `…/v2`) gets `/rerank` only. The caller bounds the time (the query's rerank
budget); the provider only says what the server answered, or raises `RerankError`."""

from __future__ import annotations

import math
import re
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from app.config import Settings

# The connection to a reranker is reused across queries (keep-alive); the query's budget cancels a call
# long before this, which only bounds a call nobody waits for.
TIMEOUT_SECONDS = 30.0
_VERSIONED = re.compile(r"/v\d+$")


class RerankError(Exception):
    """The reranker could not be reached, refused the call, or answered something unreadable."""


class _TeiScore(BaseModel):
    index: int
    score: float


class _Result(BaseModel):
    index: int
    relevance_score: float


class _Results(BaseModel):
    results: list[_Result]


def endpoint(url: str, kind: str) -> str:
    """The full rerank URL for the base `url` of a server of `kind`."""
    base = url.rstrip("/")
    if base.endswith("/rerank"):
        return base
    if kind == "tei" or _VERSIONED.search(base):
        return f"{base}/rerank"
    return f"{base}/v1/rerank"


class HttpReranker:
    """One HTTP rerank server; `scores` calls it once per query."""

    def __init__(
        self,
        url: str,
        kind: str,
        model: str | None = None,
        api_key: str = "",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.kind = kind
        self.model = model
        self.url = endpoint(url, kind)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, timeout=TIMEOUT_SECONDS, transport=transport)

    def _body(self, query: str, texts: list[str]) -> dict[str, Any]:
        if self.kind == "tei":
            return {"query": query, "texts": texts, "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": texts, "top_n": len(texts)}
        if self.model:
            body["model"] = self.model
        return body

    def _read(self, payload: Any, n: int) -> list[float]:
        if self.kind == "tei":
            pairs = [(s.index, s.score) for s in _list_of_scores(payload)]
        else:
            pairs = [(r.index, r.relevance_score) for r in _Results.model_validate(payload).results]
        scores = [-math.inf] * n  # a text the server left out ranks after every scored one
        for index, score in pairs:
            if not 0 <= index < n or not math.isfinite(score):
                raise RerankError(f"the reranker answered index {index} with score {score} for {n} texts")
            scores[index] = score
        return scores

    async def scores(self, query: str, texts: list[str]) -> list[float]:
        """The relevance of each text to `query`, in the order of `texts` (higher is better)."""
        try:
            response = await self._client.post(self.url, json=self._body(query, texts))
        except httpx.HTTPError as exc:
            raise RerankError(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise RerankError(f"the reranker answered {response.status_code}: {response.text[:200]}")
        try:
            return self._read(response.json(), len(texts))
        except (ValueError, ValidationError) as exc:  # a JSON decode error is a ValueError
            raise RerankError(f"unreadable rerank answer: {exc}") from exc

    async def aclose(self) -> None:
        await self._client.aclose()


def _list_of_scores(payload: Any) -> list[_TeiScore]:
    if not isinstance(payload, list):
        raise RerankError("TEI's /rerank answers a list of {index, score}")
    return [_TeiScore.model_validate(item) for item in payload]


def build_reranker(settings: Settings) -> HttpReranker | None:
    """The configured reranker, or None when `HINDSIGHT_RERANK_URL` is unset."""
    if not settings.rerank_url:
        return None
    return HttpReranker(
        settings.rerank_url,
        settings.rerank_kind,
        settings.rerank_model,
        settings.rerank_api_key.get_secret_value(),
    )
