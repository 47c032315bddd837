"""Initial schema: the whole product (banks to query log).

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql as pg

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")
EMPTY_JSON = sa.text("'{}'::jsonb")
EMPTY_ARRAY = sa.text("'{}'")
MEMORY_STATUSES = "('pending','active','superseded','merged','expired','archived','deleted')"
JOB_STATUSES = "('queued','running','succeeded','failed')"
# The default local model; other models get their partial HNSW index at run time
# (app.db.repositories.embeddings.ensure_embedding_index), with no schema change.
DEFAULT_MODEL, DEFAULT_DIM = "all-MiniLM-L6-v2", 384


def _bank_fk() -> sa.ForeignKey:
    return sa.ForeignKey("banks.id", ondelete="CASCADE", name=None)


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    op.create_table(
        "banks",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("name", sa.Text),
        sa.Column("config", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    )

    op.create_table(
        "api_keys",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("name", sa.Text),
        sa.Column("key_hash", sa.Text, nullable=False, unique=True),
        sa.Column("key_prefix", sa.Text, nullable=False),
        sa.Column("scopes", pg.ARRAY(sa.Text), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("scopes <@ ARRAY['read','write']::text[]", name="scopes"),
    )
    op.create_index("ix_api_keys_bank_id", "api_keys", ["bank_id"])

    op.create_table(
        "sessions",
        sa.Column("bank_id", sa.String(128), _bank_fk(), primary_key=True),
        sa.Column("session_id", sa.String(128), primary_key=True),
        sa.Column("status", sa.Text, nullable=False, server_default="open"),
        sa.Column("last_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("distilled_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("metadata", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("last_event_at", sa.DateTime(timezone=True)),
        sa.Column("closed_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("status IN ('open','closed')", name="status"),
        sa.CheckConstraint("distilled_seq >= 0 AND distilled_seq <= last_seq", name="watermarks"),
    )
    # The sweep looks for sessions with an undistilled tail.
    op.create_index(
        "ix_sessions_undistilled", "sessions", ["last_event_at"],
        postgresql_where=sa.text("distilled_seq < last_seq"),
    )

    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("bank_id", sa.String(128), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("speaker", sa.Text),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("external_id", sa.Text),
        sa.Column("metadata", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.ForeignKeyConstraint(
            ["bank_id", "session_id"], ["sessions.bank_id", "sessions.session_id"], ondelete="CASCADE"
        ),
        sa.UniqueConstraint("bank_id", "session_id", "seq", name="uq_events_bank_session_seq"),
        sa.UniqueConstraint(
            "bank_id", "session_id", "external_id", name="uq_events_bank_session_external_id"
        ),
        sa.CheckConstraint("role IN ('user','assistant','system','tool')", name="role"),
        sa.CheckConstraint("seq > 0", name="seq_positive"),
    )
    op.create_index("ix_events_bank_created_at", "events", ["bank_id", "created_at"])
    # Append-only: UPDATE is always refused; DELETE only inside a bank purge, which sets
    # `hindsight.allow_purge` for its own transaction.
    op.execute("""
        CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' AND current_setting('hindsight.allow_purge', true) = 'on' THEN
                RETURN OLD;
            END IF;
            RAISE EXCEPTION 'events are append-only (% refused)', TG_OP
                USING ERRCODE = 'insufficient_privilege';
        END $$
    """)
    op.execute("""
        CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION events_append_only()
    """)
    op.execute("""
        CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()
    """)

    op.create_table(
        "memory_units",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("search_text", sa.Text, nullable=False, server_default=""),
        sa.Column(
            "search", pg.TSVECTOR,
            sa.Computed("to_tsvector('english'::regconfig, search_text)", persisted=True),
        ),
        sa.Column("tags", pg.ARRAY(sa.Text), nullable=False, server_default=EMPTY_ARRAY),
        sa.Column("confidence", sa.Float, nullable=False, server_default="0.8"),
        sa.Column("importance", sa.Float, nullable=False, server_default="0.5"),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("previous_status", sa.Text),
        sa.Column("layer", sa.Text, nullable=False, server_default="episodic"),
        sa.Column("session_id", sa.Text),
        sa.Column("source_seqs", pg.ARRAY(sa.Integer), nullable=False, server_default=EMPTY_ARRAY),
        sa.Column("source_event_ids", pg.ARRAY(sa.BigInteger), nullable=False, server_default=EMPTY_ARRAY),
        sa.Column("supersedes", pg.UUID(as_uuid=True)),
        sa.Column("superseded_by", pg.UUID(as_uuid=True)),
        sa.Column("merged_into", pg.UUID(as_uuid=True)),
        sa.Column("merged_from", pg.ARRAY(pg.UUID(as_uuid=True)), nullable=False, server_default=EMPTY_ARRAY),
        sa.Column("valid_from", sa.DateTime(timezone=True)),
        sa.Column("valid_to", sa.DateTime(timezone=True)),
        sa.Column("status_changed_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("expires_at", sa.DateTime(timezone=True)),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True)),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("distiller", sa.Text),
        sa.Column("identity_key", sa.Text),
        sa.Column("embedding_model", sa.Text),
        sa.Column("metadata", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.CheckConstraint(f"status IN {MEMORY_STATUSES}", name="status"),
        sa.CheckConstraint(f"previous_status IS NULL OR previous_status IN {MEMORY_STATUSES}", name="previous_status"),
        sa.CheckConstraint("layer IN ('episodic','semantic')", name="layer"),
        sa.CheckConstraint("confidence BETWEEN 0 AND 1", name="confidence"),
        sa.CheckConstraint("importance BETWEEN 0 AND 1", name="importance"),
        sa.CheckConstraint("valid_to IS NULL OR valid_from IS NULL OR valid_to >= valid_from", name="valid_range"),
        sa.UniqueConstraint("bank_id", "identity_key", name="uq_memory_units_bank_identity_key"),
    )
    op.create_index("ix_memory_units_bank_status", "memory_units", ["bank_id", "status"])
    op.create_index("ix_memory_units_bank_session", "memory_units", ["bank_id", "session_id"])
    op.create_index("ix_memory_units_tags", "memory_units", ["tags"], postgresql_using="gin")
    op.create_index("ix_memory_units_search", "memory_units", ["search"], postgresql_using="gin")
    active = sa.text("status = 'active'")
    op.create_index("ix_memory_units_active_created", "memory_units", ["bank_id", sa.text("created_at DESC")],
                    postgresql_where=active)
    op.create_index("ix_memory_units_active_valid_from", "memory_units", ["bank_id", "valid_from"],
                    postgresql_where=active)
    op.create_index("ix_memory_units_active_expires", "memory_units", ["expires_at"],
                    postgresql_where=sa.text("status = 'active' AND expires_at IS NOT NULL"))
    op.create_index("ix_memory_units_pending", "memory_units", ["bank_id", "created_at"],
                    postgresql_where=sa.text("status = 'pending'"))

    op.create_table(
        "memory_embeddings",
        sa.Column("memory_id", pg.UUID(as_uuid=True),
                  sa.ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model", sa.Text, primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("embedding", Vector(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.CheckConstraint("vector_dims(embedding) = dim", name="dim"),
    )
    op.create_index("ix_memory_embeddings_bank_model", "memory_embeddings", ["bank_id", "model"])
    op.execute(
        f"CREATE INDEX ix_memory_embeddings_hnsw_{DEFAULT_DIM}_default ON memory_embeddings "
        f"USING hnsw ((embedding::vector({DEFAULT_DIM})) vector_cosine_ops) "
        f"WHERE model = '{DEFAULT_MODEL}'"
    )

    op.create_table(
        "entities",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("canonical_name", sa.Text, nullable=False),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("metadata", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.UniqueConstraint("bank_id", "canonical_name", "type", name="uq_entities_bank_name_type"),
    )

    op.create_table(
        "memory_entities",
        sa.Column("memory_id", pg.UUID(as_uuid=True),
                  sa.ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("entity_id", pg.UUID(as_uuid=True),
                  sa.ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
    )
    op.create_index("ix_memory_entities_entity", "memory_entities", ["entity_id"])

    op.create_table(
        "relations",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("subject_id", pg.UUID(as_uuid=True),
                  sa.ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
        sa.Column("relation", sa.Text, nullable=False),
        sa.Column("object_id", pg.UUID(as_uuid=True),
                  sa.ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
        sa.Column("memory_id", pg.UUID(as_uuid=True), sa.ForeignKey("memory_units.id", ondelete="SET NULL")),
        sa.Column("confidence", sa.Float, nullable=False, server_default="0.8"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.UniqueConstraint("bank_id", "subject_id", "relation", "object_id", name="uq_relations_triple"),
    )
    op.create_index("ix_relations_object", "relations", ["object_id"])

    op.create_table(
        "memory_history",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("memory_id", pg.UUID(as_uuid=True), nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("details", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
    )
    op.create_index("ix_memory_history_memory", "memory_history", ["memory_id", "at"])
    op.create_index("ix_memory_history_bank_at", "memory_history", ["bank_id", "at"])

    op.create_table(
        "jobs",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk()),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="queued"),
        sa.Column("dedupe_key", sa.Text),
        sa.Column("params", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("progress", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("result", pg.JSONB),
        sa.Column("error", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("max_attempts", sa.Integer, nullable=False, server_default="3"),
        sa.Column("deadline_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("enqueued_at", sa.DateTime(timezone=True)),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint(f"status IN {JOB_STATUSES}", name="status"),
    )
    op.create_index("ix_jobs_bank_created", "jobs", ["bank_id", "created_at"])
    op.create_index("ix_jobs_unfinished", "jobs", ["status", "created_at"],
                    postgresql_where=sa.text("status IN ('queued','running')"))
    # At most one unfinished job per dedupe key (e.g. one distillation per session at a time).
    op.create_index("uq_jobs_dedupe_unfinished", "jobs", ["dedupe_key"], unique=True,
                    postgresql_where=sa.text("dedupe_key IS NOT NULL AND status IN ('queued','running')"))

    op.create_table(
        "query_log",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("bank_id", sa.String(128), _bank_fk(), nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("params", pg.JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("result_ids", pg.ARRAY(pg.UUID(as_uuid=True)), nullable=False, server_default=EMPTY_ARRAY),
        sa.Column("took_ms", sa.Float, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    )
    op.create_index("ix_query_log_bank_created", "query_log", ["bank_id", "created_at"])


def downgrade() -> None:
    for table in ("query_log", "jobs", "memory_history", "relations", "memory_entities", "entities",
                  "memory_embeddings", "memory_units"):
        op.drop_table(table)
    op.execute("DROP TRIGGER IF EXISTS events_no_truncate ON events")
    op.execute("DROP TRIGGER IF EXISTS events_append_only ON events")
    op.drop_table("events")
    op.execute("DROP FUNCTION IF EXISTS events_append_only()")
    for table in ("sessions", "api_keys", "banks"):
        op.drop_table(table)
    # The vector extension is left in place: other schemas in the database may use it.
