"""Bank configs within the bounds their use can hold.

`idle_distill_seconds`, `ttl_days` values and `min_score` now have upper bounds (app/schemas/banks.py):
a bank key could store 10**18 seconds or 1e9 days, and every maintenance sweep then failed for all banks
on an out-of-range interval. Values stored before the bounds are clamped to them, so every stored config
validates again. The downgrade keeps the clamped values (the bounds only narrow what was absurd).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MAX_IDLE_SECONDS = 366 * 86400
MAX_TTL_DAYS = 36_600
MAX_MIN_SCORE = 1000


def upgrade() -> None:
    for key, bound in (("idle_distill_seconds", MAX_IDLE_SECONDS), ("min_score", MAX_MIN_SCORE)):
        op.execute(f"""
            UPDATE banks SET config = jsonb_set(config, '{{{key}}}', to_jsonb({bound}))
            WHERE jsonb_typeof(config->'{key}') = 'number' AND (config->>'{key}')::numeric > {bound}
        """)
    op.execute(f"""
        UPDATE banks SET config = jsonb_set(config, '{{ttl_days}}', (
            SELECT jsonb_object_agg(k, CASE
                WHEN jsonb_typeof(v) = 'number' AND (v #>> '{{}}')::numeric > {MAX_TTL_DAYS}
                THEN to_jsonb({MAX_TTL_DAYS}) ELSE v END)
            FROM jsonb_each(config->'ttl_days') AS e(k, v)))
        WHERE jsonb_typeof(config->'ttl_days') = 'object' AND EXISTS (
            SELECT 1 FROM jsonb_each(config->'ttl_days') AS e(k, v)
            WHERE jsonb_typeof(v) = 'number' AND (v #>> '{{}}')::numeric > {MAX_TTL_DAYS})
    """)


def downgrade() -> None:
    pass  # the clamped values stay valid under the older, unbounded schema
