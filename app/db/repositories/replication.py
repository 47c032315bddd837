"""What a streaming replica says about itself (the replica's readiness line)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

# Zero while the replica has replayed all it received; else the age of the last transaction it
# replayed (it grows while replay lags or is paused). NULL on a server that is not a standby.
_REPLAY_LAG = text(
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN NULL"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0.0"
    " ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8 END"
)


async def replay_lag_seconds(db: AsyncSession) -> float | None:
    value = (await db.execute(_REPLAY_LAG)).scalar_one()
    return None if value is None else round(float(value), 3)
