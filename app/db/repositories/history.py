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
    """Write history rows stamped by the database's clock at the insert, not the transaction's start
    (`now()`): a transaction that waited for a unit's lock writes after the one it waited for, so a
    unit's rows are in the order things happened to it (never `superseded` before its `created`).
    A row that carries its own `at` (an import) keeps it; one without `agent_id` names no agent."""
    rows = [{"agent_id": None, **r} for r in rows]  # one set of keys: a multi-row insert needs it
    stamped = [r for r in rows if "at" in r]
    clocked = [r for r in rows if "at" not in r]
    table = table_of(MemoryHistory)
    if clocked:
        await db.execute(insert(table).values(at=func.clock_timestamp()), clocked)
    if stamped:
        await db.execute(insert(table), stamped)


async def lock_rows(db: AsyncSession, ids: list[uuid.UUID]) -> None:
    """Lock units' rows for this transaction in id order, the one order every writer of statuses
    takes them in (after the bank's lock, when it takes that too), so two never wait for each other."""
    if ids:
        await db.execute(
            select(MemoryUnit.id).where(MemoryUnit.id.in_(ids)).order_by(MemoryUnit.id).with_for_update()
        )


async def transition(
    db: AsyncSession,
    bank_id: str,
    changes: list[tuple[uuid.UUID, str, str]],
    *,
    action: str,
    actor: str,
    details: dict[uuid.UUID, dict[str, Any]] | None = None,
    changed_at: datetime | None = None,
    agent_id: str | None = None,
) -> set[uuid.UUID]:
    """Move units to new statuses and write one history row each, in the caller's transaction.

    `changes` are (memory id, from status, to status); a unit moves only if it is still in its `from`
    status when the update reaches its row (after waiting for any transaction that holds it), so a
    decision taken on a stale read changes nothing and writes no row. Returns the ids that moved.
    Every history row's details carry `from` and `to`, which is what "what was active at T" is read
    from. `changed_at`: the clock of a task that runs on a clock of its own (maintenance's `now`),
    else the database's. `agent_id`: the agent that acted, when one was named.
    """
    if not changes:
        return set()
    by_move: dict[tuple[str, str], list[uuid.UUID]] = {}
    for memory_id, frm, to in changes:
        by_move.setdefault((frm, to), []).append(memory_id)
    if len(changes) > 1:  # row locks in one order (by id), whoever moves several units at once
        await lock_rows(db, [memory_id for memory_id, _, _ in changes])
    # On the database's clock the unit's `status_changed_at` and its history row's `at` are one instant
    # (read back from the update), so "what was active at T" agrees with the unit's own timestamp at T.
    moved: dict[uuid.UUID, datetime] = {}
    for (frm, to), ids in by_move.items():
        rows = await db.execute(
            update(MemoryUnit)
            .where(MemoryUnit.id.in_(sorted(ids)), MemoryUnit.status == frm)
            .values(
                previous_status=MemoryUnit.status,
                status=to,
                status_changed_at=changed_at if changed_at is not None else func.clock_timestamp(),
            )
            .returning(MemoryUnit.id, MemoryUnit.status_changed_at)
        )
        moved.update({row[0]: row[1] for row in rows})
    extra = details or {}
    await add_history(
        db,
        [
            {
                "bank_id": bank_id,
                "memory_id": memory_id,
                "action": action,
                "actor": actor,
                "agent_id": agent_id,
                "details": {**extra.get(memory_id, {}), "from": frm, "to": to},
                # a task on a clock of its own stamps the unit, not its history (which stays in order)
                **({"at": moved[memory_id]} if changed_at is None else {}),
            }
            for memory_id, frm, to in changes
            if memory_id in moved
        ],
    )
    return set(moved)


async def transition_unit(
    db: AsyncSession,
    unit: MemoryUnit,
    to: str,
    *,
    action: str,
    actor: str,
    details: dict[str, Any] | None = None,
    agent_id: str | None = None,
) -> bool:
    """`transition` of one unit from its status as loaded (lock it first), `details` on its history
    row; False when the unit was no longer in that status."""
    return unit.id in await transition(
        db,
        unit.bank_id,
        [(unit.id, unit.status, to)],
        action=action,
        actor=actor,
        details={unit.id: details} if details is not None else None,
        agent_id=agent_id,
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
    transition's details carry `to`). A unit purged since is none of them: its words are gone for good,
    and no earlier instant brings its row back. `bank` and `at` name the bind parameters."""
    return f"""SELECT memory_id AS id FROM (
            SELECT DISTINCT ON (memory_id) memory_id, details->>'to' AS status
            FROM memory_history
            WHERE bank_id = :{bank} AND at <= :{at} AND details ? 'to'
            ORDER BY memory_id, at DESC, id DESC
        ) last WHERE status = 'active' AND memory_id NOT IN (
            SELECT memory_id FROM memory_history WHERE bank_id = :{bank} AND action = 'purged'
        )"""


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


async def link_restatements(db: AsyncSession, ids: list[uuid.UUID], head_id: uuid.UUID) -> None:
    """Units that restated a value `head_id` replaced point at it (`superseded_by`) and their valid
    time ends where it begins; the chain itself (the head's `supersedes`) is left as it is."""
    if not ids:
        return
    head_valid_from = select(MemoryUnit.valid_from).where(MemoryUnit.id == head_id).scalar_subquery()
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id.in_(ids))
        .values(
            superseded_by=head_id,
            valid_to=func.greatest(func.coalesce(head_valid_from, func.now()), MemoryUnit.valid_from),
        )
    )


# The history's view of a chain stops this many versions away from the unit it is asked about.
CHAIN_STEPS = 1000


def _walk(name: str, link: str, steps: int | None) -> str:
    """A CTE `name`(id, next, depth, looped) that walks the chain from the unit :id along `link`
    (`superseded_by`: newer versions, `supersedes`: older ones), :id at depth 0, at most `steps`
    steps. A cycle (never written, but the walk must end) stops where it closes: the unit seen
    again is the last row, `looped`."""
    bound = f" WHERE w.depth < {int(steps)}" if steps is not None else ""
    return f"""{name}(id, next, depth) AS (
            SELECT id, {link}, 0 FROM memory_units WHERE id = :id
            UNION ALL
            SELECT m.id, m.{link}, w.depth + 1 FROM {name} w JOIN memory_units m ON m.id = w.next{bound}
        ) CYCLE id SET looped USING path"""


async def chain_head(db: AsyncSession, memory_id: uuid.UUID) -> MemoryUnit | None:
    """The newest unit of the supersede chain `memory_id` belongs to (one recursive query); None
    when there is no such unit or the chain points at a unit that does not exist."""
    last = (
        await db.execute(
            text(
                f"WITH RECURSIVE {_walk('fwd', 'superseded_by', None)}"
                " SELECT id, next, looped FROM fwd ORDER BY depth DESC LIMIT 1"
            ),
            {"id": memory_id},
        )
    ).first()
    if last is None or (last.next is not None and not last.looped):
        return None
    return await db.get(MemoryUnit, last.id)


async def supersede_chain(db: AsyncSession, unit: MemoryUnit) -> list[MemoryUnit]:
    """The whole chain `unit` is part of, oldest first (one recursive query each way, up to
    CHAIN_STEPS versions from `unit`)."""
    chain = text(f"""
        WITH RECURSIVE {_walk("back", "supersedes", CHAIN_STEPS)},
        {_walk("fwd", "superseded_by", CHAIN_STEPS)}
        SELECT id, -depth AS pos FROM back WHERE depth > 0 AND NOT looped
        UNION ALL SELECT id, depth FROM fwd WHERE NOT looped
    """)
    rows = (await db.execute(chain, {"id": unit.id})).all()
    order = {row[0]: row[1] for row in rows}
    units = (await db.scalars(select(MemoryUnit).where(MemoryUnit.id.in_(list(order))))).all()
    return sorted(units, key=lambda u: order[u.id])
