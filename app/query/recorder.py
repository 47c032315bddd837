"""Reads are recorded off the request path: queries go to `query_log` (the timeline shows them) and
the units they returned get `access_count` / `last_accessed_at` bumps, in one batch a second."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.repositories import query_log as repo
from app.query.tuning import MAX_BUFFERED_READS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Read:
    bank_id: str
    query: str
    params: dict[str, Any]
    result_ids: list[uuid.UUID]
    took_ms: float
    at: datetime


class ReadRecorder:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], interval_seconds: float = 1.0) -> None:
        self._sessionmaker = sessionmaker
        self._interval = interval_seconds
        self._reads: list[Read] = []
        self._task: asyncio.Task[None] | None = None
        # one flush at a time: a flush returns only once the reads buffered before it are written, even
        # those the periodic flush took a moment earlier
        self._flushing = asyncio.Lock()
        self.dropped = 0

    def record(
        self, bank_id: str, query: str, params: dict[str, Any], result_ids: list[uuid.UUID], took_ms: float
    ) -> None:
        if len(self._reads) >= MAX_BUFFERED_READS:
            self._reads.pop(0)
            self.dropped += 1
        self._reads.append(Read(bank_id, query, params, result_ids, took_ms, datetime.now(UTC)))

    async def flush(self) -> None:
        async with self._flushing:
            reads, self._reads = self._reads, []
            if not reads:
                return
            counts = Counter(memory_id for read in reads for memory_id in read.result_ids)
            last = max(read.at for read in reads)
            try:
                async with self._sessionmaker() as db, db.begin():
                    await repo.log_queries(db, [read.__dict__ for read in reads])
                    await repo.bump_access(db, counts, last)
            except Exception as exc:  # statistics must never break reads
                log.warning("could not record %d reads: %r", len(reads), exc)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.flush()

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.flush()
