"""A synthetic bank of `units` units COPY-loaded straight into the app's tables, with what an export
carries besides: sessions, one source event per unit, supersede chains, entities, links, relations
and history."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

SESSION_TURNS = 500
TOPICS = ("budget", "travel", "food", "work", "family", "health", "music", "books", "sport", "garden")


def plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def seed_bank(database_url: str, bank_id: str, units: int) -> dict[str, int]:
    import asyncpg

    from app.text import search_text

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = max(1, units // SESSION_TURNS)
    ids = [uuid.uuid4() for _ in range(units)]
    entities = [uuid.uuid4() for _ in range(max(1, units // 10))]
    conn = await asyncpg.connect(plain_dsn(database_url))
    try:
        async with conn.transaction():
            await conn.execute("INSERT INTO banks (id, name) VALUES ($1, $2)", bank_id, f"bench {units:,}")
            await conn.copy_records_to_table(
                "sessions",
                columns=["bank_id", "session_id", "status", "last_seq", "distilled_seq", "created_at"],
                records=[
                    (
                        bank_id,
                        f"s{s}",
                        "closed",
                        SESSION_TURNS if s < sessions - 1 else units - s * SESSION_TURNS,
                        0,
                        t0,
                    )
                    for s in range(sessions)
                ],
            )

            def place(i: int) -> tuple[str, int, datetime]:
                s = min(i // SESSION_TURNS, sessions - 1)
                return f"s{s}", i - s * SESSION_TURNS + 1, t0 + timedelta(minutes=i)

            texts = [
                f"Note {i}: the user talked about {TOPICS[i % len(TOPICS)]} with item {i % 997}."
                for i in range(units)
            ]
            await conn.copy_records_to_table(
                "events",
                columns=[
                    "bank_id",
                    "session_id",
                    "seq",
                    "role",
                    "content",
                    "occurred_at",
                    "metadata",
                    "created_at",
                ],
                records=[
                    (bank_id, *place(i)[:2], "user", texts[i], place(i)[2], "{}", place(i)[2])
                    for i in range(units)
                ],
            )

            def unit(i: int) -> tuple[Any, ...]:
                session, seq, at = place(i)
                superseded = i % 10 == 0 and i + 1 < units
                status = "superseded" if superseded else "active"
                return (
                    ids[i], bank_id, texts[i], search_text(texts[i]), [f"fact.{TOPICS[i % len(TOPICS)]}"],
                    0.8, 0.5, status, "episodic", session, [seq], at, at, at, at,
                    "heuristic-bench", f"bench:{i}", json.dumps({"n": i}),
                    ids[i - 1] if i % 10 == 1 else None, ids[i + 1] if superseded else None,
                )  # fmt: skip

            await conn.copy_records_to_table(
                "memory_units",
                columns=(
                    "id bank_id content search_text tags confidence importance status layer session_id "
                    "source_seqs valid_from created_at updated_at status_changed_at distiller identity_key "
                    "metadata supersedes superseded_by"
                ).split(),
                records=[unit(i) for i in range(units)],
            )
            await conn.execute(
                "UPDATE memory_units m SET source_event_ids = ARRAY[e.id] FROM events e"
                " WHERE m.bank_id = $1 AND e.bank_id = $1 AND e.session_id = m.session_id"
                " AND e.seq = m.source_seqs[1]",
                bank_id,
            )
            await conn.copy_records_to_table(
                "entities",
                columns=["id", "bank_id", "name", "canonical_name", "type", "created_at", "updated_at"],
                records=[
                    (e, bank_id, f"Item {j}", f"item {j}", "product", t0, t0) for j, e in enumerate(entities)
                ],
            )
            await conn.copy_records_to_table(
                "memory_entities",
                columns=["memory_id", "entity_id", "bank_id"],
                records=[(ids[i], entities[i % len(entities)], bank_id) for i in range(units)],
            )
            pairs = len(entities) // 2
            await conn.copy_records_to_table(
                "relations",
                columns=[
                    "id",
                    "bank_id",
                    "subject_id",
                    "relation",
                    "object_id",
                    "memory_id",
                    "confidence",
                    "created_at",
                ],
                records=[
                    (
                        uuid.uuid4(),
                        bank_id,
                        entities[2 * j],
                        "related_to",
                        entities[2 * j + 1],
                        ids[2 * j],
                        0.8,
                        t0,
                    )
                    for j in range(pairs)
                ],
            )
            history = []
            for i in range(units):
                at = place(i)[2]
                history.append((bank_id, ids[i], "created", "distiller", at, json.dumps({"to": "pending"})))
                history.append(
                    (
                        bank_id,
                        ids[i],
                        "activated",
                        "resolver",
                        at,
                        json.dumps({"from": "pending", "to": "active"}),
                    )
                )
            await conn.copy_records_to_table(
                "memory_history",
                columns=["bank_id", "memory_id", "action", "actor", "at", "details"],
                records=history,
            )
        await conn.execute("ANALYZE")
    finally:
        await conn.close()
    return {
        "units": units,
        "sessions": sessions,
        "events": units,
        "entities": len(entities),
        "relations": pairs,
    }


async def count_units(database_url: str, bank_id: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(plain_dsn(database_url))
    try:
        return int(await conn.fetchval("SELECT count(*) FROM memory_units WHERE bank_id = $1", bank_id))
    finally:
        await conn.close()
