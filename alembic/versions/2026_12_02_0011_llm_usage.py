"""The LLM ledger (`llm_calls`: every request to the LLM with its operation, model, tokens, latency,
outcome, bank and job), the days a bank's budget ran out (`llm_budget_exhaustions`: the
`budget.exhausted` webhook event fires once a day), and that event among those a hook may subscribe to.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")
EVENTS = (
    "'memory.created','memory.superseded','memory.merged','memory.forgotten','session.distilled','job.failed'"
)


def _events_check(events: str) -> None:
    op.drop_constraint(op.f("ck_webhooks_events"), "webhooks", type_="check")
    op.create_check_constraint(
        op.f("ck_webhooks_events"), "webhooks", f"events <@ ARRAY[{events}]::text[] AND cardinality(events) > 0"
    )


def upgrade() -> None:
    op.create_table(
        "llm_calls",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("bank_id", sa.String(128), sa.ForeignKey("banks.id", ondelete="CASCADE")),
        sa.Column("job_id", pg.UUID(as_uuid=True)),
        sa.Column("operation", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("estimated", sa.Boolean, nullable=False),
        sa.Column("latency_ms", sa.Integer, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.CheckConstraint("prompt_tokens >= 0 AND completion_tokens >= 0", name="tokens"),
    )
    # A bank's calls in a window (its usage, its budget), and everyone's (the admin's usage, the
    # global budget).
    op.create_index("ix_llm_calls_bank_created", "llm_calls", ["bank_id", "created_at"])
    op.create_index("ix_llm_calls_created", "llm_calls", ["created_at"])
    op.create_table(
        "llm_budget_exhaustions",
        sa.Column(
            "bank_id", sa.String(128), sa.ForeignKey("banks.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("budget", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.CheckConstraint("budget IN ('bank','global')", name="budget"),
    )
    _events_check(EVENTS + ",'budget.exhausted'")


def downgrade() -> None:
    op.execute("DELETE FROM webhook_deliveries WHERE event = 'budget.exhausted'")
    op.execute("UPDATE webhooks SET events = array_remove(events, 'budget.exhausted')")
    op.execute("DELETE FROM webhooks WHERE cardinality(events) = 0")
    _events_check(EVENTS)
    op.drop_table("llm_budget_exhaustions")
    op.drop_index("ix_llm_calls_created", table_name="llm_calls")
    op.drop_index("ix_llm_calls_bank_created", table_name="llm_calls")
    op.drop_table("llm_calls")
