"""The channel SQL alone: the statements the API runs for each request (its own plan,
`app.query.service.plan_query`), timed per channel on the app's engine (its connection settings and
driver), and EXPLAIN (ANALYZE, BUFFERS) of one representative query per channel with the indexes its
plan uses."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bench.harness.measure import percentiles
from bench.harness.services import DIM, MODEL
from bench.query_latency.loader import HNSW_INDEX, SEARCH_INDEX
from bench.query_latency.queries import BenchQuery

if TYPE_CHECKING:
    from app.db.repositories.query import ChannelInputs, Filters

CHANNEL_ORDER = ("semantic", "keyword", "entity", "temporal", "tag")


@dataclass
class Prepared:
    query: BenchQuery
    filters: Filters  # the time window not sized: `run_channels` sizes it on its connection
    inputs: ChannelInputs  # every channel the request runs, the semantic one with the query's vector


def prepare(q: BenchQuery, vector: list[float], bank_id: str, anchor: datetime) -> Prepared:
    """The Filters and ChannelInputs `app.query.service.query` runs for this request: the service's
    own plan (`plan_query`) with the query's vector for the semantic channel, so the channel SQL timed
    here is exactly what the API runs."""
    from app.banks.config import ConfiguredBank
    from app.db.models import Bank
    from app.query.service import plan_query
    from app.schemas.query import QueryRequest

    request = QueryRequest.model_validate(q.body(anchor))
    plan = plan_query(ConfiguredBank.of(Bank(id=bank_id, config={})), request, MODEL, DIM)
    if not plan.semantic:
        return Prepared(q, plan.filters, plan.inputs)
    semantic = replace(plan.inputs, vector=vector, channels=plan.inputs.channels | {"semantic"})
    return Prepared(q, plan.filters, semantic)


def only(inputs: ChannelInputs, channel: str | None) -> ChannelInputs:
    return inputs if channel is None else replace(inputs, channels=frozenset({channel}))


def runs_channel(p: Prepared, channel: str) -> bool:
    i = p.inputs
    return {
        "semantic": i.vector is not None,
        "keyword": bool(i.keywords),
        "entity": bool(i.entity_names),
        "temporal": True,
        "tag": bool(i.inferred_tags),
    }[channel]


_INDEX_USE = re.compile(r"(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)")
_VECTOR_LITERAL = re.compile(r"'\[[-+0-9.eE,]+\]'")
_SEQ = re.compile(r"Seq Scan on (\w+)")


def plan_summary(plan: str) -> dict[str, Any]:
    def ms(label: str) -> float | None:
        m = re.search(label + r": ([\d.]+) ms", plan)
        return float(m.group(1)) if m else None

    return {
        "execution_ms": ms("Execution Time"),
        "planning_ms": ms("Planning Time"),
        "indexes": sorted(set(_INDEX_USE.findall(plan))),
        "seq_scans": sorted(set(_SEQ.findall(plan))),
        "uses_hnsw": HNSW_INDEX in plan,
        "uses_search_gin": SEARCH_INDEX in plan,
        "jit": "JIT:" in plan,
    }


async def measure_sql(
    url: str, prepared: list[Prepared], explain_cases: list[tuple[str, Prepared, str | None]], rounds: int
) -> dict[str, Any]:
    from sqlalchemy import text

    from app.config import Settings
    from app.db.engine import create_engine

    # The statement builder itself (EXPLAIN needs the SQL text run_channels would send).
    from app.db.repositories.channels import build_statement
    from app.query.channels import rare_words, run_channels, size_window

    settings = Settings(env="test", database_url=url, admin_key="bench-admin-key-unused")
    engine = create_engine(settings, pool_size=1)  # the app's connection settings (hnsw.*) and driver
    timings: dict[str, list[float]] = {c: [] for c in ("all", *CHANNEL_ORDER)}
    hits: dict[str, list[int]] = {c: [] for c in timings}
    plans: list[dict[str, Any]] = []
    from sqlalchemy.ext.asyncio import AsyncSession

    try:
        async with AsyncSession(engine) as db:
            for _ in range(rounds):
                for p in prepared:
                    for channel in (None, *CHANNEL_ORDER):
                        if channel is not None and not runs_channel(p, channel):
                            continue
                        t = time.perf_counter()
                        found = await run_channels(db, p.filters, only(p.inputs, channel))
                        timings[channel or "all"].append((time.perf_counter() - t) * 1000)
                        hits[channel or "all"].append(len(found))
                    await db.rollback()
            for label, p, channel in explain_cases:
                params: dict[str, Any] = {"bank": p.filters.bank_id}
                inputs = only(p.inputs, channel)  # the words `run_channels` keeps, as it would
                inputs = replace(inputs, keywords=await rare_words(db, p.filters.bank_id, inputs.keywords))
                # The window sized first, as the query path does: a small one is a different statement.
                statement = build_statement(await size_window(db, p.filters), inputs, params)
                if not statement:  # every word of the query is common in the bank: no keyword channel
                    continue
                rows = (await db.execute(text("EXPLAIN (ANALYZE, BUFFERS) " + statement), params)).all()
                await db.rollback()
                plan = _VECTOR_LITERAL.sub(f"'[{DIM} floats]'", "\n".join(r[0] for r in rows))
                shown = {k: v for k, v in params.items() if k != "qvec"}
                plans.append(
                    {
                        "case": label,
                        "channel": channel or "all",
                        "query": p.query.text,
                        "request_tags": p.query.tags,
                        "params": json.loads(json.dumps(shown, default=str)),
                        **plan_summary(plan),
                        "plan": plan,
                    }
                )
    finally:
        await engine.dispose()
    return {
        "per_channel_ms": {
            c: {**percentiles(v), "mean_hits": round(statistics.fmean(hits[c]), 1)}
            for c, v in timings.items()
            if v
        },
        "plans": plans,
    }


def explain_cases(prepared: list[Prepared]) -> list[tuple[str, Prepared, str | None]]:
    """One representative query per channel (and two for the full statement)."""

    def first(pred: Callable[[Prepared], bool]) -> Prepared:
        return next((p for p in prepared if pred(p)), prepared[0])

    person = first(lambda p: p.query.category == "person" and "budget" in p.query.text)
    plain = first(lambda p: p.query.category == "plain" and p.filters.time_from is None)
    timed = first(lambda p: p.filters.time_from is not None and p.query.text.startswith("What happened"))
    zh = first(lambda p: p.query.category == "zh" and p.filters.time_from is None)
    tagged = first(lambda p: bool(p.query.tags))
    return [
        ("semantic", plain, "semantic"),
        ("semantic, request tags", tagged, "semantic"),
        ("semantic, time filter", timed, "semantic"),
        ("keyword", person, "keyword"),
        ("keyword, Chinese", zh, "keyword"),
        ("entity", person, "entity"),
        ("temporal, no time filter", plain, "temporal"),
        ("temporal, time filter", timed, "temporal"),
        ("tag", person, "tag"),
        ("all channels", person, None),
        ("all channels, time filter", timed, None),
    ]


def embed_query_ms(queries: list[BenchQuery], n: int = 100) -> dict[str, float]:
    """The product's local embedder (ONNX Runtime) on one query at a time, as the API calls it."""
    from app.providers.embeddings import LocalEmbedder

    embedder = LocalEmbedder(MODEL, DIM)
    embedder.embed_sync(["warm up"])
    times = []
    for q in queries[:n]:
        t = time.perf_counter()
        embedder.embed_sync([q.text])
        times.append((time.perf_counter() - t) * 1000)
    return percentiles(times)
