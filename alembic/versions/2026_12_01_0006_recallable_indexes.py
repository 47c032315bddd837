"""The time-ordered indexes of memory units cover archived units too.

A question about a past window reaches what maintenance archived of it (`status IN ('active',
'archived')`), which the `status = 'active'` partial indexes cannot answer: at 100k units every
time-filtered query read the whole bank (a parallel sequential scan, 30–90 ms). The indexes now hold
the recallable units, active and archived; an active-only condition implies theirs, so the usual
queries use them as before (archived units are few, and filtered out on the way).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RECALLABLE = "status IN ('active', 'archived')"


def _replace(predicate: str, suffix: str, drop: str) -> None:
    op.drop_index(f"ix_memory_units_{drop}_valid_from", table_name="memory_units")
    op.drop_index(f"ix_memory_units_{drop}_recent", table_name="memory_units")
    op.execute(
        f"CREATE INDEX ix_memory_units_{suffix}_valid_from ON memory_units (bank_id, valid_from)"
        f" WHERE {predicate}"
    )
    op.execute(
        f"CREATE INDEX ix_memory_units_{suffix}_recent ON memory_units"
        f" (bank_id, coalesce(valid_from, created_at) DESC) WHERE {predicate}"
    )


def upgrade() -> None:
    _replace(RECALLABLE, "recallable", "active")


def downgrade() -> None:
    _replace("status = 'active'", "active", "recallable")
