"""What an API process remembers of a key and its bank (app/banks/access.py) is used only under the
access generation it was read in: a change made through another process replaces the generation in
Redis, and the rate limiter's round trip brings the new one to every request."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from app.banks.access import Access, AccessCache
from app.banks.config import ConfiguredBank
from app.banks.service import Principal
from app.db.models import Bank
from app.embedded import free_port
from app.ratelimit import RateLimiter


def access() -> Access:
    return Access(Principal(is_admin=False, bank_id="b"), ConfiguredBank.of(Bank(id="b", config={})))


async def test_a_change_through_another_process_retires_what_this_one_remembers(app: Any) -> None:
    here, there = AccessCache(app.state.redis), AccessCache(app.state.redis)
    limiter = RateLimiter(app.state.redis, per_second=1000, burst=1000, secret="s" * 16)
    before = (await limiter.take("hs_token")).access_generation
    assert before is not None
    assert before == await here.generation()
    here.put("hash", "b", before, access())
    assert here.get("hash", "b", before) is not None
    assert here.get("hash", "other-bank", before) is None
    await there.changed()  # e.g. a key revoked through the other API process
    after = (await limiter.take("hs_token")).access_generation
    assert after is not None
    assert after != before
    assert here.get("hash", "b", after) is None


async def test_nothing_is_remembered_or_used_without_a_generation() -> None:
    cache = AccessCache(redis=None)  # type: ignore[arg-type]  # never called: no generation
    cache.put("hash", "b", None, access())
    assert cache.get("hash", "b", None) is None


async def test_an_entry_expires(app: Any) -> None:
    cache = AccessCache(app.state.redis, ttl_seconds=0.0)
    generation = await cache.generation()
    cache.put("hash", "b", generation, access())
    assert cache.get("hash", "b", generation) is None


async def test_redis_down_gives_no_generation_and_a_change_still_returns() -> None:
    down = Redis(
        port=free_port(), socket_connect_timeout=0.2, socket_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )
    try:
        cache = AccessCache(down)
        assert await cache.generation() is None
        await cache.changed()  # logged, never raised: the change it follows has committed
    finally:
        await down.aclose()
