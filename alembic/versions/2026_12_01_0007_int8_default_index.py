"""The default local model is now the int8 quantisation of all-MiniLM-L6-v2: its partial HNSW index.

Each model has a partial HNSW index on `embedding::vector(dim)` (the name `ensure_hnsw_index` gives it, so
a later `reembed` finds it there). `reembed` builds one for a model it moves a bank to, but a new
installation on the default never re-embeds: without this index its semantic channel would compute every
distance. The fp32 model's index (0001) stays: that model is still selectable.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MODEL, DIM = "all-MiniLM-L6-v2-int8", 384
INDEX = f"ix_memory_embeddings_hnsw_{DIM}_all_minilm_l6_v2_int8"


def upgrade() -> None:
    op.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} ON memory_embeddings "
        f"USING hnsw ((embedding::vector({DIM})) vector_cosine_ops) WHERE model = '{MODEL}'"
    )


def downgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
