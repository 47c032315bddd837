"""The floor of the ingest benchmark: the same rows, the same callers and batch sizes, inserted by a
minimal asyncpg script straight into the `events` table, one transaction per request (what an
append commits), without HTTP, the app or Redis. What PostgreSQL on this machine commits; the app's
figures are reported as a share of it, measured in the same run."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from bench.harness.measure import percentiles

INSERT = """
    INSERT INTO events (bank_id, session_id, seq, role, content, speaker, occurred_at, external_id)
    SELECT $1, $2, s.seq, s.role, s.content, s.speaker, $3, s.external_id
    FROM unnest($4::int[], $5::text[], $6::text[], $7::text[], $8::text[])
         AS s(seq, role, content, speaker, external_id)
"""


async def run_floor(
    database_url: str,
    bank_id: str,
    *,
    label: str,
    requests: int,
    concurrency: int,
    batch_size: int,
    texts: list[tuple[str, str]],
) -> dict[str, Any]:
    """`requests` inserts of `batch_size` rows by `concurrency` connections, each to its own session
    (rows of the sessions table made first), seqs counted by the caller."""
    import asyncpg

    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    connections = [await asyncpg.connect(dsn) for _ in range(concurrency)]
    sessions = [f"floor-{label}-{c}" for c in range(concurrency)]
    await connections[0].executemany(
        "INSERT INTO sessions (bank_id, session_id) VALUES ($1, $2)", [(bank_id, s) for s in sessions]
    )
    latencies: list[float] = []
    next_index = 0

    async def caller(c: int) -> None:
        nonlocal next_index
        conn, seq = connections[c], 0
        while next_index < requests:
            i = next_index
            next_index += 1
            rows = [texts[(i * batch_size + j) % len(texts)] for j in range(batch_size)]
            started = time.perf_counter()
            await conn.execute(
                INSERT,
                bank_id,
                sessions[c],
                datetime.now(UTC),
                list(range(seq + 1, seq + batch_size + 1)),
                ["user" if j % 2 == 0 else "assistant" for j in range(batch_size)],
                [text for _, text in rows],
                [speaker for speaker, _ in rows],
                [f"{label}{i}-{j}" for j in range(batch_size)],
            )
            latencies.append((time.perf_counter() - started) * 1000)
            seq += batch_size

    started = time.perf_counter()
    try:
        await asyncio.gather(*(caller(c) for c in range(concurrency)))
    finally:
        wall = time.perf_counter() - started
        for conn in connections:
            await conn.close()
    return {
        "requests": requests,
        "concurrency": concurrency,
        "batch_size": batch_size,
        "events": requests * batch_size,
        "wall_s": round(wall, 2),
        "events_per_s": round(requests * batch_size / wall, 1),
        "latency_ms": percentiles(latencies),
    }
