from __future__ import annotations

import uuid

from fastapi import APIRouter, Depends, Response

from app.api.deps import BankDep, ReadSessionDep, reads_only
from app.pages import service as pages
from app.schemas.pages import KnowledgePage
from app.schemas.problems import IN_A_BANK

router = APIRouter(prefix="/v1/banks/{bank_id}", tags=["entities"], responses=IN_A_BANK)


def _json(page: KnowledgePage) -> Response:
    """Serialise a page (hundreds of lines) once, by pydantic, not validated and encoded again."""
    return Response(page.model_dump_json(), media_type="application/json")


@router.get("/entities/{entity_id}/page", response_model=KnowledgePage, dependencies=[Depends(reads_only)])
async def entity_page(entity_id: uuid.UUID, bank: BankDep, db: ReadSessionDep) -> Response:
    """Show the entity's knowledge page: what is true of it now (active units), grouped by tag, L3 first and
    newest first, superseded and forgotten values left out, every line citing its unit; `markdown`
    renders the same page."""
    return _json(await pages.entity_page(db, bank, entity_id))


@router.get("/profile", response_model=KnowledgePage, dependencies=[Depends(reads_only)])
async def profile(bank: BankDep, db: ReadSessionDep) -> Response:
    """Show the knowledge page of the bank's main subject (the user): the bank's `config.subject`, else the
    speaker of most user turns, else the units that name no person."""
    return _json(await pages.profile(db, bank))
