from __future__ import annotations

import uuid

from fastapi import APIRouter, Depends, Response, status

from app.api.deps import (
    AccessDep,
    AdminDep,
    AdminForBankDep,
    BankDep,
    PrincipalDep,
    ReadSessionDep,
    SessionDep,
    WorkingMemoryDep,
    WritableBankDep,
    reads_only,
)
from app.banks import service
from app.schemas.banks import (
    BankCreate,
    BankPage,
    BankRead,
    BankStats,
    BankUpdate,
    KeyCreate,
    KeyCreated,
)
from app.schemas.common import Limit, Slug, cursor_after, decode_cursor
from app.schemas.problems import ADMIN_ONLY, AUTHENTICATED, CONFLICT, IN_A_BANK, PAGINATED, WITH_BODY

router = APIRouter(prefix="/v1/banks", tags=["banks"], responses=AUTHENTICATED)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=BankRead,
    responses={**ADMIN_ONLY, **WITH_BODY, **CONFLICT},
)
async def create_bank(body: BankCreate, db: SessionDep, _: AdminDep) -> BankRead:
    """Create a memory bank (admin key)."""
    bank = await service.create_bank(db, body)
    return BankRead.model_validate(bank)


@router.get("", response_model=BankPage, responses=PAGINATED)
async def list_banks(
    db: SessionDep, principal: PrincipalDep, limit: Limit = 100, cursor: str | None = None
) -> BankPage:
    """List banks: all of them for the admin key, its own for a bank key."""
    rows = await service.list_banks(db, principal, after=decode_cursor(cursor, "id", str), limit=limit)
    next_cursor = cursor_after(rows, limit, "id", lambda last: last.id)
    return BankPage(banks=[BankRead.model_validate(b) for b in rows], next_cursor=next_cursor)


@router.get("/{bank_id}", response_model=BankRead, responses=IN_A_BANK)
async def get_bank(bank: BankDep) -> BankRead:
    """Get one bank with its effective config."""
    return BankRead.model_validate(bank.row)


@router.patch("/{bank_id}", response_model=BankRead, responses={**IN_A_BANK, **WITH_BODY})
async def update_bank(
    body: BankUpdate, bank: WritableBankDep, db: SessionDep, principal: PrincipalDep, access: AccessDep
) -> BankRead:
    """Rename a bank or change its config (merged into the current config). Its LLM budget and models
    (`llm_daily_tokens`, `llm_daily_cost`, `llm_models`) only with the admin key."""
    row = await service.update_bank(db, bank.row, body, access, by_admin=principal.is_admin)
    return BankRead.model_validate(row)


@router.delete("/{bank_id}", status_code=status.HTTP_204_NO_CONTENT, responses=IN_A_BANK)
async def delete_bank(
    bank_id: Slug, db: SessionDep, _: AdminForBankDep, working_memory: WorkingMemoryDep, access: AccessDep
) -> Response:
    """Purge a bank: every event, memory, embedding, entity, history row and key is erased, and the
    sessions' working memory in Redis."""
    await service.purge_bank(db, bank_id, working_memory, access)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/{bank_id}/keys",
    status_code=status.HTTP_201_CREATED,
    response_model=KeyCreated,
    responses={**IN_A_BANK, **WITH_BODY},
)
async def create_key(body: KeyCreate, bank: BankDep, db: SessionDep, _: AdminDep) -> KeyCreated:
    """Issue a bank-scoped key (admin key). The key is shown once; only its hash is stored."""
    key, secret = await service.create_key(db, bank.row, body)
    return KeyCreated.of(key, key=secret)


@router.delete("/{bank_id}/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT, responses=IN_A_BANK)
async def revoke_key(
    key_id: uuid.UUID, bank: BankDep, db: SessionDep, _: AdminDep, access: AccessDep
) -> Response:
    """Revoke a bank key (admin key); it stops working at once."""
    await service.revoke_key(db, bank.row, key_id, access)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{bank_id}/stats", response_model=BankStats, responses=IN_A_BANK, dependencies=[Depends(reads_only)]
)
async def bank_stats(bank: BankDep, db: ReadSessionDep) -> BankStats:
    """Counts by status, tag and layer; events, undistilled events and queue lag."""
    return BankStats.model_validate(await service.stats(db, bank))
