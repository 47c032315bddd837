from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg2
import pytest
from sqlalchemy import make_url

from app.config import get_settings
from app.db.repositories.embeddings import index_name
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
    "webhooks",
    "webhook_deliveries",
    "llm_calls",
    "llm_budget_exhaustions",
}


@pytest.fixture
def scratch_url(stack: Stack) -> Iterator[str]:
    """The URL of a new, empty database on the test server, dropped afterwards."""
    name = f"hindsight_migrations_{uuid.uuid4().hex[:8]}"
    admin = _connect(stack.database_url)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(stack.database_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


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


async def test_upgrade_downgrade_upgrade_on_a_fresh_database(scratch_url: str) -> None:
    await asyncio.to_thread(upgrade, scratch_url)
    assert _tables(scratch_url) == TABLES
    indexes = _indexes(scratch_url)
    assert "USING hnsw" in indexes["ix_memory_embeddings_hnsw_384_default"]
    assert "vector_cosine_ops" in indexes["ix_memory_embeddings_hnsw_384_default"]
    # the default model's own index, so a new installation's semantic channel never scans every vector
    default_model = indexes[index_name(get_settings().embedding_model, 384)]
    assert "USING hnsw" in default_model
    assert f"model = '{get_settings().embedding_model}'" in default_model
    assert "USING gin (search)" in indexes["ix_memory_units_search"]
    assert "USING gin (tag_paths)" in indexes["ix_memory_units_tag_paths"]
    assert "COALESCE(valid_from, created_at) DESC" in indexes["ix_memory_units_recallable_recent"]
    assert "WHERE (status = 'active'::text)" in indexes["ix_memory_units_active_created"]
    # a past window's units, active and archived, are found by index (not a read of the whole bank)
    recallable = "WHERE (status = ANY (ARRAY['active'::text, 'archived'::text]))"
    assert recallable in indexes["ix_memory_units_recallable_valid_from"]
    assert recallable in indexes["ix_memory_units_recallable_recent"]

    await asyncio.to_thread(downgrade, scratch_url, "base")
    assert _tables(scratch_url) == set()

    await asyncio.to_thread(upgrade, scratch_url)
    assert _tables(scratch_url) == TABLES


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


def test_tag_paths_lists_every_tag_with_its_prefixes(stack: Stack) -> None:
    with _connect(stack.database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT tag_paths(ARRAY['constraint.budget.monthly', 'topic', 'constraint.time'])")
        assert sorted(cur.fetchone()[0]) == [
            "constraint",
            "constraint.budget",
            "constraint.budget.monthly",
            "constraint.time",
            "topic",
        ]
        cur.execute(
            "SELECT tag_paths(ARRAY[]::text[]) = '{}',"
            " tag_paths(ARRAY['constraint.bud']) && ARRAY['constraint.budget']"
        )
        assert cur.fetchone() == (True, False)


def test_date_span_is_the_days_a_date_entity_names(stack: Stack) -> None:
    cases = {
        "2024-03-14": "[2024-03-14,2024-03-15)",
        "2024-03": "[2024-03-01,2024-04-01)",
        "2024": "[2024-01-01,2025-01-01)",
        "the week of 2024-03-11": "[2024-03-11,2024-03-18)",
        "2024-13": None,  # not a date: no span, and the row is still stored
        "next spring": None,
    }
    with _connect(stack.database_url) as conn, conn.cursor() as cur:
        for name, span in cases.items():
            cur.execute("SELECT date_span(%s)::text", (name,))
            assert cur.fetchone()[0] == span, name


async def test_configs_stored_before_the_bounds_are_clamped(scratch_url: str) -> None:
    from app.banks.config import MAX_IDLE_SECONDS, MAX_TTL_DAYS, BankConfig

    await asyncio.to_thread(upgrade, scratch_url, "0002")
    with _connect(scratch_url) as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO banks (id, config) VALUES ('absurd', %s), ('sane', %s)",
            (
                '{"idle_distill_seconds": 1000000000000000000, "min_score": 1e300,'
                ' "ttl_days": {"episode": 1e9, "fact": 365, "task_state": null}}',
                '{"idle_distill_seconds": 600, "ttl_days": {"episode": 30}}',
            ),
        )
    await asyncio.to_thread(upgrade, scratch_url)
    with _connect(scratch_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, config FROM banks ORDER BY id")
        configs = dict(cur.fetchall())
    assert configs["absurd"]["idle_distill_seconds"] == MAX_IDLE_SECONDS
    assert configs["absurd"]["ttl_days"] == {"episode": MAX_TTL_DAYS, "fact": 365, "task_state": None}
    assert configs["sane"] == {"idle_distill_seconds": 600, "ttl_days": {"episode": 30}}
    for config in configs.values():
        BankConfig.model_validate(config)  # every stored config validates again
