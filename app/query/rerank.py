"""The rerank stage (seed 000: after fusion, a rerank model): the fused top N units that passed the
relevance floor go to an HTTP rerank provider (app/providers/rerank.py) with the query, and come back in
its order; the units past N follow in the fused order, then `top_k` cuts. It only reorders what fusion
already admitted, so it can never bring back a superseded value or a unit without evidence.

A hard time budget bounds the call (the bank's `rerank.budget_ms`, else HINDSIGHT_RERANK_BUDGET_MS,
150 ms): past it, or when the provider fails, the fused order stands and the response says why
(`rerank: "skipped (budget)"`, `"skipped (error)"`). Where no reranker read the texts, a question asking
for a kind of value ("when …?", "how much …?") has the units stating one lead those fetched
(`answered_first`)."""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from app.claims.asked import answers
from app.metrics import RERANK_OUTCOMES
from app.providers.rerank import RerankError
from app.query.fusion import Fused
from app.schemas.banks import BankConfig
from app.schemas.query import QueryRequest, RerankOutcome

log = logging.getLogger(__name__)


class Reranker(Protocol):
    async def scores(self, query: str, texts: list[str]) -> list[float]:
        """The relevance of each text to `query`, in the order of `texts`."""
        ...


@dataclass(frozen=True)
class RerankDeps:
    """The process's rerank provider (None: not configured) and the service's defaults."""

    provider: Reranker | None = None
    top_n: int = 30
    budget_ms: int = 150


@dataclass(frozen=True)
class RerankSetup:
    """What the stage does for one query: run over the top `top_n` within `budget_ms`, or not (`skipped`)."""

    top_n: int = 0
    budget_ms: int = 0
    skipped: RerankOutcome | None = None

    @property
    def runs(self) -> bool:
        return self.skipped is None


@dataclass
class Reranked:
    pool: list[Fused]  # every candidate, best first
    outcome: RerankOutcome
    scores: dict[uuid.UUID, float] = field(default_factory=dict)


def plan_rerank(
    deps: RerankDeps, config: BankConfig, req: QueryRequest, *, time_only: bool, candidates: int
) -> RerankSetup:
    """Whether and how the stage runs for this request (no I/O)."""
    if deps.provider is None:
        return RerankSetup(skipped="skipped (not configured)")
    if not (config.rerank.enabled if req.rerank is None else req.rerank):
        return RerankSetup(skipped="skipped (disabled)")
    if time_only:  # "what did we talk about yesterday?": the window's units, newest first
        return RerankSetup(skipped="skipped (no topic)")
    if candidates < 2:
        return RerankSetup(skipped="skipped (no candidates)")
    return RerankSetup(
        top_n=config.rerank.top_n or deps.top_n, budget_ms=config.rerank.budget_ms or deps.budget_ms
    )


async def rerank_pool(
    deps: RerankDeps, plan: RerankSetup, query: str, pool: list[Fused], texts: dict[uuid.UUID, str]
) -> Reranked:
    """`pool` (fused order) with its top `plan.top_n` in the reranker's order, or as it was and why."""
    if not plan.runs or deps.provider is None:
        outcome = plan.skipped or "skipped (not configured)"
        RERANK_OUTCOMES.labels(outcome).inc()
        return Reranked(pool, outcome)
    head = [u for u in pool[: plan.top_n] if u.memory_id in texts]
    sent = {u.memory_id for u in head}
    rest = [u for u in pool if u.memory_id not in sent]
    try:
        async with asyncio.timeout(plan.budget_ms / 1000):
            scores = await deps.provider.scores(query, [texts[u.memory_id] for u in head])
    except TimeoutError:
        RERANK_OUTCOMES.labels("skipped (budget)").inc()
        return Reranked(pool, "skipped (budget)")
    except RerankError as exc:
        log.warning("rerank skipped: %s", exc)
        RERANK_OUTCOMES.labels("skipped (error)").inc()
        return Reranked(pool, "skipped (error)")
    if len(scores) != len(head):
        log.warning("rerank skipped: %d scores for %d texts", len(scores), len(head))
        RERANK_OUTCOMES.labels("skipped (error)").inc()
        return Reranked(pool, "skipped (error)")
    order = sorted(range(len(head)), key=lambda i: -scores[i])  # a stable sort: ties keep the fused order
    RERANK_OUTCOMES.labels("applied").inc()
    return Reranked(
        [head[i] for i in order] + rest,
        "applied",
        {u.memory_id: round(s, 6) for u, s in zip(head, scores, strict=True) if math.isfinite(s)},
    )


def answered_first(
    pool: list[Fused], n: int, texts: dict[uuid.UUID, str], types: frozenset[str]
) -> list[Fused]:
    """The pool with, among its first `n`, the units stating a value of the asked types ahead of those
    stating none ("when is standup?": the unit saying 9:30 before the one saying only that there is
    one), each group in its order; the set of the first `n` is unchanged."""
    head = pool[:n]
    hit = {u.memory_id for u in head if answers(texts.get(u.memory_id, ""), types)}
    if not hit or len(hit) == len(head):
        return pool
    return [
        *(u for u in head if u.memory_id in hit),
        *(u for u in head if u.memory_id not in hit),
        *pool[n:],
    ]
