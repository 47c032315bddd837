"""Transaction-scoped advisory locks: released by the commit or rollback that ends the work."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession


async def try_xact_lock(db: AsyncSession, key: str) -> bool:
    got = await db.scalar(text("SELECT pg_try_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})
    return bool(got)
