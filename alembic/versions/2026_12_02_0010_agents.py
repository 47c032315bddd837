"""Memory shared by several agents (docs/guides/shared-memory.md).

- `agent_id` on keys (the agent a key acts as), events, units and history rows (who wrote or did it);
- key scopes `propose` (writes wait as `proposed` units) and `review` (accept or reject them);
- unit statuses `proposed` and `rejected`; `proposed_update_of`: the unit a proposed PATCH would
  supersede once accepted;
- `events.proposed`: turns appended with a propose-only key, whose distilled units wait as proposed.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUSES = "('pending','active','superseded','merged','expired','archived','deleted')"
NEW_STATUSES = "('pending','active','superseded','merged','expired','archived','deleted','proposed','rejected')"


def _unit_statuses(statuses: str) -> None:
    op.execute("ALTER TABLE memory_units DROP CONSTRAINT ck_memory_units_status")
    op.execute("ALTER TABLE memory_units DROP CONSTRAINT ck_memory_units_previous_status")
    op.execute(f"ALTER TABLE memory_units ADD CONSTRAINT ck_memory_units_status CHECK (status IN {statuses})")
    op.execute(
        "ALTER TABLE memory_units ADD CONSTRAINT ck_memory_units_previous_status"
        f" CHECK (previous_status IS NULL OR previous_status IN {statuses})"
    )


def _key_scopes(scopes: str) -> None:
    op.execute("ALTER TABLE api_keys DROP CONSTRAINT ck_api_keys_scopes")
    op.execute(f"ALTER TABLE api_keys ADD CONSTRAINT ck_api_keys_scopes CHECK (scopes <@ ARRAY[{scopes}]::text[])")


def upgrade() -> None:
    op.add_column("api_keys", sa.Column("agent_id", sa.Text(), nullable=True))
    _key_scopes("'read','write','propose','review'")
    op.add_column("events", sa.Column("agent_id", sa.Text(), nullable=True))
    op.add_column("events", sa.Column("proposed", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("memory_units", sa.Column("agent_id", sa.Text(), nullable=True))
    op.add_column("memory_units", sa.Column("proposed_update_of", postgresql.UUID(as_uuid=True), nullable=True))
    _unit_statuses(NEW_STATUSES)
    op.add_column("memory_history", sa.Column("agent_id", sa.Text(), nullable=True))


def downgrade() -> None:
    # What the older schema cannot hold: proposals and refusals become deleted units (their history
    # rows stay), and keys lose the two new scopes.
    op.execute("UPDATE memory_units SET status = 'deleted' WHERE status IN ('proposed', 'rejected')")
    op.execute(
        "UPDATE memory_units SET previous_status = NULL WHERE previous_status IN ('proposed', 'rejected')"
    )
    op.drop_column("memory_history", "agent_id")
    _unit_statuses(OLD_STATUSES)
    op.drop_column("memory_units", "proposed_update_of")
    op.drop_column("memory_units", "agent_id")
    op.drop_column("events", "proposed")
    op.drop_column("events", "agent_id")
    op.execute("UPDATE api_keys SET scopes = array_remove(array_remove(scopes, 'propose'), 'review')")
    _key_scopes("'read','write'")
    op.drop_column("api_keys", "agent_id")
