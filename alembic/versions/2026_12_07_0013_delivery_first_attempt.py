"""A webhook delivery's first attempt: its day of retries counts from it, not from when the event was
written, since a hook's deliveries go out in order and a later one may wait behind an earlier one for a day."""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("webhook_deliveries", sa.Column("first_attempt_at", sa.DateTime(timezone=True)))
    # (a delivery already tried counts from its last attempt: no record of its first)
    op.execute("UPDATE webhook_deliveries SET first_attempt_at = last_attempt_at WHERE attempts > 0")


def downgrade() -> None:
    op.drop_column("webhook_deliveries", "first_attempt_at")
