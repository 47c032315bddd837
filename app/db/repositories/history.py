"""A unit's past: status transitions and their `memory_history` rows, what was active at an instant,
and the supersede chain of its versions."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import TextualSelect, column, func, select, text, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import MemoryHistory, MemoryUnit
from app.db.models.base import table_of


async def add_history(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(insert(table_of(MemoryHistory)), rows)


async def transition(
    db: AsyncSession,
    bank_id: str,
    changes: list[tuple[uuid.UUID, str, str]],
    *,
    action: str,
    actor: str,
    details: dict[uuid.UUID, dict[str, Any]] | None = None,
) -> None:
    """Move units to new statuses and write one history row each, in the caller's transaction.

    `changes` are (memory id, from status, to status); every history row's details carry `from`
    and `to`, which is what "what was active at T" is read from.
    """
    if not changes:
        return
    by_status: dict[str, list[uuid.UUID]] = {}
    for memory_id, _, to in changes:
        by_status.setdefault(to, []).append(memory_id)
    for to, ids in by_status.items():
        await db.execute(
            update(MemoryUnit)
            .where(MemoryUnit.id.in_(ids))
            .values(previous_status=MemoryUnit.status, status=to, status_changed_at=func.now())
        )
    extra = details or {}
    await add_history(
        db,
        [
            {
                "bank_id": bank_id,
                "memory_id": memory_id,
                "action": action,
                "actor": actor,
                "details": {**extra.get(memory_id, {}), "from": frm, "to": to},
            }
            for memory_id, frm, to in changes
        ],
    )


async def history_of(db: AsyncSession, ids: list[uuid.UUID]) -> list[MemoryHistory]:
    stmt = (
        select(MemoryHistory)
        .where(MemoryHistory.memory_id.in_(ids))
        .order_by(MemoryHistory.at, MemoryHistory.id)
    )
    return list((await db.scalars(stmt)).all())


def active_as_of_sql(bank: str, at: str) -> str:
    """SQL for the ids (`id`) of the bank's units that were active at an instant (system time), read
    from their history: each unit's last transition at or before it says what it was then (every
    transition's details carry `to`). `bank` and `at` name the bind parameters."""
    return f"""SELECT memory_id AS id FROM (
            SELECT DISTINCT ON (memory_id) memory_id, details->>'to' AS status
            FROM memory_history
            WHERE bank_id = :{bank} AND at <= :{at} AND details ? 'to'
            ORDER BY memory_id, at DESC, id DESC
        ) last WHERE status = 'active'"""


def active_as_of(bank_id: str, at: datetime) -> TextualSelect:
    """`active_as_of_sql` bound to `bank_id` and `at`, as a select ORM statements can take
    (`MemoryUnit.id.in_(...)`)."""
    sql = text(active_as_of_sql("as_of_bank", "as_of_at"))
    return sql.bindparams(as_of_bank=bank_id, as_of_at=at).columns(column("id", UUID(as_uuid=True)))


async def link_supersede(db: AsyncSession, old_id: uuid.UUID, new_id: uuid.UUID) -> None:
    """Store both directions; the old unit's valid time ends where the new one's begins."""
    new_valid_from = select(MemoryUnit.valid_from).where(MemoryUnit.id == new_id).scalar_subquery()
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == old_id)
        .values(
            superseded_by=new_id,
            valid_to=func.greatest(func.coalesce(new_valid_from, func.now()), MemoryUnit.valid_from),
        )
    )
    await db.execute(update(MemoryUnit).where(MemoryUnit.id == new_id).values(supersedes=old_id))


async def chain_head(db: AsyncSession, memory_id: uuid.UUID) -> MemoryUnit | None:
    """The newest unit of the supersede chain `memory_id` belongs to."""
    unit = await db.get(MemoryUnit, memory_id)
    seen: set[uuid.UUID] = set()
    while unit is not None and unit.superseded_by is not None and unit.id not in seen:
        seen.add(unit.id)
        unit = await db.get(MemoryUnit, unit.superseded_by)
    return unit


async def supersede_chain(db: AsyncSession, unit: MemoryUnit) -> list[MemoryUnit]:
    """The whole chain `unit` is part of, oldest first (one recursive query each way)."""
    chain = text("""
        WITH RECURSIVE back(id, depth) AS (
            SELECT supersedes, 1 FROM memory_units WHERE id = :id AND supersedes IS NOT NULL
            UNION ALL
            SELECT m.supersedes, b.depth + 1 FROM memory_units m JOIN back b ON m.id = b.id
            WHERE m.supersedes IS NOT NULL AND b.depth < 1000
        ), fwd(id, depth) AS (
            SELECT superseded_by, 1 FROM memory_units WHERE id = :id AND superseded_by IS NOT NULL
            UNION ALL
            SELECT m.superseded_by, f.depth + 1 FROM memory_units m JOIN fwd f ON m.id = f.id
            WHERE m.superseded_by IS NOT NULL AND f.depth < 1000
        )
        SELECT id, -depth AS pos FROM back UNION ALL SELECT :id, 0 UNION ALL SELECT id, depth FROM fwd
    """)
    rows = (await db.execute(chain, {"id": unit.id})).all()
    order = {row[0]: row[1] for row in rows}
    units = (await db.scalars(select(MemoryUnit).where(MemoryUnit.id.in_(list(order))))).all()
    return sorted(units, key=lambda u: order[u.id])
