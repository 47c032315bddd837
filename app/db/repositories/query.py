"""The retrieval channels: one SQL statement, one round trip, each channel a bounded CTE over the
bank's units that pass the request's filters, using its own index:

- semantic: HNSW cosine on `memory_embeddings` (the partial index of the current model; pgvector's
  iterative scan keeps going until enough rows pass the filters);
- keyword: GIN full text on `memory_units.search` (OR of the query's lexemes, ranked by ts_rank);
- entity: units linked to entities the query names, and 1 hop over `relations`;
- temporal: units said within the time filter (or mentioning a date in it), newest first; without a
  filter, the newest units;
- tag: units under the tags inferred from the query, newest first (the newest value of a tag is the
  one that holds; an index walk when the tag is common, the GIN index when it is rare).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from cachetools import TTLCache
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import QueryLog
from app.db.repositories.history import active_as_of_sql
from app.db.repositories.units import tag_prefix_sql

CHANNEL_LIMIT = 50
# A time window of at most this many units (said in it) is a set the channels are driven by; a larger
# one is a condition on each row their own indexes find (see `_where`).
SMALL_WINDOW_UNITS = 2000
# The semantic channel's candidates in a larger window (see `_statement`).
WINDOW_CANDIDATES = 500
# An entity named in more units than this says little about any one of them (the bank's own user,
# the two people of a conversation): the entity channel leaves it out unless the request names it.
COMMON_ENTITY_MENTIONS = 50
# A word in more units than this (in a large bank: "want", "order") costs more to rank than it tells;
# the keyword channel leaves it out. Counting is a bitmap scan per word, so each API process remembers
# the answer per (bank, word) for a while: a bank's vocabulary changes slowly.
COMMON_WORD_UNITS = 1000
_common_words: TTLCache[tuple[str, str], bool] = TTLCache(maxsize=100_000, ttl=600)
_SAFE_MODEL = re.compile(r"^[\w./:-]+$")


@dataclass
class Filters:
    bank_id: str
    statuses: list[str]
    as_of: datetime | None = None
    tags: list[str] | None = None
    entities: list[str] | None = None  # canonical names
    time_from: datetime | None = None
    time_to: datetime | None = None
    window_units: int | None = None  # units said in the window, counted up to SMALL_WINDOW_UNITS + 1

    @property
    def window(self) -> bool:
        return self.time_from is not None and self.time_to is not None

    @property
    def small_window(self) -> bool:
        return self.window_units is not None and self.window_units <= SMALL_WINDOW_UNITS


@dataclass
class ChannelInputs:
    model: str
    dim: int
    vector: list[float] | None  # None: no semantic channel
    keywords: list[str]  # the query's content words; empty: no keyword channel
    entity_names: list[str] = field(default_factory=list)
    entity_wanted: list[str] = field(default_factory=list)  # named by the request: never too common
    inferred_tags: list[str] = field(default_factory=list)
    channels: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Hit:
    channel: str
    memory_id: uuid.UUID
    rank: int
    score: float
    importance: float
    layer: str
    tags: list[str]
    valid_from: datetime | None
    created_at: datetime
    sources: list[int]


# Date entities whose span of days (`entities.date_span`, see the schema) meets the time filter: their
# units count as said in the window.
_DATE_ENTITIES = """
    date_entities AS (
        SELECT id FROM entities
        WHERE bank_id = :bank AND type = 'date' AND date_span IS NOT NULL
          AND lower(date_span) < CAST(:time_to AS timestamptz)
          AND upper(date_span) > CAST(:time_from AS timestamptz)
    ),"""


def _status(f: Filters, params: dict[str, Any], alias: str) -> str:
    # The usual case is a literal, so generic plans can still use the partial `status = 'active'` indexes.
    if f.statuses == ["active"]:
        return f"{alias}.status = 'active'"
    params["statuses"] = f.statuses
    return f"{alias}.status = ANY(CAST(:statuses AS text[]))"


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
        clauses.append(_status(f, params, alias))
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
        status = "TRUE" if f.as_of is not None else _status(f, params, "tm")
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


def _rare(entity_id: str) -> str:
    """The entity is linked to at most COMMON_ENTITY_MENTIONS units (counting stops there)."""
    return (
        f"(SELECT count(*) FROM (SELECT 1 FROM memory_entities ce WHERE ce.entity_id = {entity_id}"
        f" LIMIT {COMMON_ENTITY_MENTIONS + 1}) c) <= {COMMON_ENTITY_MENTIONS}"
    )


def _ranked(channel: str, order: str) -> str:
    # Ranked here, over at most CHANNEL_LIMIT rows, not inside the CTE (that would rank the whole bank).
    return (
        f"SELECT '{channel}' AS channel, row_number() OVER (ORDER BY {order}, id) AS rank, * FROM {channel}"
    )


def _newest_of_window(f: Filters, params: dict[str, Any], condition: str) -> str:
    """The newest units of the window that meet `condition`: a backward walk of the valid_from index
    within the window, and the newest of the units about a day in it — bounded by the window, never a
    walk of the bank nor a sort of the whole window."""
    unwindowed = f"{_where(f, params, window=False)} AND {condition}"
    return f"""
        SELECT * FROM (
            (SELECT m.id, extract(epoch FROM m.valid_from) AS score, {_COLUMNS}
             FROM memory_units m
             WHERE {unwindowed} AND m.valid_from >= CAST(:time_from AS timestamptz)
               AND m.valid_from < CAST(:time_to AS timestamptz)
             ORDER BY m.valid_from DESC
             LIMIT {CHANNEL_LIMIT})
            UNION
            (SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
             FROM memory_units m
             WHERE {unwindowed} AND m.id IN (SELECT memory_id FROM date_units)
             ORDER BY coalesce(m.valid_from, m.created_at) DESC
             LIMIT {CHANNEL_LIMIT})
        ) arms
        ORDER BY score DESC
        LIMIT {CHANNEL_LIMIT}
    """


def _statement(f: Filters, c: ChannelInputs, params: dict[str, Any]) -> str:
    if not _SAFE_MODEL.match(c.model):
        raise ValueError(f"unexpected embedding model name {c.model!r}")
    ctes = _prelude(f, params)
    where = _where(f, params)
    selects: list[str] = []
    if "semantic" in c.channels and c.vector is not None:
        # The model name and dimension are literals so the planner can match the partial HNSW index.
        vec = f"CAST(:qvec AS vector({c.dim}))"
        distance = f"(e.embedding::vector({c.dim}) <=> {vec})"
        params["qvec"] = str(c.vector)
        exact = f.small_window and not (f.tags or f.entities or f.as_of)
        if exact:
            # A small window's units by exact distance, read from the vectors' table alone (an HNSW
            # scan filtered to a few units of the bank would visit most of the graph); the units' other
            # filters then on the nearest few.
            near = f"e.memory_id IN (SELECT id FROM time_units) ORDER BY {distance} LIMIT {2 * CHANNEL_LIMIT}"
        elif f.window and not f.small_window:
            # A large window: the bank's nearest WINDOW_CANDIDATES by the HNSW index, then the window and
            # the other filters. (Filtering inside the scan would need each candidate's unit, and the
            # planner, misjudging the window's share, then sorts the whole bank instead.) The window's
            # share of these candidates is about its share of the bank: a window of a few thousand units
            # in a large bank gets few semantic hits, the other channels' still.
            near = f"TRUE ORDER BY {distance} LIMIT {WINDOW_CANDIDATES}"
        else:
            near = None
        if near:
            ctes.append(
                f"""
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
        LIMIT {CHANNEL_LIMIT}
    ),"""
            )
        else:
            # The HNSW scan, iterative: it keeps going until enough rows pass the filters (a small
            # window's units with other filters: the window's set drives).
            ctes.append(
                f"""
    semantic AS MATERIALIZED (
        SELECT e.memory_id AS id, 1 - {distance} AS score, {_COLUMNS}
        FROM memory_embeddings e JOIN memory_units m ON m.id = e.memory_id
        WHERE e.model = '{c.model}' AND e.bank_id = :bank AND {where}
        ORDER BY {distance}
        LIMIT {CHANNEL_LIMIT}
    ),"""
            )
        selects.append(_ranked("semantic", "score DESC"))
    if "keyword" in c.channels and c.keywords:
        params["keywords"] = c.keywords
        ctes.append(
            f"""
    keyword AS MATERIALIZED (
        SELECT m.id, ts_rank(m.search, q.tsq, 1) AS score, {_COLUMNS}
        FROM memory_units m, (
            -- an OR of the words, without the names of entities so common they match everything
            SELECT to_tsquery('english', string_agg(quote_literal(w.word), ' | ')) AS tsq
            FROM unnest(CAST(:keywords AS text[])) AS w(word)
            WHERE NOT EXISTS (
                SELECT 1 FROM entities ke
                WHERE ke.bank_id = :bank AND ke.canonical_name = w.word AND NOT {_rare("ke.id")})
        ) q
        WHERE m.search @@ q.tsq AND {where}
        ORDER BY score DESC, m.valid_from DESC NULLS LAST
        LIMIT {CHANNEL_LIMIT}
    ),"""
        )
        selects.append(_ranked("keyword", "score DESC, valid_from DESC NULLS LAST"))
    if "entity" in c.channels and c.entity_names:
        params["entity_names"] = c.entity_names
        params["entity_wanted"] = c.entity_wanted
        ctes.append(
            f"""
    named AS (
        SELECT ne.id FROM entities ne
        WHERE ne.bank_id = :bank AND ne.canonical_name = ANY(CAST(:entity_names AS text[]))
          AND (ne.canonical_name = ANY(CAST(:entity_wanted AS text[])) OR {_rare("ne.id")})
    ),
    hop AS (
        SELECT h.id FROM (
            SELECT CASE WHEN r.subject_id = n.id THEN r.object_id ELSE r.subject_id END AS id
            FROM relations r JOIN named n ON r.subject_id = n.id OR r.object_id = n.id
            WHERE r.bank_id = :bank
        ) h
        WHERE {_rare("h.id")}
    ),
    entity_links AS MATERIALIZED (
        SELECT me.memory_id AS id,
               max(CASE WHEN me.entity_id = ANY(ARRAY(SELECT id FROM named)) THEN 1.0 ELSE 0.5 END) AS score
        FROM memory_entities me
        WHERE me.entity_id = ANY(ARRAY(SELECT id FROM named UNION SELECT id FROM hop))
        GROUP BY me.memory_id
    ),
    entity AS MATERIALIZED (
        -- the linked units by their ids (the entities are rare, so they are few), then the filters
        SELECT m.id, l.score, {_COLUMNS}
        FROM memory_units m JOIN entity_links l ON l.id = m.id
        WHERE m.id = ANY(ARRAY(SELECT id FROM entity_links)) AND {where}
        ORDER BY l.score DESC, m.valid_from DESC NULLS LAST
        LIMIT {CHANNEL_LIMIT}
    ),"""
        )
        selects.append(_ranked("entity", "score DESC, valid_from DESC NULLS LAST"))
    if "temporal" in c.channels and not f.window:
        ctes.append(
            f"""
    temporal AS MATERIALIZED (
        SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
        FROM memory_units m
        WHERE {where}
        ORDER BY coalesce(m.valid_from, m.created_at) DESC
        LIMIT {CHANNEL_LIMIT}
    ),"""
        )
    elif "temporal" in c.channels:
        ctes.append(f"""
    temporal AS MATERIALIZED ({_newest_of_window(f, params, "TRUE")}),""")
    if "temporal" in c.channels:
        selects.append(_ranked("temporal", "score DESC"))
    if "tag" in c.channels and c.inferred_tags:
        inferred, tag_params = tag_prefix_sql("m", "inferred", c.inferred_tags)
        params.update(tag_params)
        if f.window:
            ctes.append(f"""
    tag AS MATERIALIZED ({_newest_of_window(f, params, inferred)}),""")
        else:
            ctes.append(
                f"""
    tag AS MATERIALIZED (
        SELECT m.id, extract(epoch FROM coalesce(m.valid_from, m.created_at)) AS score, {_COLUMNS}
        FROM memory_units m
        WHERE {where} AND {inferred}
        ORDER BY coalesce(m.valid_from, m.created_at) DESC
        LIMIT {CHANNEL_LIMIT}
    ),"""
            )
        selects.append(_ranked("tag", "score DESC"))
    if not selects:
        return ""
    body = "\nUNION ALL\n".join(selects)
    return "WITH" + "".join(ctes).rstrip(",") + "\n" + body


async def rare_words(db: AsyncSession, bank_id: str, words: list[str]) -> list[str]:
    """`words` without those in more than COMMON_WORD_UNITS of the bank's units."""
    unknown = [w for w in words if (bank_id, w) not in _common_words]
    if unknown:
        rows = await db.execute(
            text(f"""
                SELECT w.word, (SELECT count(*) FROM (
                    SELECT 1 FROM memory_units m
                    WHERE m.search @@ to_tsquery('english', quote_literal(w.word)) AND m.bank_id = :bank
                    LIMIT {COMMON_WORD_UNITS + 1}) c) AS n
                FROM unnest(CAST(:words AS text[])) AS w(word)
            """),
            {"bank": bank_id, "words": unknown},
        )
        for word, n in rows:
            _common_words[(bank_id, word)] = n > COMMON_WORD_UNITS
    return [w for w in words if not _common_words.get((bank_id, w), False)]


async def size_window(db: AsyncSession, f: Filters) -> Filters:
    """`f` with `window_units` counted (up to SMALL_WINDOW_UNITS + 1, on the valid_from index), which
    sets how the channels apply the window."""
    if not f.window or f.window_units is not None:
        return f
    count = await db.scalar(
        text(f"""
            SELECT count(*) FROM (
                SELECT 1 FROM memory_units m
                WHERE m.bank_id = :bank AND m.status = 'active'
                  AND m.valid_from >= :time_from AND m.valid_from < :time_to
                LIMIT {SMALL_WINDOW_UNITS + 1}) c
        """),
        {"bank": f.bank_id, "time_from": f.time_from, "time_to": f.time_to},
    )
    return replace(f, window_units=int(count or 0))


async def run_channels(db: AsyncSession, f: Filters, c: ChannelInputs) -> list[Hit]:
    """Every channel's hits, ranked within their channel, in one round trip (up to three when the
    bank's common words are not known yet or the time window is not sized)."""
    f = await size_window(db, f)
    if "keyword" in c.channels and c.keywords:
        c = replace(c, keywords=await rare_words(db, f.bank_id, c.keywords))
    params: dict[str, Any] = {"bank": f.bank_id}
    statement = _statement(f, c, params)
    if not statement:
        return []
    rows = (await db.execute(text(statement), params)).all()
    # Unpacked by position (the order of `_ranked` and `_COLUMNS`): ~250 rows a query.
    return [
        Hit(
            channel, memory_id, int(rank), float(score), importance, layer, tags, valid_from, created, sources
        )
        for channel, rank, memory_id, score, importance, layer, tags, valid_from, created, sources in rows
    ]


async def log_queries(db: AsyncSession, reads: list[dict[str, Any]]) -> None:
    await db.execute(
        insert(QueryLog),
        [
            {
                "bank_id": r["bank_id"],
                "query": r["query"],
                "params": r["params"],
                "result_ids": r["result_ids"],
                "took_ms": r["took_ms"],
                "created_at": r["at"],
            }
            for r in reads
        ],
    )


async def bump_access(db: AsyncSession, counts: dict[uuid.UUID, int], at: datetime) -> None:
    if not counts:
        return
    ids = sorted(counts)  # a stable order: concurrent flushes cannot deadlock
    await db.execute(
        text("""
            UPDATE memory_units m SET access_count = m.access_count + c.n,
                   last_accessed_at = GREATEST(COALESCE(m.last_accessed_at, :at), :at)
            FROM unnest(CAST(:ids AS uuid[]), CAST(:ns AS int[])) AS c(id, n)
            WHERE m.id = c.id
        """),
        {"ids": ids, "ns": [counts[i] for i in ids], "at": at},
    )
