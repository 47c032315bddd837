"""Units carry their claims (docs/architecture.md, "Claims and conflict detection").

`claims`: every claim the unit's content states, in full (the form resolution compares; NULL until the
unit's claims are read, `[]` when it states none). `claim_subject` / `claim_attribute`: the unit's main
claim, indexed with the bank for active units, so resolution finds the units holding the same attribute
without a scan. A GIN index on `claims` finds a compound unit by any of its claims.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory_units", sa.Column("claims", postgresql.JSONB(), nullable=True))
    op.add_column("memory_units", sa.Column("claim_subject", sa.Text(), nullable=True))
    op.add_column("memory_units", sa.Column("claim_attribute", sa.Text(), nullable=True))
    op.create_index(
        "ix_memory_units_active_claim",
        "memory_units",
        ["bank_id", "claim_subject", "claim_attribute"],
        postgresql_where=sa.text("status = 'active' AND claim_attribute IS NOT NULL"),
    )
    op.create_index(
        "ix_memory_units_active_claims",
        "memory_units",
        ["claims"],
        postgresql_using="gin",
        postgresql_ops={"claims": "jsonb_path_ops"},
        postgresql_where=sa.text("status = 'active' AND claims IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_memory_units_active_claims", table_name="memory_units")
    op.drop_index("ix_memory_units_active_claim", table_name="memory_units")
    op.drop_column("memory_units", "claim_attribute")
    op.drop_column("memory_units", "claim_subject")
    op.drop_column("memory_units", "claims")
