"""Webhooks: a bank's subscriptions (`webhooks`) and their outbox (`webhook_deliveries`).

A delivery row is written in the same transaction as the change it tells of, one per subscribed hook
(an `INSERT … SELECT` over the bank's hooks: nothing when the bank has none). The worker delivers a
hook's rows in `seq` order: a hook's oldest pending row is its head, and nothing after it is sent
before it has succeeded or failed for good.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")
# The event types a hook may subscribe to (app/webhooks/emit.py EVENT_TYPES).
EVENTS = (
    "ARRAY['memory.created','memory.superseded','memory.merged','memory.forgotten',"
    "'session.distilled','job.failed']::text[]"
)


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", pg.UUID(as_uuid=True), primary_key=True),
        sa.Column("bank_id", sa.String(128), sa.ForeignKey("banks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("events", pg.ARRAY(sa.Text), nullable=False),
        # The Standard Webhooks secret (`whsec_` + base64): HMAC signing needs the secret itself.
        sa.Column("secret", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.CheckConstraint(f"events <@ {EVENTS} AND cardinality(events) > 0", name="events"),
    )
    op.create_index("ix_webhooks_bank_id", "webhooks", ["bank_id"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("seq", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("id", pg.UUID(as_uuid=True), nullable=False, unique=True),
        sa.Column(
            "webhook_id", pg.UUID(as_uuid=True), sa.ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("bank_id", sa.String(128), sa.ForeignKey("banks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("event", sa.Text, nullable=False),
        sa.Column("payload", pg.JSONB, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True)),
        sa.Column("response_code", sa.Integer),
        sa.Column("latency_ms", sa.Float),
        sa.Column("error", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("status IN ('pending','succeeded','failed')", name="status"),
    )
    # A hook's deliveries in order (its list, newest first) and its head (the oldest pending one).
    op.create_index("ix_webhook_deliveries_webhook_seq", "webhook_deliveries", ["webhook_id", "seq"])
    op.create_index(
        "ix_webhook_deliveries_pending",
        "webhook_deliveries",
        ["webhook_id", "seq"],
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.create_index("ix_webhook_deliveries_bank_id", "webhook_deliveries", ["bank_id"])
    # Pruning past the retention: finished deliveries, oldest first.
    op.create_index(
        "ix_webhook_deliveries_finished",
        "webhook_deliveries",
        ["finished_at"],
        postgresql_where=sa.text("finished_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
