"""Loading a bank: the units, their vectors, entities and relations COPY-loaded straight into the
app's tables (the secondary indexes dropped and rebuilt around it when allowed), then VACUUM ANALYZE;
and what PostgreSQL says about itself."""

from __future__ import annotations

import re
import time
import uuid
from datetime import datetime
from typing import Any

import numpy as np

from app.db.repositories.embeddings import index_name
from bench.harness.services import DIM, MODEL
from bench.query_latency.units import Unit

HNSW_INDEX = index_name(MODEL, DIM)  # the partial HNSW index of the model the services run
SEARCH_INDEX = "ix_memory_units_search"


def plain_dsn(url: str) -> str:
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


async def load_bank(
    url: str, bank_id: str, units: list[Unit], vectors: np.ndarray, rebuild_indexes: bool
) -> dict[str, Any]:
    import asyncpg
    from pgvector.asyncpg import register_vector

    from app.text import search_text

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        await register_vector(conn)
        async with conn.transaction():
            await conn.execute("SET LOCAL hindsight.allow_purge = 'on'")
            await conn.execute("DELETE FROM banks WHERE id = $1", bank_id)
        await conn.execute("INSERT INTO banks (id, name) VALUES ($1, $2)", bank_id, f"bench {len(units):,}")
        tables = ["memory_units", "memory_embeddings", "entities", "memory_entities", "relations"]
        dropped: list[tuple[str, str]] = []
        if rebuild_indexes:
            dropped = [
                (r["indexname"], r["indexdef"])
                for r in await conn.fetch(
                    """SELECT indexname, indexdef FROM pg_indexes i
                       WHERE schemaname = 'public' AND tablename = ANY($1::text[]) AND NOT EXISTS (
                           SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname,
                           i.indexname)::regclass)""",
                    tables,
                )
            ]
            for name, _ in dropped:
                await conn.execute(f'DROP INDEX "{name}"')

        ids = [uuid.uuid4() for _ in units]
        t = time.perf_counter()
        search = [search_text(u.content) for u in units]
        timings["search_text_s"] = time.perf_counter() - t
        t = time.perf_counter()
        columns = (
            "id bank_id content search_text tags confidence importance status layer session_id source_seqs "
            "source_event_ids valid_from created_at updated_at status_changed_at distiller identity_key "
            "embedding_model"
        ).split()

        def unit_row(i: int, u: Unit) -> tuple[Any, ...]:
            at = u.created_at
            head = (ids[i], bank_id, u.content, search[i], u.tags, u.confidence, u.importance, "active")
            tail: tuple[Any, ...] = (
                u.layer,
                u.session_id,
                [1 + i % 40],
                [],
                u.valid_from,
                at,
                at,
                at,
                "heuristic-1",
            )
            return (*head, *tail, f"bench:{i}", MODEL)

        await conn.copy_records_to_table(
            "memory_units", records=(unit_row(i, u) for i, u in enumerate(units)), columns=columns
        )
        timings["copy_units_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await conn.copy_records_to_table(
            "memory_embeddings",
            records=((ids[i], MODEL, bank_id, DIM, vectors[i], u.created_at) for i, u in enumerate(units)),
            columns=["memory_id", "model", "bank_id", "dim", "embedding", "created_at"],
        )
        timings["copy_embeddings_s"] = time.perf_counter() - t
        t = time.perf_counter()
        from app.db.repositories.graph import canonical

        entity_ids: dict[tuple[str, str], uuid.UUID] = {}
        entity_rows: list[tuple[Any, ...]] = []
        links: set[tuple[uuid.UUID, uuid.UUID]] = set()

        def entity(name: str, kind: str, at: datetime) -> uuid.UUID:
            key = (canonical(name), kind)
            if key not in entity_ids:
                entity_ids[key] = uuid.uuid4()
                entity_rows.append((entity_ids[key], bank_id, name, key[0], kind, at, at))
            return entity_ids[key]

        relation_rows: dict[tuple[uuid.UUID, str, uuid.UUID], tuple[Any, ...]] = {}
        for i, u in enumerate(units):
            for name, kind in u.entities:
                links.add((ids[i], entity(name, kind, u.created_at)))
            for (sname, stype), relation, (oname, otype) in u.relations:
                s, o = entity(sname, stype, u.created_at), entity(oname, otype, u.created_at)
                relation_rows.setdefault(
                    (s, relation, o), (uuid.uuid4(), bank_id, s, relation, o, ids[i], u.created_at)
                )
        await conn.copy_records_to_table(
            "entities",
            records=entity_rows,
            columns=["id", "bank_id", "name", "canonical_name", "type", "created_at", "updated_at"],
        )
        await conn.copy_records_to_table(
            "memory_entities",
            records=((m, e, bank_id) for m, e in links),
            columns=["memory_id", "entity_id", "bank_id"],
        )
        await conn.copy_records_to_table(
            "relations",
            records=list(relation_rows.values()),
            columns=["id", "bank_id", "subject_id", "relation", "object_id", "memory_id", "created_at"],
        )
        timings["copy_entities_s"] = time.perf_counter() - t
        if dropped:
            t = time.perf_counter()
            # Load-time only (the running server's own settings stay as they are): enough memory for the
            # HNSW graph to be built in memory.
            await conn.execute(f"SET maintenance_work_mem = '{index_memory(len(units))}'")
            for name, definition in dropped:
                t_index = time.perf_counter()
                await conn.execute(definition)
                timings[f"index_{name}_s"] = round(time.perf_counter() - t_index, 2)
            await conn.execute("RESET maintenance_work_mem")
            timings["indexes_s"] = time.perf_counter() - t
        t = time.perf_counter()
        for table in tables:
            await conn.execute(f"VACUUM (ANALYZE) {table}")
        timings["vacuum_analyze_s"] = time.perf_counter() - t
        counts = {
            "units": len(units),
            "entities": len(entity_rows),
            "memory_entities": len(links),
            "relations": len(relation_rows),
        }
        sizes = dict(
            await conn.fetch(
                """SELECT relname, pg_total_relation_size(oid) FROM pg_class
                   WHERE relname = ANY($1::text[]) AND relkind = 'r'""",
                tables,
            )
        )
        index_sizes = {
            r["relname"]: r["size"]
            for r in await conn.fetch(
                "SELECT relname, pg_relation_size(oid) AS size FROM pg_class WHERE relname = ANY($1::text[])",
                [HNSW_INDEX, SEARCH_INDEX],
            )
        }
    finally:
        await conn.close()
    timings["total_s"] = time.perf_counter() - t0
    return {
        "counts": counts,
        "rebuilt_indexes": [name for name, _ in dropped],
        "timings": {k: round(v, 2) for k, v in timings.items()},
        "table_bytes": sizes,
        "index_bytes": index_sizes,
    }


def index_memory(units: int) -> str:
    """maintenance_work_mem for the index builds: the HNSW graph in memory (~2 KB a vector at 384 dims)."""
    return f"{max(1, -(-units * 2 // 1_000_000))}GB"


async def active_units(url: str, bank_id: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(plain_dsn(url))
    try:
        query = "SELECT count(*) FROM memory_units WHERE bank_id = $1 AND status = 'active'"
        return int(await conn.fetchval(query, bank_id))
    finally:
        await conn.close()


async def server_facts(url: str) -> dict[str, Any]:
    import asyncpg

    conn = await asyncpg.connect(plain_dsn(url))
    try:
        names = (
            "server_version shared_buffers work_mem effective_cache_size maintenance_work_mem "
            "random_page_cost jit jit_above_cost max_parallel_workers_per_gather "
            "max_connections plan_cache_mode"
        ).split()
        facts = {n: await conn.fetchval(f"SHOW {n}") for n in names}
        facts["jit_available"] = await conn.fetchval("SELECT pg_jit_available()")
        facts["pgvector"] = await conn.fetchval(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        )
    finally:
        await conn.close()
    return facts
