"""The API over HTTP: one query at a time (httpx, keep-alive), client wall time and the server's
`took_ms`, per kind of query, with the CPU of the machine over the measured queries."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bench.harness.measure import CpuAccount, percentiles
from bench.query_latency.queries import BenchQuery


def measure_http(
    base: str,
    admin_key: str,
    bank_id: str,
    queries: list[BenchQuery],
    n: int,
    anchor: datetime,
    warmup: int,
    before: Callable[[], dict[str, Any]],
    ours: Callable[[], list[int]],
) -> dict[str, Any]:
    import httpx

    path = f"/v1/banks/{bank_id}/query"
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {admin_key}"}, timeout=120) as client:
        t = time.perf_counter()
        first = client.post(path, json=queries[0].body(anchor))
        first.raise_for_status()
        first_ms = (time.perf_counter() - t) * 1000
        for q in queries[1 : 1 + warmup]:
            client.post(path, json=q.body(anchor)).raise_for_status()
        conditions = before()
        cpu = CpuAccount(ours)
        wall: list[float] = []
        took: list[float] = []
        results: list[int] = []
        by_category: dict[str, list[float]] = {}
        for k in range(n):
            q = queries[k % len(queries)]
            t = time.perf_counter()
            response = client.post(path, json=q.body(anchor))
            ms = (time.perf_counter() - t) * 1000
            response.raise_for_status()
            body = response.json()
            wall.append(ms)
            took.append(float(body["took_ms"]))
            results.append(len(body["memories"]))
            by_category.setdefault(q.category, []).append(ms)
    return {
        "conditions": {**conditions, **cpu.result()},
        "first_query_ms": round(first_ms, 1),
        "warmup_queries": warmup,
        "client_wall_ms": percentiles(wall),
        "server_took_ms": percentiles(took),
        "by_category_wall_ms": {c: percentiles(v) for c, v in sorted(by_category.items())},
        "mean_results": round(statistics.fmean(results), 2),
        "empty_results": sum(1 for r in results if r == 0),
    }
