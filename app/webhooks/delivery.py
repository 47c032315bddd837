"""Delivering the outbox: each hook's deliveries in order, signed per Standard Webhooks, retried with
exponential backoff for up to a day, then `failed`.

A hook's head is leased (claimed under SKIP LOCKED, its next attempt moved past the send's timeout)
while it is sent, so two workers never send to one hook at once and a hook's events arrive in the
order they were written. Hooks are sent to concurrently, a bounded number per bank: a receiver that
is down or hangs holds back only its own hook's later events, and takes one slot while it does.

An attempt succeeds on a 2xx answer; anything else (another status, a redirect, which is never
followed, a timeout, a refused or unreachable address) is retried. Only the status code and the
latency are kept, never the response body. The clock is injectable (tests)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
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
POLL_SECONDS = 0.25  # while sends are in flight, how often a run looks for deliveries that fell due
LEASE_GRACE = 30.0  # seconds a claimed delivery stays held past its send's timeout
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
    concurrency: int = 16
    per_bank: int = 4

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            allow_private=settings.webhook_allow_private,
            timeout_seconds=settings.webhook_timeout_seconds,
            retry_base_seconds=settings.webhook_retry_base_seconds,
            retry_max_seconds=settings.webhook_retry_max_seconds,
            retry_window_seconds=settings.webhook_retry_window_seconds,
            retention_days=settings.webhook_retention_days,
            concurrency=settings.webhook_concurrency,
            per_bank=settings.webhook_concurrency_per_bank,
        )

    def next_attempt(self, first_attempt_at: datetime, attempts: int, now: datetime) -> datetime | None:
        """When to try again after `attempts` failed attempts, the last at `now`: base·2^(n-1) later
        (at most `retry_max` later), and once more at the end of the window, which opens at the first
        attempt (a delivery waiting behind an earlier one of its hook loses none of it); None: past it."""
        deadline = first_attempt_at + timedelta(seconds=self.retry_window_seconds)
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
            target = await targets.resolve(
                hook.url, allow_private=policy.allow_private, resolve_within=policy.timeout_seconds
            )
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


@dataclass(frozen=True)
class Claim:
    """A hook and its head delivery, leased to this run for one attempt (loaded, detached)."""

    hook: Webhook
    delivery: WebhookDelivery
    now: datetime


class DeliveryRun:
    """One delivery run: claims due heads one at a time and sends them concurrently, at most
    `policy.concurrency` at once and `policy.per_bank` for one bank, so hooks whose receivers hang
    hold their own slots only. While sends are in flight it keeps looking for work that fell due
    meanwhile (any bank's, on an unscoped run): a nudge queued behind this run waits for nothing."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        http: httpx.AsyncClient,
        policy: Policy,
        bank_id: str | None,
        clock: Clock,
    ) -> None:
        self.sessionmaker, self.http, self.policy = sessionmaker, http, policy
        self.bank_id, self.clock = bank_id, clock
        self.report = Report()
        self.in_flight: Counter[str] = Counter()  # sends per bank
        self.settled = asyncio.Event()  # a send finished: a slot is free

    async def claim(self) -> Claim | None:
        """Lease the most overdue head of a hook no one is sending to, of a bank under its share."""
        now = self.clock()
        full = [bank for bank, n in self.in_flight.items() if n >= self.policy.per_bank]
        async with self.sessionmaker() as db, db.begin():
            hook = await repo.lock_due_webhook(db, now, self.bank_id, full)
            delivery = await repo.head(db, hook.id) if hook is not None else None
            if hook is None or delivery is None or delivery.next_attempt_at > now:
                return None
            # Past the attempt's own timeout: it is due again only if this worker died sending it.
            await repo.lease(
                db, delivery.seq, now + timedelta(seconds=self.policy.timeout_seconds + LEASE_GRACE)
            )
            db.expunge_all()  # kept as loaded: the commit must not expire what the send reads
        return Claim(hook, delivery, now)

    async def attempt(self, claim: Claim) -> None:
        hook, delivery, now = claim.hook, claim.delivery, claim.now
        try:
            outcome = await send(self.http, self.policy, hook, delivery, now)
            attempts = delivery.attempts + 1
            first = delivery.first_attempt_at or now
            values: dict[str, Any] = {
                "attempts": attempts,
                "first_attempt_at": first,
                "last_attempt_at": now,
                "response_code": outcome.response_code,
                "latency_ms": outcome.latency_ms,
                "error": outcome.error,
                "next_attempt_at": delivery.next_attempt_at,  # undo the lease
            }
            report = self.report
            if outcome.ok:
                values.update(status="succeeded", finished_at=now)
                report.counts["succeeded"] += 1
            elif (retry_at := self.policy.next_attempt(first, attempts, now)) is not None:
                values.update(next_attempt_at=retry_at)
                report.counts["retrying"] += 1
                report.retry_at = min(report.retry_at or retry_at, retry_at)
            else:
                values.update(status="failed", finished_at=now)
                report.counts["failed"] += 1
                log.warning(
                    "webhook %s: delivery %s failed for good: %s", hook.id, delivery.id, outcome.error
                )
            async with self.sessionmaker() as db, db.begin():
                await repo.record_attempt(db, delivery.seq, **values)
        finally:
            self.in_flight[hook.bank_id] -= 1
            self.settled.set()

    async def __call__(self) -> None:
        claimed = 0
        async with asyncio.TaskGroup() as sends:
            while True:
                self.settled.clear()
                running = sum(self.in_flight.values())
                claim = None
                if claimed < RUN_LIMIT and running < self.policy.concurrency:
                    claim = await self.claim()
                if claim is not None:
                    claimed += 1
                    self.in_flight[claim.hook.bank_id] += 1
                    sends.create_task(self.attempt(claim))
                    continue
                if not running:
                    break
                # A slot frees up, or poll again: another bank's delivery may have fallen due.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(POLL_SECONDS):
                        await self.settled.wait()
        self.report.more = claimed >= RUN_LIMIT


async def deliver_due(
    sessionmaker: async_sessionmaker[AsyncSession],
    policy: Policy,
    *,
    bank_id: str | None = None,
    clock: Clock = utcnow,
    prune: bool | None = None,
) -> Report:
    """Send every delivery due now (of `bank_id`'s hooks, or of all), each attempt recorded in its own
    transaction, at most RUN_LIMIT, several at once (`DeliveryRun`). `prune` (default: on a run over all
    banks) also deletes deliveries past their retention."""
    async with client(policy) as http:
        run = DeliveryRun(sessionmaker, http, policy, bank_id, clock)
        await run()
    if bank_id is None if prune is None else prune:
        async with sessionmaker() as db, db.begin():
            before = clock() - timedelta(days=policy.retention_days)
            await repo.prune_finished(db, before, PRUNE_BATCH)
    return run.report
