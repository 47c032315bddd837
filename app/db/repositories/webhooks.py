"""Webhooks and their outbox: the bank's hooks, one delivery row per (event, hook), each hook's head
(its oldest pending delivery) and the record of every attempt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Webhook, WebhookDelivery


async def add_webhook(db: AsyncSession, hook: Webhook) -> None:
    db.add(hook)
    await db.flush()
    await db.refresh(hook)


async def list_webhooks(db: AsyncSession, bank_id: str, *, after: str | None, limit: int) -> list[Webhook]:
    stmt = select(Webhook).where(Webhook.bank_id == bank_id).order_by(Webhook.id).limit(limit)
    if after is not None:
        stmt = stmt.where(Webhook.id > uuid.UUID(after))
    return list((await db.scalars(stmt)).all())


async def get_webhook(db: AsyncSession, bank_id: str, webhook_id: uuid.UUID) -> Webhook | None:
    stmt = select(Webhook).where(Webhook.id == webhook_id, Webhook.bank_id == bank_id)
    return (await db.scalars(stmt)).first()


async def count_webhooks(db: AsyncSession, bank_id: str) -> int:
    """The bank's hooks, counted with the bank's hook-creation lock held to the end of the transaction,
    so two concurrent creations cannot both pass the bank's limit."""
    await db.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": f"webhooks:{bank_id}"}
    )
    rows = await db.execute(text("SELECT count(*) FROM webhooks WHERE bank_id = :bank"), {"bank": bank_id})
    return int(rows.scalar_one())


async def delete_webhook(db: AsyncSession, bank_id: str, webhook_id: uuid.UUID) -> bool:
    """Delete the hook and, by cascade, its deliveries (a send already in flight still completes)."""
    result = await db.execute(delete(Webhook).where(Webhook.id == webhook_id, Webhook.bank_id == bank_id))
    return bool(getattr(result, "rowcount", 0))


async def list_deliveries(
    db: AsyncSession, webhook_id: uuid.UUID, *, before: int | None, limit: int
) -> list[WebhookDelivery]:
    """The hook's deliveries, newest first."""
    stmt = (
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.seq.desc())
        .limit(limit)
    )
    if before is not None:
        stmt = stmt.where(WebhookDelivery.seq < before)
    return list((await db.scalars(stmt)).all())


_ENQUEUE = text("""
    INSERT INTO webhook_deliveries (id, webhook_id, bank_id, event, payload)
    SELECT gen_random_uuid(), w.id, w.bank_id, :event, p.payload
    FROM webhooks w
    CROSS JOIN LATERAL jsonb_array_elements(:payloads) WITH ORDINALITY AS p(payload, n)
    WHERE w.bank_id = :bank AND :event = ANY(w.events)
    ORDER BY p.n, w.id
""").bindparams(bindparam("payloads", type_=JSONB))


async def enqueue(db: AsyncSession, bank_id: str, event: str, payloads: list[dict[str, Any]]) -> int:
    """One delivery row per payload and per hook of the bank subscribed to `event`, in the caller's
    transaction; one statement on the hooks' bank index, no row when the bank has no such hook.
    Returns the rows written."""
    result = await db.execute(_ENQUEUE, {"bank": bank_id, "event": event, "payloads": payloads})
    return int(getattr(result, "rowcount", 0) or 0)


async def subscribed_events(db: AsyncSession, bank_id: str) -> frozenset[str]:
    """The event types some hook of the bank is subscribed to (none, for most banks)."""
    rows = await db.execute(
        text("SELECT DISTINCT unnest(events) FROM webhooks WHERE bank_id = :bank"), {"bank": bank_id}
    )
    return frozenset(rows.scalars())


async def scrub_memory_content(db: AsyncSession, bank_id: str, memory_id: uuid.UUID) -> None:
    """Blank the content and claim a `memory.created` payload carries of a unit being purged."""
    await db.execute(
        text(
            "UPDATE webhook_deliveries SET payload = jsonb_set(jsonb_set("
            "payload, '{data,memory,content}', '\"\"'), '{data,memory,claim}', 'null')"
            " WHERE bank_id = :bank AND event = 'memory.created'"
            " AND payload #>> '{data,memory,id}' = :memory"
        ),
        {"bank": bank_id, "memory": str(memory_id)},
    )


async def lock_due_webhook(
    db: AsyncSession, now: datetime, bank_id: str | None, skip_banks: Sequence[str] = ()
) -> Webhook | None:
    """A hook whose head is due at `now` (of `bank_id`, or of any bank but `skip_banks`), locked for
    this transaction (SKIP LOCKED: another worker is claiming it), the most overdue first. NO KEY
    UPDATE: new deliveries can still be written for it meanwhile (their foreign key only takes a KEY
    SHARE lock)."""
    rows = await db.execute(
        text(f"""
            SELECT w.id FROM webhooks w
            CROSS JOIN LATERAL (
                SELECT d.next_attempt_at FROM webhook_deliveries d
                WHERE d.webhook_id = w.id AND d.status = 'pending' ORDER BY d.seq LIMIT 1
            ) head
            WHERE head.next_attempt_at <= :now {"AND w.bank_id = :bank" if bank_id else ""}
              AND w.bank_id <> ALL(:skip)
            ORDER BY head.next_attempt_at
            LIMIT 1
            FOR NO KEY UPDATE OF w SKIP LOCKED
        """),
        {"now": now, "skip": list(skip_banks), **({"bank": bank_id} if bank_id else {})},
    )
    webhook_id = rows.scalar_one_or_none()
    return await db.get(Webhook, webhook_id, populate_existing=True) if webhook_id else None


async def head(db: AsyncSession, webhook_id: uuid.UUID) -> WebhookDelivery | None:
    """The hook's oldest pending delivery: the next one it is sent, in order."""
    stmt = (
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.status == "pending")
        .order_by(WebhookDelivery.seq)
        .limit(1)
    )
    return (await db.scalars(stmt)).first()


async def lease(db: AsyncSession, seq: int, until: datetime) -> None:
    """Hold a delivery (and so its hook, whose head it is) for the send about to start: it is not due
    again before `until` (past the send's timeout), unless the worker died sending it."""
    await db.execute(update(WebhookDelivery).where(WebhookDelivery.seq == seq).values(next_attempt_at=until))


async def record_attempt(db: AsyncSession, seq: int, **values: Any) -> None:
    """Store an attempt's outcome (status, attempts, response code, latency, error, next attempt)."""
    await db.execute(update(WebhookDelivery).where(WebhookDelivery.seq == seq).values(**values))


async def prune_finished(db: AsyncSession, before: datetime, limit: int) -> int:
    """Delete up to `limit` deliveries that finished before `before`. Returns how many."""
    result = await db.execute(
        text(
            "DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries"
            " WHERE finished_at IS NOT NULL AND finished_at < :before ORDER BY finished_at LIMIT :limit)"
        ),
        {"before": before, "limit": limit},
    )
    return int(getattr(result, "rowcount", 0) or 0)
