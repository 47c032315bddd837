"""Who may append where, remembered by an API process: a key's principal and its bank, so that a
single append needs no database read before its group commit.

An entry is used only while it is young (`ttl_seconds`) and only under the access generation it was
read in: a token in Redis, replaced after every commit that changes what a key may do (a key revoked,
a bank's config changed, a bank purged: `changed`). Each request reads the generation in the round
trip its rate limit already makes (`app.ratelimit`), or in a GET of its own when the limiter is off;
when Redis cannot answer, nothing is remembered nor used, and the request reads the database as
before. So a revocation is seen by the next request of every process, and if Redis failed at the
moment of a change, a remembered entry outlives it by `ttl_seconds` at most.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.banks.config import ConfiguredBank
from app.banks.service import Principal

log = logging.getLogger(__name__)

GENERATION_KEY = "hindsight:access:generation"


def new_generation() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Access:
    """A caller's principal and the bank it may append to."""

    principal: Principal
    bank: ConfiguredBank


class AccessCache:
    """One per API process (made by the lifespan)."""

    def __init__(self, redis: Redis, *, ttl_seconds: float = 30.0, max_entries: int = 10_000) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._max = max_entries
        self._entries: dict[tuple[str, str], tuple[str, float, Access]] = {}

    async def generation(self) -> str | None:
        """The current generation (made when Redis has none), or None when Redis cannot answer."""
        try:
            current = await self._redis.get(GENERATION_KEY)
            if current is None:
                await self._redis.set(GENERATION_KEY, new_generation(), nx=True)
                current = await self._redis.get(GENERATION_KEY)
        except (RedisError, OSError):
            return None
        return current.decode() if isinstance(current, bytes) else current

    def get(self, key_hash: str, bank_id: str, generation: str | None) -> Access | None:
        if generation is None:
            return None
        entry = self._entries.get((key_hash, bank_id))
        if entry is None or entry[0] != generation or entry[1] < time.monotonic():
            return None
        return entry[2]

    def put(self, key_hash: str, bank_id: str, generation: str | None, access: Access) -> None:
        if generation is None:
            return
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[(key_hash, bank_id)] = (generation, time.monotonic() + self._ttl, access)

    async def changed(self) -> None:
        """After a commit that changed a key's rights: every process's entries stop being used."""
        self._entries.clear()
        try:
            await self._redis.set(GENERATION_KEY, new_generation())
        except (RedisError, OSError) as exc:
            log.warning(
                "access generation not replaced (Redis failed); entries expire in %.0f s: %s", self._ttl, exc
            )
