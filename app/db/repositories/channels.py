"""The retrieval channels: one SQL statement, one round trip, each channel a bounded CTE over the
bank's units that pass the request's filters, using its own index:

- semantic: HNSW cosine on `memory_embeddings` (the partial index of the current model; pgvector's
  iterative scan keeps going until enough rows pass the filters);
- keyword: GIN full text on `memory_units.search` (OR of the query's lexemes, ranked by ts_rank);
- entity: units linked to entities the query names, and up to 2 hops over the `relations` of active
  units (bounded per hop, ranked by hop);
- temporal: units said within the time filter (or mentioning a date in it), newest first; without a
  filter, the newest units;
- tag: units under the tags inferred from the query, newest first (the newest value of a tag is the
  one that holds; an index walk when the tag is common, the GIN index when it is rare).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.embeddings import check_model_name
from app.db.repositories.history import active_as_of_sql
from app.db.repositories.query import ChannelInputs, ChannelLimits, Filters, status_sql
from app.db.repositories.units import tag_prefix_sql

# Date entities whose span of days (`entities.date_span`, see the schema) meets the time filter: their
# units count as said in the window.
_DATE_ENTITIES = """
    date_entities AS (
        SELECT id FROM entities
        WHERE bank_id = :bank AND type = 'date' AND date_span IS NOT NULL
          AND lower(date_span) < CAST(:time_to AS timestamptz)
          AND upper(date_span) > CAST(:time_from AS timestamptz)
    ),"""


def _where(f: Filters, params: dict[str, Any], alias: str = "m", *, window: bool = True) -> str:
    """The request's filters on `memory_units` aliased `alias` (the time window unless `window` is
    off). A small window is the set of its units, which drives the channel (a semi-join); a larger one
    is a condition on each row the channel's own index finds — said in the window (`valid_from`), or
    linked to a day in it (a hashed lookup) — so a channel never reads a large window unit by unit."""
    clauses = [f"{alias}.bank_id = :bank"]
    if f.as_of is not None:
        params["as_of"] = f.as_of
        clauses.append(f"{alias}.created_at <= :as_of AND {alias}.id IN (SELECT id FROM as_of_active)")
    else:
        clauses.append(status_sql(f, params, alias))
    if f.tags:
        sql, tag_params = tag_prefix_sql(alias, "tags", f.tags)
        params.update(tag_params)
        clauses.append(sql)
    if f.entities:
        params["entity_filter"] = f.entities
        clauses.append(
            f"{alias}.id IN (SELECT fme.memory_id FROM memory_entities fme"
            " JOIN entities fe ON fe.id = fme.entity_id"
            " WHERE fe.bank_id = :bank AND fe.canonical_name = ANY(CAST(:entity_filter AS text[])))"
        )
    if f.agents:
        params["agent_filter"] = f.agents
        clauses.append(f"{alias}.agent_id = ANY(CAST(:agent_filter AS text[]))")
    if window and f.small_window:
        clauses.append(f"{alias}.id IN (SELECT id FROM time_units)")
    elif window and f.window:
        clauses.append(
            f"({alias}.valid_from >= CAST(:time_from AS timestamptz)"
            f" AND {alias}.valid_from < CAST(:time_to AS timestamptz)"
            f" OR {alias}.id IN (SELECT memory_id FROM date_units))"
        )
    return " AND ".join(clauses)


def _prelude(f: Filters, params: dict[str, Any]) -> list[str]:
    """The sets the filters refer to: units active at `as_of`, units said in (or about) the window."""
    ctes: list[str] = []
    if f.as_of is not None:
        ctes.append(f"""
    as_of_active AS (
        {active_as_of_sql("bank", "as_of")}
    ),""")
    if f.window:
        params["time_from"], params["time_to"] = f.time_from, f.time_to
        status = "TRUE" if f.as_of is not None else status_sql(f, params, "tm")
        ctes.append(_DATE_ENTITIES)
        ctes.append(
            """
    date_units AS (
        SELECT me.memory_id FROM memory_entities me
        WHERE me.entity_id = ANY(ARRAY(SELECT id FROM date_entities))
    ),"""
        )
    if f.small_window:
        # Two index scans (the window on valid_from; the date entities' links), not an OR over the bank.
        ctes.append(
            f"""
    time_units AS MATERIALIZED (
        SELECT tm.id FROM memory_units tm
        WHERE tm.bank_id = :bank AND {status}
          AND tm.valid_from >= CAST(:time_from AS timestamptz)
          AND tm.valid_from < CAST(:time_to AS timestamptz)
        UNION
        SELECT memory_id FROM date_units
    ),"""
        )
    return ctes


_COLUMNS = "m.importance, m.layer, m.tags, m.valid_from, m.created_at, m.source_event_ids"


def _rare(entity_id: str, limits: ChannelLimits) -> str:
    """The entity is linked to at most `limits.common_mentions` units (counting stops there)."""
    common = limits.common_mentions
    return (
        f"(SELECT count(*) FROM (SELECT 1 FROM memory_entities ce WHERE ce.entity_id = {entity_id}"
        f" LIMIT {common + 1}) c) <= {common}"
    )


def _ranked(channel: str, order: str) -> str:
    # Ranked here, over at most `limits.rows` rows, not inside the CTE (that would rank the whole bank).
    return (
        f"SELECT '{channel}' AS channel, row_number() OVER (ORDER BY {order}, id) AS rank, * FROM {channel}"
    )


def _newest_of_window(f: Filters, c: ChannelInputs, params: dict[str, Any], condition: str) -> str:
    """The newest units of the window that meet `condition`: a backward walk of the valid_from index
    within the window, and the newest of the units about a day in it — bounded by the window, never a
    walk of the bank nor a sort of the whole window."""
    unwindowed = f"{_where(f, params, window=False)} AND {condition}"
    limit = c.limits.rows
    return f"""
        SELECT * FROM (
            (SELECT m.id, extract(epoch FROM m.valid_from) AS score, {_COLUMNS}
             FROM memory_units m
             WHERE {unwindowed} AND m.valid_from >= CAST(:time_from AS timestamptz)
               AND m.valid_from < CAST(:time_to AS timestamptz)
             ORDER BY m.valid_from DESC
             LIMIT {limit})
            UNION
            (SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
             FROM memory_units m
             WHERE {unwindowed} AND m.id IN (SELECT memory_id FROM date_units)
             ORDER BY coalesce(m.valid_from, m.created_at) DESC
             LIMIT {limit})
        ) arms
        ORDER BY score DESC
        LIMIT {limit}
    """


def _semantic(f: Filters, c: ChannelInputs, params: dict[str, Any], where: str) -> str | None:
    """The nearest units by cosine distance, from the model's partial HNSW index (or, in a small
    window, by exact distance over the window's vectors)."""
    if c.vector is None:
        return None
    # The model name and dimension are literals so the planner can match the partial HNSW index.
    vec = f"CAST(:qvec AS vector({c.dim}))"
    distance = f"(e.embedding::vector({c.dim}) <=> {vec})"
    params["qvec"] = str(c.vector)
    exact = f.small_window and not (f.tags or f.entities or f.agents or f.as_of)
    if exact:
        # A small window's units by exact distance, read from the vectors' table alone (an HNSW
        # scan filtered to a few units of the bank would visit most of the graph); the units' other
        # filters then on the nearest few.
        near = f"e.memory_id IN (SELECT id FROM time_units) ORDER BY {distance} LIMIT {2 * c.limits.rows}"
    elif f.window and not f.small_window:
        # A large window: the bank's nearest `limits.window_candidates` by the HNSW index, then the window and
        # the other filters. (Filtering inside the scan would need each candidate's unit, and the
        # planner, misjudging the window's share, then sorts the whole bank instead.) The window's
        # share of these candidates is about its share of the bank: a window of a few thousand units
        # in a large bank gets few semantic hits, the other channels' still.
        near = f"TRUE ORDER BY {distance} LIMIT {c.limits.window_candidates}"
    else:
        near = None
    if near:
        return f"""
    semantic_near AS MATERIALIZED (
        SELECT e.memory_id AS id, {distance} AS distance
        FROM memory_embeddings e
        WHERE e.model = '{c.model}' AND e.bank_id = :bank AND {near}
    ),
    semantic AS MATERIALIZED (
        SELECT n.id, 1 - n.distance AS score, {_COLUMNS}
        FROM semantic_near n JOIN memory_units m ON m.id = n.id
        WHERE m.id = ANY(ARRAY(SELECT id FROM semantic_near)) AND {_where(f, params, window=not exact)}
        ORDER BY n.distance
        LIMIT {c.limits.rows}
    ),"""
    # The HNSW scan, iterative: it keeps going until enough rows pass the filters (a small
    # window's units with other filters: the window's set drives).
    return f"""
    semantic AS MATERIALIZED (
        SELECT e.memory_id AS id, 1 - {distance} AS score, {_COLUMNS}
        FROM memory_embeddings e JOIN memory_units m ON m.id = e.memory_id
        WHERE e.model = '{c.model}' AND e.bank_id = :bank AND {where}
        ORDER BY {distance}
        LIMIT {c.limits.rows}
    ),"""


def _keyword(f: Filters, c: ChannelInputs, params: dict[str, Any], where: str) -> str | None:
    """Full text: an OR of the query's words on the GIN index of `search`, ranked by ts_rank."""
    if not c.keywords:
        return None
    params["keywords"] = c.keywords
    return f"""
    keyword AS MATERIALIZED (
        SELECT m.id, ts_rank(m.search, q.tsq, 1) AS score, {_COLUMNS}
        FROM memory_units m, (
            -- an OR of the words, without the names of entities so common they match everything
            SELECT to_tsquery('english', string_agg(quote_literal(w.word), ' | ')) AS tsq
            FROM unnest(CAST(:keywords AS text[])) AS w(word)
            WHERE NOT EXISTS (
                SELECT 1 FROM entities ke
                WHERE ke.bank_id = :bank AND ke.canonical_name = w.word AND NOT {_rare("ke.id", c.limits)})
        ) q
        WHERE m.search @@ q.tsq AND {where}
        ORDER BY score DESC, m.valid_from DESC NULLS LAST
        LIMIT {c.limits.rows}
    ),"""


_KNOWN_AFTER_HOP1 = "(SELECT canonical_name FROM seeds UNION ALL SELECT canonical_name FROM hop1) k"


def _neighbours(seeds: str, known: str, status: str, limits: ChannelLimits) -> str:
    """The canonical names one relation away from the entities `seeds`, through relations of units
    that pass `status` (a superseded unit's relation no longer holds), not among the names `known`,
    rare enough, the `limits.hop_neighbours` most recently related."""
    arms = " UNION ALL ".join(
        f"""SELECT r.{end} AS id, r.created_at FROM relations r JOIN memory_units rm ON rm.id = r.memory_id
            WHERE r.bank_id = :bank AND r.{start} = ANY(ARRAY(SELECT id FROM {seeds})) AND {status}"""
        for start, end in (("subject_id", "object_id"), ("object_id", "subject_id"))
    )
    return f"""
        SELECT e.canonical_name FROM ({arms}) h JOIN entities e ON e.id = h.id
        WHERE e.canonical_name <> ALL(ARRAY(SELECT canonical_name FROM {known})) AND {_rare("e.id", limits)}
        GROUP BY e.canonical_name
        ORDER BY max(h.created_at) DESC
        LIMIT {limits.hop_neighbours}"""


def _entity(f: Filters, c: ChannelInputs, params: dict[str, Any], where: str) -> str | None:
    """Units linked to the (rare enough) entities the query names (score 1), and to those one and two
    hops away over relations (0.5, 0.25). Every entity the query names starts the walk, a common one
    too (the bank's user: "does anything I use have known bugs?"), though its own units are too many
    to say anything; a hop goes by name, so one name typed two ways is one node."""
    if not (c.entity_names or c.entity_walked):
        return None
    params["entity_names"] = c.entity_names
    params["entity_wanted"] = c.entity_wanted
    params["entity_walked"] = c.entity_walked
    status = "rm.id IN (SELECT id FROM as_of_active)" if f.as_of is not None else status_sql(f, params, "rm")
    rare_seed = _rare("ne.id", c.limits)
    return f"""
    seeds AS MATERIALIZED (
        SELECT ne.id, ne.canonical_name,
               ne.canonical_name = ANY(CAST(:entity_wanted AS text[]))
               OR (ne.canonical_name = ANY(CAST(:entity_names AS text[])) AND {rare_seed}) AS own
        FROM entities ne
        WHERE ne.bank_id = :bank
          AND ne.canonical_name = ANY(CAST(:entity_names AS text[]) || CAST(:entity_walked AS text[]))
    ),
    hop1_names AS MATERIALIZED ({_neighbours("seeds", "seeds", status, c.limits)}
    ),
    hop1 AS MATERIALIZED (
        SELECT e.id, e.canonical_name FROM entities e
        WHERE e.bank_id = :bank AND e.canonical_name = ANY(ARRAY(SELECT canonical_name FROM hop1_names))
    ),
    hop2_names AS MATERIALIZED ({_neighbours("hop1", _KNOWN_AFTER_HOP1, status, c.limits)}
    ),
    hop2 AS MATERIALIZED (
        SELECT e.id FROM entities e
        WHERE e.bank_id = :bank AND e.canonical_name = ANY(ARRAY(SELECT canonical_name FROM hop2_names))
          AND {_rare("e.id", c.limits)}
    ),
    entity_links AS MATERIALIZED (
        SELECT me.memory_id AS id,
               max(CASE WHEN me.entity_id = ANY(ARRAY(SELECT id FROM seeds WHERE own)) THEN 1.0
                        WHEN me.entity_id = ANY(ARRAY(SELECT id FROM hop1)) THEN 0.5
                        ELSE 0.25 END) AS score
        FROM memory_entities me
        WHERE me.entity_id = ANY(ARRAY(
            SELECT id FROM seeds WHERE own
            UNION SELECT id FROM hop1 h1 WHERE {_rare("h1.id", c.limits)}
            UNION SELECT id FROM hop2))
        GROUP BY me.memory_id
    ),
    entity AS MATERIALIZED (
        -- the linked units by their ids (the entities are rare, so they are few), then the filters
        SELECT m.id, l.score, {_COLUMNS}
        FROM memory_units m JOIN entity_links l ON l.id = m.id
        WHERE m.id = ANY(ARRAY(SELECT id FROM entity_links)) AND {where}
        ORDER BY l.score DESC, m.valid_from DESC NULLS LAST
        LIMIT {c.limits.rows}
    ),"""


def _temporal(f: Filters, c: ChannelInputs, params: dict[str, Any], where: str) -> str:
    """The newest units of the time window, or of the bank without one."""
    if f.window:
        return f"""
    temporal AS MATERIALIZED ({_newest_of_window(f, c, params, "TRUE")}),"""
    return f"""
    temporal AS MATERIALIZED (
        SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
        FROM memory_units m
        WHERE {where}
        ORDER BY coalesce(m.valid_from, m.created_at) DESC
        LIMIT {c.limits.rows}
    ),"""


def _tag(f: Filters, c: ChannelInputs, params: dict[str, Any], where: str) -> str | None:
    """The newest units under the tags inferred from the query."""
    if not c.inferred_tags:
        return None
    inferred, tag_params = tag_prefix_sql("m", "inferred", c.inferred_tags)
    params.update(tag_params)
    if f.window:
        return f"""
    tag AS MATERIALIZED ({_newest_of_window(f, c, params, inferred)}),"""
    return f"""
    tag AS MATERIALIZED (
        SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
        FROM memory_units m
        WHERE {where} AND {inferred}
        ORDER BY coalesce(m.valid_from, m.created_at) DESC
        LIMIT {c.limits.rows}
    ),"""


# One builder per channel, in the statement's order, and the order that ranks its rows. A builder
# returns its CTEs, ending in one named like the channel, or None when the request gives the channel
# nothing to look for; it adds the bind parameters it uses to `params`.
_Builder = Callable[[Filters, ChannelInputs, dict[str, Any], str], str | None]
_CHANNELS: tuple[tuple[str, _Builder, str], ...] = (
    ("semantic", _semantic, "score DESC"),
    ("keyword", _keyword, "score DESC, valid_from DESC NULLS LAST"),
    ("entity", _entity, "score DESC, valid_from DESC NULLS LAST"),
    ("temporal", _temporal, "score DESC"),
    ("tag", _tag, "score DESC"),
)


def build_statement(f: Filters, c: ChannelInputs, params: dict[str, Any]) -> str:
    """Build the one statement of the channels `c` asks for ("" when none has anything to look for)."""
    check_model_name(c.model)
    ctes = _prelude(f, params)
    where = _where(f, params)
    selects: list[str] = []
    for channel, build, order in _CHANNELS:
        cte = build(f, c, params, where) if channel in c.channels else None
        if cte is not None:
            ctes.append(cte)
            selects.append(_ranked(channel, order))
    if not selects:
        return ""
    body = "\nUNION ALL\n".join(selects)
    return "WITH" + "".join(ctes).rstrip(",") + "\n" + body


async def channel_rows(db: AsyncSession, f: Filters, c: ChannelInputs) -> Sequence[Any]:
    """Read every channel's rows, ranked within their channel, in one round trip: (channel, rank, id,
    score, importance, layer, tags, valid_from, created_at, source_event_ids)."""
    params: dict[str, Any] = {"bank": f.bank_id}
    sql = build_statement(f, c, params)
    if not sql:
        return []
    return (await db.execute(text(sql), params)).all()
