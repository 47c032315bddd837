from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.deps import BankDep, ReadSessionDep, reads_only
from app.entities import service as entities
from app.schemas.common import Limit, SafeText
from app.schemas.entities import (
    EntityDetailRead,
    EntityPage,
    decode_entity_cursor,
    parse_statuses,
)
from app.schemas.problems import IN_A_BANK, PAGINATED

router = APIRouter(prefix="/v1/banks/{bank_id}/entities", tags=["entities"], responses=IN_A_BANK)


@router.get("", response_model=EntityPage, responses=PAGINATED, dependencies=[Depends(reads_only)])
async def list_entities(
    bank: BankDep,
    db: ReadSessionDep,
    q: Annotated[
        SafeText | None,
        Query(max_length=256, description="Case-insensitive substring of the name."),
    ] = None,
    type_: Annotated[
        SafeText | None,
        Query(alias="type", max_length=64, description="Only entities of this type (`person`, `place`, …)."),
    ] = None,
    limit: Limit = 100,
    cursor: str | None = None,
) -> EntityPage:
    """List the bank's entities (people, places, organisations, ids…) by name, with how many units
    mention each; `q` finds them by a case-insensitive part of the name."""
    return await entities.entity_page(
        db, bank.id, q=q, type_=type_, after=decode_entity_cursor(cursor), limit=limit
    )


@router.get("/{entity_id}", response_model=EntityDetailRead, dependencies=[Depends(reads_only)])
async def get_entity(
    entity_id: uuid.UUID,
    bank: BankDep,
    db: ReadSessionDep,
    statuses: Annotated[
        str | None,
        Query(
            description="Comma-separated statuses of the units to list (default `active,pending`).",
            examples=["active,superseded"],
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many relations and units.")] = 50,
) -> EntityDetailRead:
    """Get one entity with its relations (as subject or object) and the newest units that mention it."""
    return await entities.entity(db, bank.id, entity_id, statuses=parse_statuses(statuses), limit=limit)
