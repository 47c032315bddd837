"""The scheduled maintenance's batches (app/maintenance/lifecycle.py): a bank's active units due to
expire, fade or be promoted, at most `limit` of them in id order, locked with SKIP LOCKED, so two runs
at once split the work and a batch never waits for rows another transaction holds."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.units import tag_prefix_sql

# Units of a kind that does not fade (`:never_decay`, as in retrieval's decay, app/query/fusion.py).
NO_DECAY = "split_part(m.tags[1], '.', 1) = ANY(CAST(:never_decay AS text[]))"

# Bank time: when the bank learned the unit, last used it in an answer or last heard it again (GREATEST
# skips NULLs). Not `valid_from`: an import or backfill of old conversations starts fresh.
BANK_TIME = "greatest(m.created_at, m.last_accessed_at, m.confirmed_at)"
VALID_TIME = "coalesce(m.valid_from, m.created_at)"

_FADED = (
    "m.importance * exp(-CAST(:lam AS float8) * extract(epoch FROM (CAST(:now AS timestamptz)"
    f" - {BANK_TIME})) / 86400) < CAST(:threshold AS float8)"
)


@dataclass(frozen=True)
class Expiry:
    """One expiry rule: past the unit's own `expires_at` (no tag), or a unit under `tag` (a tag or
    one under it) more than `days` old: in valid time for a time-bound kind, else in bank time."""

    tag: str | None = None
    days: float = 0.0
    valid_time: bool = False


@dataclass(frozen=True)
class Fading:
    """The decay rule at `now`: a unit of a kind not in `never_decay` whose `importance · exp(-λ · days
    since the bank last used or heard it)` is under `threshold`."""

    now: datetime
    decay_lambda: float
    threshold: float
    never_decay: tuple[str, ...]

    def params(self) -> dict[str, Any]:
        return {
            "now": self.now,
            "lam": self.decay_lambda,
            "threshold": self.threshold,
            "never_decay": list(self.never_decay),
        }


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
    clock = VALID_TIME if rule.valid_time else BANK_TIME
    age = f"{clock} <= CAST(:now AS timestamptz) - make_interval(secs => :days * 86400)"
    return f"{sql} AND {age}", params


async def lock_expired(
    db: AsyncSession, bank_id: str, rule: Expiry, now: datetime, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """Lock the bank's active units that `rule` says have expired at `now`."""
    sql, params = _expiry_sql(rule)
    return await _lock_units(
        db,
        f"m.bank_id = :bank AND m.status = 'active' AND {sql}",
        {**params, "bank": bank_id, "now": now},
        limit,
    )


async def lock_faded(
    db: AsyncSession, bank_id: str, fading: Fading, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """Lock the bank's active episodic units that `fading` says have faded."""
    return await _lock_units(
        db,
        f"m.bank_id = :bank AND m.status = 'active' AND m.layer = 'episodic'"
        f" AND NOT ({NO_DECAY}) AND {_FADED}",
        {"bank": bank_id, **fading.params()},
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


async def _count_units(db: AsyncSession, where: str, params: dict[str, Any]) -> int:
    row = await db.execute(text(f"SELECT count(*) FROM memory_units m WHERE {where}"), params)
    return int(row.scalar_one())


async def count_active(db: AsyncSession, bank_id: str) -> int:
    return await _count_units(db, "m.bank_id = :bank AND m.status = 'active'", {"bank": bank_id})


async def count_expired(db: AsyncSession, bank_id: str, rules: list[Expiry], now: datetime) -> int:
    """Count the bank's active units that any of `rules` says have expired at `now`."""
    clauses, params = [], {"bank": bank_id, "now": now}
    for i, rule in enumerate(rules):
        sql, rule_params = _expiry_sql(rule)
        for key, value in rule_params.items():  # each rule's parameters under names of its own
            sql = re.sub(rf":{key}\b", f":r{i}_{key}", sql)
            params[f"r{i}_{key}"] = value
        clauses.append(f"({sql})")
    if not clauses:
        return 0
    return await _count_units(
        db, f"m.bank_id = :bank AND m.status = 'active' AND ({' OR '.join(clauses)})", params
    )


async def count_faded(db: AsyncSession, bank_id: str, fading: Fading) -> int:
    return await _count_units(
        db,
        f"m.bank_id = :bank AND m.status = 'active' AND m.layer = 'episodic'"
        f" AND NOT ({NO_DECAY}) AND {_FADED}",
        {"bank": bank_id, **fading.params()},
    )


async def lock_archived_past_grace(
    db: AsyncSession, bank_id: str, now: datetime, grace_days: float, limit: int
) -> list[tuple[uuid.UUID, str]]:
    """Lock the bank's units archived (by expiry or decay) more than `grace_days` before `now`."""
    return await _lock_units(
        db,
        "m.bank_id = :bank AND m.status = 'archived'"
        " AND m.status_changed_at <= CAST(:now AS timestamptz) - make_interval(secs => :grace * 86400)",
        {"bank": bank_id, "now": now, "grace": grace_days},
        limit,
    )
