"""Delivering the outbox: each hook's deliveries in order, signed per Standard Webhooks, retried with
exponential backoff for up to a day, then `failed`.

A hook is locked (SKIP LOCKED) while its head is sent, so two workers never send to one hook at once
and a hook's events arrive in the order they were written; a receiver that is down holds back only
its own hook's later events. An attempt succeeds on a 2xx answer; anything else (another status, a
redirect, which is never followed, a timeout, a refused or unreachable address) is retried. Only the
status code and the latency are kept, never the response body. The clock is injectable (tests)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from standardwebhooks import Webhook as Signer

from app.config import Settings
from app.db.models import Webhook, WebhookDelivery
from app.db.repositories import webhooks as repo
from app.webhooks import targets

log = logging.getLogger(__name__)

USER_AGENT = "Hindsight-Webhooks/0.1"
RUN_LIMIT = 200  # deliveries per run; a longer backlog goes on in the next run, queued at once
PRUNE_BATCH = 1000
ERROR_CHARS = 500

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Policy:
    allow_private: bool = False
    timeout_seconds: float = 5.0
    retry_base_seconds: float = 5.0
    retry_max_seconds: float = 3600.0
    retry_window_seconds: float = 86_400.0
    retention_days: float = 30.0

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            allow_private=settings.webhook_allow_private,
            timeout_seconds=settings.webhook_timeout_seconds,
            retry_base_seconds=settings.webhook_retry_base_seconds,
            retry_max_seconds=settings.webhook_retry_max_seconds,
            retry_window_seconds=settings.webhook_retry_window_seconds,
            retention_days=settings.webhook_retention_days,
        )

    def next_attempt(self, created_at: datetime, attempts: int, now: datetime) -> datetime | None:
        """When to try again after `attempts` failed attempts, the last at `now`: base·2^(n-1) later
        (at most `retry_max` later), and once more at the end of the window; None: past the window."""
        deadline = created_at + timedelta(seconds=self.retry_window_seconds)
        if now >= deadline:
            return None
        delay = min(self.retry_base_seconds * 2 ** min(attempts - 1, 60), self.retry_max_seconds)
        return min(now + timedelta(seconds=delay), deadline)


@dataclass
class Outcome:
    response_code: int | None = None
    latency_ms: float | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.response_code is not None and 200 <= self.response_code < 300


@dataclass
class Report:
    """What a run did, and when the earliest retry it scheduled is due (None: none)."""

    counts: dict[str, int] = field(default_factory=lambda: {"succeeded": 0, "retrying": 0, "failed": 0})
    retry_at: datetime | None = None
    more: bool = False  # stopped at RUN_LIMIT with deliveries still due


def body_of(delivery: WebhookDelivery) -> str:
    return json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False)


def signed_headers(hook: Webhook, delivery: WebhookDelivery, body: str, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers: `webhook-id` (the same on every retry), `webhook-timestamp`
    (the attempt's), `webhook-signature` (`v1,` + HMAC-SHA256 of id.timestamp.body)."""
    message_id = f"msg_{delivery.id.hex}"
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Signer(hook.secret).sign(message_id, now.astimezone(UTC), body),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


async def send(
    client: httpx.AsyncClient, policy: Policy, hook: Webhook, delivery: WebhookDelivery, now: datetime
) -> Outcome:
    """One attempt, bounded by the policy's timeout as a whole (resolution, connection, answer)."""
    body = body_of(delivery)
    headers = signed_headers(hook, delivery, body, now)
    started = time.perf_counter()
    outcome = Outcome()
    try:
        async with asyncio.timeout(policy.timeout_seconds):
            target = await targets.resolve(hook.url, allow_private=policy.allow_private)
            headers["host"] = target.url.netloc.decode("ascii")
            extensions = {"sni_hostname": target.url.host} if target.address else {}
            request = client.build_request(
                "POST", target.connect_url, content=body.encode(), headers=headers, extensions=extensions
            )
            response = await client.send(request, stream=True, follow_redirects=False)
            await response.aclose()  # the body is never read
            outcome.response_code = response.status_code
            if not outcome.ok:
                outcome.error = f"HTTP {response.status_code}"
    except targets.TargetRefused as exc:
        outcome.error = f"refused: the URL {exc}"
    except TimeoutError:
        outcome.error = f"timed out after {policy.timeout_seconds:g} s"
    except httpx.HTTPError as exc:
        outcome.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    outcome.latency_ms = round((time.perf_counter() - started) * 1000, 2)
    if outcome.error:
        outcome.error = outcome.error[:ERROR_CHARS]
    return outcome


def client(policy: Policy) -> httpx.AsyncClient:
    """No redirects, no proxies from the environment (they would bypass the address check), no
    connection reuse (a connection is checked for one hook's name)."""
    return httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=policy.timeout_seconds,
        limits=httpx.Limits(max_keepalive_connections=0),
    )


async def _deliver_head(
    db: AsyncSession, http: httpx.AsyncClient, policy: Policy, hook: Webhook, now: datetime, report: Report
) -> None:
    delivery = await repo.head(db, hook.id)
    if delivery is None or delivery.next_attempt_at > now:
        return
    outcome = await send(http, policy, hook, delivery, now)
    attempts = delivery.attempts + 1
    values: dict[str, Any] = {
        "attempts": attempts,
        "last_attempt_at": now,
        "response_code": outcome.response_code,
        "latency_ms": outcome.latency_ms,
        "error": outcome.error,
    }
    if outcome.ok:
        values.update(status="succeeded", finished_at=now)
        report.counts["succeeded"] += 1
    elif (retry_at := policy.next_attempt(delivery.created_at, attempts, now)) is not None:
        values.update(next_attempt_at=retry_at)
        report.counts["retrying"] += 1
        report.retry_at = min(report.retry_at or retry_at, retry_at)
    else:
        values.update(status="failed", finished_at=now)
        report.counts["failed"] += 1
        log.warning("webhook %s: delivery %s failed for good: %s", hook.id, delivery.id, outcome.error)
    await repo.record_attempt(db, delivery.seq, **values)


async def deliver_due(
    sessionmaker: async_sessionmaker[AsyncSession],
    policy: Policy,
    *,
    bank_id: str | None = None,
    clock: Clock = utcnow,
) -> Report:
    """Send every delivery due now (of `bank_id`'s hooks, or of all), one per transaction, at most
    RUN_LIMIT. A run over all banks (beat's tick) also prunes deliveries past their retention."""
    report = Report()
    async with client(policy) as http:
        for _ in range(RUN_LIMIT):
            now = clock()
            async with sessionmaker() as db, db.begin():
                hook = await repo.lock_due_webhook(db, now, bank_id)
                if hook is None:
                    break
                await _deliver_head(db, http, policy, hook, now, report)
        else:
            report.more = True
    if bank_id is None:
        async with sessionmaker() as db, db.begin():
            before = clock() - timedelta(days=policy.retention_days)
            await repo.prune_finished(db, before, PRUNE_BATCH)
    return report
