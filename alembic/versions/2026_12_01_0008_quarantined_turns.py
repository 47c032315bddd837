"""`sessions.quarantined`: the turns a distillation skipped because the distiller failed on them.

A turn the distiller cannot read (a bug meeting hostile text) no longer holds back its session: it is
left out with the reason, the rest of its batch is distilled and the watermark moves past it. The list
(`[{seq, reason, job_id}]`, the newest 100) is what the session view shows.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "sessions",
        sa.Column("quarantined", postgresql.JSONB(), server_default="[]", nullable=False),
    )


def downgrade() -> None:
    op.drop_column("sessions", "quarantined")
