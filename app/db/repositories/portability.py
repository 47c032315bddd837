"""Bank export and import: every statement of both. The export reads one REPEATABLE READ, read-only
snapshot through server-side cursors (`stream` + `yield_per`: a bounded number of rows in memory
whatever the bank's size); the import writes multi-row inserts in the caller's transaction.

Each section is read in an order that does not depend on ids (an import gives rows new ones), so a
bank and its import export the same lines in the same order."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import JSON, Executable, Row, column, literal_column, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import (
    Bank,
    ChatSession,
    Entity,
    Event,
    MemoryEntity,
    MemoryHistory,
    MemoryUnit,
    Relation,
)
from app.db.models.base import table_of
from app.db.repositories.units import INHERITED_SEARCH_CHARS

Reader = Callable[[AsyncConnection, str], AsyncIterator[Sequence[Row[Any]]]]  # a section, a chunk per fetch

ROWS_PER_FETCH = 1000

# --- export ---------------------------------------------------------------------------------------------


@asynccontextmanager
async def snapshot(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection inside one REPEATABLE READ, READ ONLY transaction: every read sees the bank as it
    was at the first one, whatever commits meanwhile."""
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            yield conn


async def bank_row(conn: AsyncConnection, bank_id: str) -> Row[Any] | None:
    stmt = select(Bank.id, Bank.name, Bank.config, Bank.created_at, Bank.updated_at).where(Bank.id == bank_id)
    return (await conn.execute(stmt)).first()


async def _stream(conn: AsyncConnection, stmt: Executable) -> AsyncIterator[Sequence[Row[Any]]]:
    result = await conn.stream(stmt.execution_options(yield_per=ROWS_PER_FETCH))
    async for rows in result.partitions():
        yield rows


def _columns(model: type[Any], names: str) -> list[Any]:
    """The model's columns by attribute name, `metadata_` read as `metadata` (the lines' name)."""
    return [
        getattr(model, name).label(name.rstrip("_")) if name.endswith("_") else getattr(model, name)
        for name in names.split()
    ]


def sessions(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    names = "session_id status last_seq distilled_seq metadata_ created_at last_event_at closed_at"
    names += " quarantined"
    stmt = (
        select(*_columns(ChatSession, names))
        .where(ChatSession.bank_id == bank_id)
        .order_by(ChatSession.session_id.collate("C"))
    )
    return _stream(conn, stmt)


def events(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    names = (
        "session_id seq role content speaker occurred_at external_id metadata_ agent_id proposed created_at"
    )
    stmt = (
        select(*_columns(Event, names))
        .where(Event.bank_id == bank_id)
        .order_by(Event.session_id.collate("C"), Event.seq)
    )
    return _stream(conn, stmt)


# A unit's source turns as [session_id, seq] pairs, in the order of its `source_event_ids`.
_SOURCE_EVENTS = literal_column(
    "(SELECT coalesce(json_agg(json_build_array(e.session_id, e.seq) ORDER BY u.ord), '[]'::json)"
    " FROM unnest(memory_units.source_event_ids) WITH ORDINALITY AS u(id, ord)"
    " JOIN events e ON e.id = u.id)",
    type_=JSON,
)
# Units in an order of their own content, not of their ids (ties broken by id only when all else is
# equal, which two units of a bank never are in practice).
_UNIT_ORDER = (
    MemoryUnit.created_at,
    MemoryUnit.session_id.asc().nulls_first(),
    MemoryUnit.source_seqs,
    MemoryUnit.content,
    MemoryUnit.tags,
    MemoryUnit.id,
)
_UNIT_COLUMNS = (
    "id content tags confidence importance status previous_status layer session_id source_seqs supersedes"
    " superseded_by merged_into merged_from valid_from valid_to status_changed_at created_at updated_at"
    " expires_at last_accessed_at confirmed_at access_count distiller identity_key metadata_ claims agent_id"
    " proposed_update_of"
)


def memories(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    columns = [*_columns(MemoryUnit, _UNIT_COLUMNS), _SOURCE_EVENTS.label("source_events")]
    stmt = select(*columns).where(MemoryUnit.bank_id == bank_id).order_by(*_UNIT_ORDER)
    return _stream(conn, stmt)


def entities(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    columns = [
        *_columns(Entity, "id name canonical_name metadata_ created_at updated_at"),
        Entity.type.label("entity_type"),
    ]
    stmt = (
        select(*columns)
        .where(Entity.bank_id == bank_id)
        .order_by(Entity.canonical_name, Entity.type, Entity.created_at, Entity.id)
    )
    return _stream(conn, stmt)


def links(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    stmt = (
        select(MemoryEntity.memory_id, MemoryEntity.entity_id)
        .join(MemoryUnit, MemoryUnit.id == MemoryEntity.memory_id)
        .join(Entity, Entity.id == MemoryEntity.entity_id)
        .where(MemoryEntity.bank_id == bank_id)
        .order_by(*_UNIT_ORDER, Entity.canonical_name, Entity.type, Entity.id)
    )
    return _stream(conn, stmt)


def relations(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    subject, obj = aliased(Entity), aliased(Entity)
    names = "id subject_id relation object_id memory_id confidence created_at"
    stmt = (
        select(*_columns(Relation, names))
        .join(subject, subject.id == Relation.subject_id)
        .join(obj, obj.id == Relation.object_id)
        .where(Relation.bank_id == bank_id)
        .order_by(
            subject.canonical_name,
            subject.type,
            Relation.relation,
            obj.canonical_name,
            obj.type,
            Relation.created_at,
            Relation.id,
        )
    )
    return _stream(conn, stmt)


def history(conn: AsyncConnection, bank_id: str) -> AsyncIterator[Sequence[Row[Any]]]:
    # An import inserts history in this order, so its new ids keep the order of the old ones.
    stmt = (
        select(*_columns(MemoryHistory, "memory_id action actor agent_id at details"))
        .where(MemoryHistory.bank_id == bank_id)
        .order_by(MemoryHistory.at, MemoryHistory.id)
    )
    return _stream(conn, stmt)


# --- import ---------------------------------------------------------------------------------------------

TABLES = {
    "bank": table_of(Bank),
    "session": table_of(ChatSession),
    "event": table_of(Event),
    "memory": table_of(MemoryUnit),
    "entity": table_of(Entity),
    "link": table_of(MemoryEntity),
    "relation": table_of(Relation),
    "history": table_of(MemoryHistory),
}


async def insert_rows(db: AsyncSession, kind: str, rows: list[dict[str, Any]]) -> None:
    """Insert rows of one line type (keyed by column name) in one multi-row statement."""
    if rows:
        await db.execute(insert(TABLES[kind]), rows)


async def event_ids(
    db: AsyncSession, bank_id: str, refs: list[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """The ids of the bank's events at these (session_id, seq) positions (those that exist)."""
    if not refs:
        return {}
    wanted = (
        select(column("s", type_=Event.session_id.type), column("q", type_=Event.seq.type))
        .select_from(text("unnest(CAST(:sessions AS text[]), CAST(:seqs AS integer[])) AS wanted(s, q)"))
        .subquery()
    )
    stmt = (
        select(Event.session_id, Event.seq, Event.id)
        .join(wanted, (wanted.c.s == Event.session_id) & (wanted.c.q == Event.seq))
        .where(Event.bank_id == bank_id)
    )
    params = {"sessions": [s for s, _ in refs], "seqs": [q for _, q in refs]}
    rows = (await db.execute(stmt, params)).all()
    return {(session_id, seq): id_ for session_id, seq, id_ in rows}


async def existing_units(db: AsyncSession, bank_id: str, ids: list[uuid.UUID]) -> set[uuid.UUID]:
    if not ids:
        return set()
    stmt = select(MemoryUnit.id).where(MemoryUnit.bank_id == bank_id, MemoryUnit.id.in_(ids))
    return set((await db.scalars(stmt)).all())


async def create_reference_table(db: AsyncSession) -> None:
    """A scratch table of the import's unit-to-unit references (supersedes, merges), which may point
    forward in the stream: checked once every unit is in. Dropped when the transaction ends."""
    await db.execute(
        text("CREATE TEMP TABLE import_unit_refs (line integer, field text, ref uuid) ON COMMIT DROP")
    )


async def add_references(db: AsyncSession, refs: list[dict[str, Any]]) -> None:
    if refs:
        await db.execute(
            text("INSERT INTO import_unit_refs (line, field, ref) VALUES (:line, :field, :ref)"), refs
        )


async def first_dangling_reference(db: AsyncSession, bank_id: str) -> tuple[int, str] | None:
    """The first (line, field) whose unit reference names no unit of the bank."""
    row = (
        await db.execute(
            text(
                "SELECT r.line, r.field FROM import_unit_refs r WHERE NOT EXISTS"
                " (SELECT 1 FROM memory_units m WHERE m.id = r.ref AND m.bank_id = :bank)"
                " ORDER BY r.line LIMIT 1"
            ),
            {"bank": bank_id},
        )
    ).first()
    return (int(row[0]), str(row[1])) if row else None


# The imported units that supersede another, by their distance from the first of their chain (a loop has no
# first: never reached)
_CHAIN_LEVELS = text("""
    WITH RECURSIVE chain(id, depth) AS (
        SELECT id, 0 FROM memory_units WHERE bank_id = :bank_id AND supersedes IS NULL
        UNION ALL
        SELECT u.id, c.depth + 1 FROM memory_units u JOIN chain c ON u.supersedes = c.id
        WHERE u.bank_id = :bank_id
    )
    SELECT array_agg(id) FROM chain WHERE depth > 0 GROUP BY depth ORDER BY depth
""")
_INHERIT = text("""
    UPDATE memory_units s SET search_text = left(s.search_text || ' ' || p.search_text,
                                                 length(s.search_text) + :extra)
    FROM memory_units p WHERE p.id = s.supersedes AND s.id = ANY(:ids)
""")


async def inherit_search_texts(db: AsyncSession, bank_id: str) -> None:
    """Each imported successor's searchable words take its predecessor's, first of a chain first, as
    resolution gave them (`units.inherit_search_text`): an elliptical value ("no, it's 18 Elm Road") is
    found by the words of the attribute it replaced after a round trip too."""
    for (ids,) in (await db.execute(_CHAIN_LEVELS, {"bank_id": bank_id})).all():
        await db.execute(_INHERIT, {"ids": list(ids), "extra": INHERITED_SEARCH_CHARS})
