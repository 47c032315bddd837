"""Banks and their API keys."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ApiKey, Bank, ChatSession, Event, Job, MemoryUnit


async def get_bank(db: AsyncSession, bank_id: str) -> Bank | None:
    return await db.get(Bank, bank_id)


async def list_banks(db: AsyncSession, *, after: str | None, limit: int, only: str | None) -> list[Bank]:
    stmt = select(Bank).order_by(Bank.id).limit(limit)
    if after is not None:
        stmt = stmt.where(Bank.id > after)
    if only is not None:
        stmt = stmt.where(Bank.id == only)
    return list((await db.scalars(stmt)).all())


async def bank_config(db: AsyncSession, bank_id: str) -> dict[str, Any] | None:
    config: dict[str, Any] | None = await db.scalar(select(Bank.config).where(Bank.id == bank_id))
    return config


async def bank_configs(db: AsyncSession, only: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(id, config) of every bank, or of the bank `only`, in id order."""
    stmt = select(Bank.id, Bank.config).order_by(Bank.id)
    if only is not None:
        stmt = stmt.where(Bank.id == only)
    return [(bank_id, config) for bank_id, config in (await db.execute(stmt)).all()]


async def add_bank(db: AsyncSession, bank: Bank) -> None:
    db.add(bank)
    await db.flush()


async def purge_bank(db: AsyncSession, bank_id: str) -> bool:
    """Delete the bank and, by cascade, every row it owns. The events trigger allows it only here."""
    await db.execute(text("SET LOCAL hindsight.allow_purge = 'on'"))
    result = await db.execute(text("DELETE FROM banks WHERE id = :id"), {"id": bank_id})
    return bool(getattr(result, "rowcount", 0))


# Built once: every request with a bank key runs it, and building the expression cost more CPU than
# running its cached compiled form.
_ACTIVE_KEY = (
    select(ApiKey, Bank)
    .join(Bank, Bank.id == ApiKey.bank_id)
    .where(ApiKey.key_hash == bindparam("key_hash"), ApiKey.revoked_at.is_(None))
)


async def find_active_key(db: AsyncSession, key_hash: str) -> ApiKey | None:
    """The key, read with its bank in the same statement: the bank is then in the session's identity
    map, and `get_bank` of the request (nearly always that bank) needs no round trip of its own."""
    row = (await db.execute(_ACTIVE_KEY, {"key_hash": key_hash})).first()
    if row is None:
        return None
    # The identity map holds objects weakly: without a reference the bank is collected at once and
    # `get_bank` reads it again (one more round trip per request). The session keeps it alive.
    db.info.setdefault("authenticated_banks", []).append(row[1])
    key: ApiKey = row[0]
    return key


async def add_key(db: AsyncSession, key: ApiKey) -> None:
    db.add(key)
    await db.flush()


async def revoke_key(db: AsyncSession, bank_id: str, key_id: uuid.UUID) -> bool:
    stmt = (
        update(ApiKey)
        .where(ApiKey.id == key_id, ApiKey.bank_id == bank_id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    result = await db.execute(stmt)
    return bool(getattr(result, "rowcount", 0))


async def bank_stats(db: AsyncSession, bank_id: str) -> dict[str, Any]:
    by_status: dict[str, int] = dict(
        (
            await db.execute(
                select(MemoryUnit.status, func.count())
                .where(MemoryUnit.bank_id == bank_id)
                .group_by(MemoryUnit.status)
            )
        ).all()
    )
    by_layer: dict[str, int] = dict(
        (
            await db.execute(
                select(MemoryUnit.layer, func.count())
                .where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "active")
                .group_by(MemoryUnit.layer)
            )
        ).all()
    )
    tag = func.unnest(MemoryUnit.tags).label("tag")
    tag_rows = (
        await db.execute(
            select(tag, func.count())
            .where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "active")
            .group_by(tag)
        )
    ).all()
    sessions, undistilled = (
        await db.execute(
            select(
                func.count(), func.coalesce(func.sum(ChatSession.last_seq - ChatSession.distilled_seq), 0)
            ).where(ChatSession.bank_id == bank_id)
        )
    ).one()
    events = await db.scalar(select(func.count()).select_from(Event).where(Event.bank_id == bank_id))
    queued, running, oldest = (
        await db.execute(
            select(
                func.count().filter(Job.status == "queued"),
                func.count().filter(Job.status == "running"),
                func.min(Job.created_at).filter(Job.status == "queued"),
            ).where(Job.bank_id == bank_id, Job.status.in_(("queued", "running")))
        )
    ).one()
    lag = (datetime.now(UTC) - oldest).total_seconds() if oldest else 0.0
    latest = (
        await db.execute(
            text("""
                SELECT DISTINCT ON (kind) kind, status, finished_at, result FROM jobs
                WHERE kind LIKE 'maintenance.%' AND finished_at IS NOT NULL
                ORDER BY kind, finished_at DESC
            """)
        )
    ).all()
    maintenance = {
        kind.removeprefix("maintenance."): {
            "status": status,
            "finished_at": finished_at.isoformat(),
            "changed": ((result or {}).get("banks") or {}).get(bank_id, {}),
        }
        for kind, status, finished_at, result in latest
        if kind != "maintenance.sweep"
    }
    return {
        "bank_id": bank_id,
        "memories_by_status": by_status,
        "memories_by_tag": dict(tag_rows),
        "memories_by_layer": by_layer,
        "sessions": sessions,
        "events": events or 0,
        "undistilled_events": int(undistilled),
        "queued_jobs": queued,
        "running_jobs": running,
        "queue_lag_seconds": max(lag, 0.0),
        "maintenance": maintenance,
    }
