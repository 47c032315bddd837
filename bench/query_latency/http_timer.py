"""The API over HTTP: one query at a time (httpx, keep-alive), client wall time and the server's
`took_ms`, per kind of query, with the CPU of the machine over the measured queries."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bench.harness.measure import CpuAccount, percentiles
from bench.query_latency.queries import BenchQuery

Post = Callable[[dict[str, Any]], tuple[float, dict[str, Any]]]


@dataclass(frozen=True)
class QueryRun:
    """What a measurement asks: `n` of `queries` after `warmup`, of one bank as the admin, at `anchor`."""

    admin_key: str
    bank_id: str
    queries: list[BenchQuery]
    n: int
    anchor: datetime
    warmup: int


@contextlib.contextmanager
def query_client(base: str, run: QueryRun) -> Iterator[Post]:
    """Yield a function that posts a query body to the bank and returns the client wall ms and the answer."""
    import httpx

    path = f"/v1/banks/{run.bank_id}/query"
    headers = {"Authorization": f"Bearer {run.admin_key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:

        def post(body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
            t = time.perf_counter()
            response = client.post(path, json=body)
            ms = (time.perf_counter() - t) * 1000
            response.raise_for_status()
            answer: dict[str, Any] = response.json()
            return ms, answer

        yield post


def measure_http(
    base: str, run: QueryRun, before: Callable[[], dict[str, Any]], ours: Callable[[], list[int]]
) -> dict[str, Any]:
    queries, anchor = run.queries, run.anchor
    with query_client(base, run) as post:
        first_ms, _ = post(queries[0].body(anchor))
        for q in queries[1 : 1 + run.warmup]:
            post(q.body(anchor))
        conditions = before()
        cpu = CpuAccount(ours)
        wall: list[float] = []
        took: list[float] = []
        results: list[int] = []
        by_category: dict[str, list[float]] = {}
        for k in range(run.n):
            q = queries[k % len(queries)]
            ms, body = post(q.body(anchor))
            wall.append(ms)
            took.append(float(body["took_ms"]))
            results.append(len(body["memories"]))
            by_category.setdefault(q.category, []).append(ms)
    return {
        "conditions": {**conditions, **cpu.result()},
        "first_query_ms": round(first_ms, 1),
        "warmup_queries": run.warmup,
        "client_wall_ms": percentiles(wall),
        "server_took_ms": percentiles(took),
        "by_category_wall_ms": {c: percentiles(v) for c, v in sorted(by_category.items())},
        "mean_results": round(statistics.fmean(results), 2),
        "empty_results": sum(1 for r in results if r == 0),
    }
