"""Per-key rate limit: a token bucket per bearer key in Redis, shared by every API process.

Every request that carries a bearer token spends one token of that token's bucket (the admin key is a
key like any other); an empty bucket answers 429 problem+json with `Retry-After` (whole seconds, ≥ 1)
before any database work. Requests without a token are left to authentication, which refuses them with
401 without touching the database. A wrong token gets a bucket of its own, so hammering with one bad key
is limited too; spraying many different keys is a per-client-address concern for the load balancer in
front (behind a proxy the API cannot tell client addresses apart reliably).

Why a Lua script and not a library: `limits` offers fixed, moving and sliding windows but no token bucket
(no burst-then-steady-rate semantics), and `pyrate-limiter` keeps a sorted-set log with an entry per
request (burst-sized memory per key). The bucket here is two numbers per key, updated atomically in one
EVALSHA round trip on the Redis server's own clock (so API processes with skewed clocks agree).

The same round trip reads the access generation (`app.banks.access`), which lets an API process use
what it remembers of a key and its bank instead of reading them again.

If Redis fails the limiter fails open: the request passes (appends keep answering 202), the failure is
counted and logged, and Redis is left alone for a second so an outage adds no latency to each request.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Receive, Scope, Send

from app.banks.access import GENERATION_KEY, new_generation
from app.errors import problem
from app.metrics import RATE_LIMIT_ERRORS, RATE_LIMITED

log = logging.getLogger(__name__)

KEY_PREFIX = "hindsight:ratelimit:"
ACCESS_GENERATION = "access_generation"  # the request state's name for the generation read here
BACKOFF_SECONDS = 1.0

# KEYS[1] the bucket, KEYS[2] the access generation (app.banks.access); ARGV[1] tokens per second,
# ARGV[2] burst (bucket size), ARGV[3] a new generation, set when there is none.
# Returns {1, 0, generation} when a token was taken, else {0, milliseconds until one is available,
# generation}.
TOKEN_BUCKET = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
local wait_ms = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait_ms = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
local generation = redis.call('GET', KEYS[2])
if not generation then
  generation = ARGV[3]
  redis.call('SET', KEYS[2], generation)
end
return {allowed, wait_ms, generation}
"""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after_seconds: int = 0
    access_generation: str | None = None  # read in the same round trip (None: not read)


class RateLimiter:
    """Token buckets in Redis, one per bearer token (named by a keyed digest, never the token)."""

    def __init__(self, redis: Redis, *, per_second: float, burst: int, secret: str) -> None:
        self._script = redis.register_script(TOKEN_BUCKET)
        self._per_second = per_second
        self._burst = burst
        self._secret = secret.encode()
        self._quiet_until = 0.0

    @property
    def enabled(self) -> bool:
        return self._per_second > 0

    def bucket(self, token: str) -> str:
        # Keyed with a server secret: what Redis holds cannot be used to test guesses of a key offline.
        digest = hmac.new(self._secret, token.encode(), hashlib.sha256).hexdigest()
        return KEY_PREFIX + digest[:40]

    async def take(self, token: str) -> Decision:
        """Spend one token of this key's bucket; fails open (allowed) when Redis cannot answer."""
        if not self.enabled or time.monotonic() < self._quiet_until:
            return Decision(allowed=True)
        try:
            allowed, wait_ms, generation = await self._script(
                keys=[self.bucket(token), GENERATION_KEY],
                args=[repr(self._per_second), self._burst, new_generation()],
            )
        except (RedisError, OSError) as exc:
            RATE_LIMIT_ERRORS.inc()
            now = time.monotonic()
            if now >= self._quiet_until:  # once per backoff, not once per request in flight
                log.warning("rate limit check skipped, Redis failed (requests pass for now): %s", exc)
            self._quiet_until = now + BACKOFF_SECONDS
            return Decision(allowed=True)
        if isinstance(generation, bytes):
            generation = generation.decode()
        if int(allowed) == 1:
            return Decision(allowed=True, access_generation=generation)
        return Decision(allowed=False, retry_after_seconds=max(1, math.ceil(int(wait_ms) / 1000)))


def bearer_token(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer …` header, if the request has one."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


class RateLimitMiddleware:
    """Spends a token for each HTTP request with a bearer key (REST and MCP alike); 429 when empty."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limiter: RateLimiter | None = None
        if scope["type"] == "http":
            application: Any = scope.get("app")
            limiter = getattr(application.state, "rate_limiter", None) if application else None
        token = bearer_token(scope) if limiter is not None else None
        if limiter is None or token is None:
            await self.app(scope, receive, send)
            return
        decision = await limiter.take(token)
        if decision.allowed:
            if decision.access_generation is not None:
                scope.setdefault("state", {})[ACCESS_GENERATION] = decision.access_generation
            await self.app(scope, receive, send)
            return
        RATE_LIMITED.inc()
        seconds = decision.retry_after_seconds
        response = problem(
            429,
            "Too Many Requests",
            f"This key's rate limit is exhausted; retry in {seconds} s.",
            headers={"Retry-After": str(seconds)},
        )
        await response(scope, receive, send)
