"""The scheduled maintenance's batches (app/maintenance/lifecycle.py): a bank's active units due to
expire, fade or be promoted, at most `limit` of them in id order, locked with SKIP LOCKED, so two runs
at once split the work and a batch never waits for rows another transaction holds."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import NEVER_DECAY
from app.db.repositories.units import tag_prefix_sql

# Kinds that do not fade (as in retrieval's decay, app/query/fusion.py).
NO_DECAY = "split_part(m.tags[1], '.', 1) IN (" + ", ".join(f"'{kind}'" for kind in NEVER_DECAY) + ")"

_FADED = (
    "m.importance * exp(-CAST(:lam AS float8) * extract(epoch FROM (CAST(:now AS timestamptz)"
    " - coalesce(m.last_accessed_at, m.valid_from, m.created_at))) / 86400) < CAST(:threshold AS float8)"
)


@dataclass(frozen=True)
class Expiry:
    """One expiry rule: past the unit's own `expires_at` (no tag), or a unit under `tag` (a tag or
    one under it) said more than `days` ago."""

    tag: str | None = None
    days: float = 0.0


async def _lock_units(
    db: AsyncSession, where: str, params: dict[str, Any], limit: int
) -> list[tuple[uuid.UUID, str]]:
    """(id, status) of up to `limit` units that meet `where`, locked for this transaction."""
    rows = await db.execute(
        text(
            f"SELECT id, status FROM memory_units m WHERE {where}"
            " ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED"
        ),
        {**params, "limit": limit},
    )
    return [(r[0], r[1]) for r in rows]


def _expiry_sql(rule: Expiry) -> tuple[str, dict[str, Any]]:
    if rule.tag is None:
        return "m.expires_at <= CAST(:now AS timestamptz)", {}
    sql, params = tag_prefix_sql("m", "ttl", [rule.tag])
    params["days"] = rule.days
    age = (
        "coalesce(m.valid_from, m.created_at)"
        " <= CAST(:now AS timestamptz) - make_interval(secs => :days * 86400)"
    )
    return f"{sql} AND {age}", params


async def lock_expired(
    db: AsyncSession, bank_id: str, rule: Expiry, now: datetime, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """The bank's active units that `rule` says have expired at `now`."""
    sql, params = _expiry_sql(rule)
    return await _lock_units(
        db,
        f"m.bank_id = :bank AND m.status = 'active' AND {sql}",
        {**params, "bank": bank_id, "now": now},
        limit,
    )


async def lock_faded(
    db: AsyncSession, bank_id: str, now: datetime, decay_lambda: float, threshold: float, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """The bank's active episodic units (facts excepted) whose `importance · exp(-λ · days since last
    use)` is under `threshold` at `now`."""
    return await _lock_units(
        db,
        f"m.bank_id = :bank AND m.status = 'active' AND m.layer = 'episodic'"
        f" AND NOT ({NO_DECAY}) AND {_FADED}",
        {"bank": bank_id, "now": now, "lam": decay_lambda, "threshold": threshold},
        limit,
    )


async def lock_promotable(
    db: AsyncSession, bank_id: str, *, sources: int, confidence: float, importance: float, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """The bank's active episodic units with at least `sources` sources (events and merged units), or
    at least `confidence` and `importance`."""
    return await _lock_units(
        db,
        "m.bank_id = :bank AND m.status = 'active' AND m.layer = 'episodic' AND"
        " (cardinality(m.source_event_ids) + cardinality(m.merged_from) >= :sources"
        "  OR (m.confidence >= :confidence AND m.importance >= :importance))",
        {"bank": bank_id, "sources": sources, "confidence": confidence, "importance": importance},
        limit,
    )
