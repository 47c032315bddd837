"""Transaction-scoped advisory locks: released by the commit or rollback that ends the work."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession


async def xact_lock(db: AsyncSession, key: str, timeout_seconds: float) -> bool:
    """Wait up to `timeout_seconds` for the lock; False if it stayed busy."""
    from sqlalchemy.exc import DBAPIError

    await db.execute(text(f"SET LOCAL lock_timeout = '{int(timeout_seconds * 1000)}ms'"))
    try:
        async with db.begin_nested():
            await db.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})
    except DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) == "55P03":  # lock_not_available
            return False
        raise
    finally:
        await db.execute(text("SET LOCAL lock_timeout = 0"))
    return True
