"""`memory_units.confirmed_at`: when the bank last heard a unit again (a merge added a source).

Forgetting ages a unit in bank time — from when the bank learned it, last used it (`last_accessed_at`)
or last had it confirmed (this column) — not from when the thing happened (`valid_from`), so an import or
a backfill of old conversations starts fresh.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory_units", sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("memory_units", "confirmed_at")
