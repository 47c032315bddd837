"""L1 working memory: each session's latest turns in a capped Redis list with a TTL.

Redis is a cache here: a failed write is counted and logged, never raised, and after a failure
the buffer stays quiet for a few seconds so an outage does not slow every append.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.keys import composite_key
from app.metrics import WORKING_MEMORY_FAILURES

log = logging.getLogger(__name__)

BACKOFF_SECONDS = 5.0

Push = tuple[str, str, list[dict[str, Any]]]  # (bank_id, session_id, turns)


def working_memory_key(bank_id: str, session_id: str) -> str:
    return "hindsight:wm:" + composite_key(bank_id, session_id)


class WorkingMemory:
    def __init__(self, client: aioredis.Redis, *, max_turns: int, ttl_seconds: int) -> None:
        self._redis = client
        self._max_turns = max_turns
        self._ttl = ttl_seconds
        self._quiet_until = 0.0

    async def push(self, bank_id: str, session_id: str, turns: list[dict[str, Any]]) -> bool:
        if not turns:
            return False
        return await self._write([(bank_id, session_id, turns)], f"{bank_id}/{session_id}", transaction=True)

    async def push_many(self, pushes: list[Push]) -> bool:
        """Several sessions' turns (bank_id, session_id, turns), in order, in one round trip."""
        return await self._write(pushes, f"{len(pushes)} sessions", transaction=False)

    async def _write(self, pushes: list[Push], what: str, *, transaction: bool) -> bool:
        """Append each session's turns to its list (trimmed, TTL renewed) in one pipeline, or say False."""
        if not pushes or time.monotonic() < self._quiet_until:
            return False
        try:
            async with self._redis.pipeline(transaction=transaction) as pipe:
                for bank_id, session_id, turns in pushes:
                    key = working_memory_key(bank_id, session_id)
                    pipe.rpush(key, *(json.dumps(t, default=str) for t in turns))
                    pipe.ltrim(key, -self._max_turns, -1)
                    pipe.expire(key, self._ttl)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._quiet_until = time.monotonic() + BACKOFF_SECONDS
            WORKING_MEMORY_FAILURES.inc()
            log.warning("working memory write failed for %s: %s", what, exc)
            return False
        return True

    async def recent(self, bank_id: str, session_id: str, after_seq: int) -> list[dict[str, Any]]:
        """The buffered turns with seq > after_seq (the undistilled tail); [] if Redis is away."""
        try:
            raw = await self._redis.lrange(working_memory_key(bank_id, session_id), 0, -1)
        except (RedisError, OSError) as exc:
            log.warning("working memory read failed for %s/%s: %s", bank_id, session_id, exc)
            return []
        turns = [json.loads(item) for item in raw]
        return [t for t in turns if int(t.get("seq", 0)) > after_seq]

    async def discard_through(self, bank_id: str, session_id: str, seq: int) -> None:
        """Drop the turns a distillation has covered (seq <= `seq`); the rest stay buffered."""
        key = working_memory_key(bank_id, session_id)
        try:
            raw = await self._redis.lrange(key, 0, -1)
            covered = 0
            for item in raw:  # turns are pushed in seq order
                if int(json.loads(item).get("seq", 0)) > seq:
                    break
                covered += 1
            if covered:
                await self._redis.ltrim(key, covered, -1)
        except (RedisError, OSError) as exc:
            log.warning("working memory trim failed for %s/%s: %s", bank_id, session_id, exc)

    async def drop(self, bank_id: str, session_ids: list[str]) -> None:
        """Forget the sessions' buffers (a bank purge: no turn of it may outlive it in Redis)."""
        if not session_ids:
            return
        try:
            await self._redis.delete(*(working_memory_key(bank_id, s) for s in session_ids))
        except (RedisError, OSError) as exc:
            log.warning("working memory drop failed for bank %s: %s", bank_id, exc)
