"""The LLM ledger outlives the banks it charged: `llm_calls.bank_id` names the bank without a foreign key,
so deleting a bank (or deleting and creating it again) refunds nothing against the global budget or the
bank's own for the day, and a call recorded while its bank is deleted is still written."""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FK = "fk_llm_calls_bank_id_banks"


def upgrade() -> None:
    op.drop_constraint(FK, "llm_calls", type_="foreignkey")


def downgrade() -> None:
    op.execute("DELETE FROM llm_calls WHERE bank_id IS NOT NULL AND bank_id NOT IN (SELECT id FROM banks)")
    op.create_foreign_key(FK, "llm_calls", "banks", ["bank_id"], ["id"], ondelete="CASCADE")
