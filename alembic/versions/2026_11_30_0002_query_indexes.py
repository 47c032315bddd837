"""Indexes for the query channels at 100k+ units per bank.

- Tags: the stored column `tag_paths` is every tag with each of its dotted prefixes ("constraint.budget"
  gives "constraint" and "constraint.budget"), so "this tag or a tag under it" is `tag_paths && :tags`,
  answered by a GIN index (or checked cheaply row by row) instead of a LIKE per tag and row.
- Temporal and tag channels: the newest active units first, by `coalesce(valid_from, created_at)`.
- Date entities ("2024-03-14", "2024-03", "2024", "the week of 2024-03-11") keep the span of days they
  name in `entities.date_span`, computed once at insert instead of parsed on every time-filtered query.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
        CREATE FUNCTION tag_paths(tags text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
            SELECT coalesce(array_agg(DISTINCT array_to_string(parts[1:n], '.')), '{}')
            FROM unnest(tags) AS t(tag)
            CROSS JOIN LATERAL string_to_array(t.tag, '.') AS parts
            CROSS JOIN LATERAL generate_series(1, cardinality(parts)) AS n
        $$
    """)
    op.execute(r"""
        CREATE FUNCTION date_span(name text) RETURNS daterange
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE
            d text := substring(name from '\d{4}(?:-\d{2}){0,2}');
            start date;
        BEGIN
            IF d IS NULL THEN
                RETURN NULL;
            END IF;
            start := make_date(left(d, 4)::int, coalesce(nullif(substr(d, 6, 2), '')::int, 1),
                               coalesce(nullif(substr(d, 9, 2), '')::int, 1));
            RETURN daterange(start, (start + CASE
                WHEN length(d) = 4 THEN interval '1 year'
                WHEN length(d) = 7 THEN interval '1 month'
                WHEN name LIKE 'the week of%' THEN interval '7 days'
                ELSE interval '1 day' END)::date);
        EXCEPTION WHEN others THEN
            RETURN NULL;  -- "2024-13": no span, never an insert that fails
        END
        $$
    """)
    op.execute(
        "ALTER TABLE entities ADD COLUMN date_span daterange"
        " GENERATED ALWAYS AS (CASE WHEN type = 'date' THEN date_span(name) END) STORED"
    )
    op.drop_index("ix_memory_units_tags", table_name="memory_units")
    op.execute(
        "ALTER TABLE memory_units ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (tag_paths(tags)) STORED"
    )
    op.execute("CREATE INDEX ix_memory_units_tag_paths ON memory_units USING gin (tag_paths)")
    op.execute(
        "CREATE INDEX ix_memory_units_active_recent ON memory_units"
        " (bank_id, coalesce(valid_from, created_at) DESC) WHERE status = 'active'"
    )


def downgrade() -> None:
    op.drop_index("ix_memory_units_active_recent", table_name="memory_units")
    op.drop_index("ix_memory_units_tag_paths", table_name="memory_units")
    op.execute("ALTER TABLE memory_units DROP COLUMN tag_paths")
    op.execute("CREATE INDEX ix_memory_units_tags ON memory_units USING gin (tags)")
    op.execute("DROP FUNCTION tag_paths(text[])")
    op.execute("ALTER TABLE entities DROP COLUMN date_span")
    op.execute("DROP FUNCTION date_span(text)")
