"""What reads leave behind: the query log (the timeline's queries) and the units' access counts
(retrieval's recency of use), written in batches by app/query/recorder.py."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Bank, QueryLog


async def log_queries(db: AsyncSession, reads: list[dict[str, Any]]) -> None:
    """Log the reads of the banks that still exist: a bank deleted since takes only its own reads along."""
    asked = {r["bank_id"] for r in reads}
    existing = set((await db.scalars(select(Bank.id).where(Bank.id.in_(asked)))).all())
    kept = [r for r in reads if r["bank_id"] in existing]
    if not kept:
        return
    await db.execute(
        insert(QueryLog),
        [
            {
                "bank_id": r["bank_id"],
                "query": r["query"],
                "params": r["params"],
                "result_ids": r["result_ids"],
                "took_ms": r["took_ms"],
                "created_at": r["at"],
            }
            for r in kept
        ],
    )


async def bump_access(db: AsyncSession, counts: dict[uuid.UUID, int], at: datetime) -> None:
    if not counts:
        return
    ids = sorted(counts)  # a stable order: concurrent flushes cannot deadlock
    await db.execute(
        text("""
            UPDATE memory_units m SET access_count = m.access_count + c.n,
                   last_accessed_at = GREATEST(COALESCE(m.last_accessed_at, :at), :at)
            FROM unnest(CAST(:ids AS uuid[]), CAST(:ns AS int[])) AS c(id, n)
            WHERE m.id = c.id
        """),
        {"ids": ids, "ns": [counts[i] for i in ids], "at": at},
    )
