from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg2
from sqlalchemy import make_url

from app.migrate import downgrade, upgrade
from tests.conftest import Stack

TABLES = {
    "banks",
    "api_keys",
    "sessions",
    "events",
    "memory_units",
    "memory_embeddings",
    "entities",
    "memory_entities",
    "relations",
    "memory_history",
    "jobs",
    "query_log",
}


def _connect(url: str) -> Any:
    u = make_url(url)
    return psycopg2.connect(host=u.host, port=u.port, user=u.username, password=u.password, dbname=u.database)


def _tables(url: str) -> set[str]:
    with _connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {row[0] for row in cur.fetchall()} - {"alembic_version"}


def _indexes(url: str) -> dict[str, str]:
    with _connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'")
        return dict(cur.fetchall())


async def test_upgrade_downgrade_upgrade_on_a_fresh_database(stack: Stack) -> None:
    name = f"hindsight_migrations_{uuid.uuid4().hex[:8]}"
    admin = _connect(stack.database_url)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    url = make_url(stack.database_url).set(database=name).render_as_string(hide_password=False)
    try:
        await asyncio.to_thread(upgrade, url)
        assert _tables(url) == TABLES
        indexes = _indexes(url)
        assert "USING hnsw" in indexes["ix_memory_embeddings_hnsw_384_default"]
        assert "vector_cosine_ops" in indexes["ix_memory_embeddings_hnsw_384_default"]
        assert "USING gin (search)" in indexes["ix_memory_units_search"]
        assert "USING gin (tags)" in indexes["ix_memory_units_tags"]
        assert "WHERE (status = 'active'::text)" in indexes["ix_memory_units_active_created"]

        await asyncio.to_thread(downgrade, url, "base")
        assert _tables(url) == set()

        await asyncio.to_thread(upgrade, url)
        assert _tables(url) == TABLES
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


async def test_schema_checks_refuse_bad_rows(stack: Stack) -> None:
    with _connect(stack.database_url) as conn, conn.cursor() as cur:
        bank = f"chk-{uuid.uuid4().hex[:8]}"
        cur.execute("INSERT INTO banks (id) VALUES (%s)", (bank,))
        for column, value in (("status", "'forgotten'"), ("layer", "'L9'"), ("confidence", "1.5")):
            cur.execute("SAVEPOINT s")
            try:
                cur.execute(
                    f"INSERT INTO memory_units (id, bank_id, content, {column}) "
                    f"VALUES (gen_random_uuid(), %s, 'x', {value})",
                    (bank,),
                )
            except psycopg2.errors.CheckViolation:
                cur.execute("ROLLBACK TO SAVEPOINT s")
            else:
                raise AssertionError(f"{column}={value} was accepted")
        cur.execute(
            "INSERT INTO memory_units (id, bank_id, content, search_text) "
            "VALUES (gen_random_uuid(), %s, 'x', 'Budgets were raised') RETURNING search::text",
            (bank,),
        )
        assert cur.fetchone()[0] == "'budget':1 'rais':3"
        conn.rollback()
