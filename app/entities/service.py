"""Reading the bank's entities: the list by name, and one entity with its relations and units."""

from __future__ import annotations

import uuid
from typing import Unpack

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories import entities as entities_repo
from app.db.repositories.entities import EntitySearch
from app.errors import NotFound
from app.schemas.entities import EntityDetailRead, EntityPage


async def entity_page(
    db: AsyncSession, bank_id: str, *, limit: int, **search: Unpack[EntitySearch]
) -> EntityPage:
    """The bank's entities by name, with how many units mention each; `q` a part of the name."""
    rows = await entities_repo.list_entities(db, bank_id, limit=limit + 1, **search)
    return EntityPage.from_rows(rows, limit)


async def entity(
    db: AsyncSession, bank_id: str, entity_id: uuid.UUID, *, statuses: list[str], limit: int
) -> EntityDetailRead:
    """One entity with its relations and the newest units that mention it (404 if the bank has none)."""
    detail = await entities_repo.entity_detail(db, bank_id, entity_id, statuses=statuses, limit=limit)
    if detail is None:
        raise NotFound(f"Entity {entity_id} not found.")
    return EntityDetailRead.from_detail(detail)
