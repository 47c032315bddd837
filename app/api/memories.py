from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from app.api.deps import (
    ActingPrincipalDep,
    BankDep,
    ContributableBankDep,
    EmbedderDep,
    ReadSessionDep,
    ReviewableBankDep,
    SessionDep,
    SettingsDep,
    WritableBankDep,
    reads_only,
)
from app.banks.service import Principal, require_admin
from app.db.models import MEMORY_STATUSES
from app.distill.entry import statement_graph
from app.errors import BadRequest, Invalid
from app.memory import reads, review, service
from app.memory.write import Writer
from app.schemas.common import Limit, SafeText, Slug, Timestamp, decode_cursor
from app.schemas.memories import (
    MemoryAccepted,
    MemoryCreate,
    MemoryHistoryRead,
    MemoryPage,
    MemoryPatch,
    MemoryRead,
    ReviewDecision,
)
from app.schemas.problems import CONFLICT, IN_A_BANK, PAGINATED, SIZE_LIMITED, WITH_BODY

router = APIRouter(prefix="/v1/banks/{bank_id}/memories", tags=["memories"], responses=IN_A_BANK)


def actor(principal: Principal) -> str:
    return "api:admin" if principal.is_admin else f"api:key:{principal.key_id}"


def writer(principal: Principal) -> Writer:
    return Writer.direct(actor(principal), statement_graph, principal.agent_id)


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=MemoryAccepted,
    responses={
        201: {"model": MemoryAccepted, "description": "With `?wait=true`: the unit as resolved."},
        **WITH_BODY,
    },
)
async def write_memory(
    body: MemoryCreate,
    bank: ContributableBankDep,
    acting: ActingPrincipalDep,
    db: SessionDep,
    embedder: EmbedderDep,
    settings: SettingsDep,
    response: Response,
    wait: bool = False,
) -> MemoryAccepted:
    """Write a unit directly. It is stored `pending` and resolved in the background (202 with the
    resolution job); with `?wait=true` it is resolved in this request (at most ~10 s) → 201 with the
    unit as resolved: `active`, `merged` into an older twin, or active and superseding an older value.
    With a propose-only key it is stored `proposed` and changes nothing until reviewed (no job)."""
    principal = acting.acting_as(body.agent_id)
    unit, job = await service.write(
        db, embedder, settings, bank, body, writer(principal), wait=wait, propose=principal.proposes_only
    )
    if wait:
        response.status_code = status.HTTP_201_CREATED
    return MemoryAccepted(memory=await reads.read_model(db, unit), job_id=job.id if job else None)


def _statuses(value: str | None) -> list[str] | None:
    if not value:
        return None
    statuses = [s.strip() for s in value.split(",") if s.strip()]
    unknown = sorted(set(statuses) - set(MEMORY_STATUSES))
    if unknown:
        raise Invalid(f"Unknown status {', '.join(unknown)}; one of {', '.join(MEMORY_STATUSES)}.")
    return statuses


def _position(cursor: str | None) -> tuple[datetime, uuid.UUID] | None:
    raw = decode_cursor(cursor, "pos", str)
    if raw is None:
        return None
    try:
        at, _, memory_id = raw.partition("|")
        return datetime.fromisoformat(at), uuid.UUID(memory_id)
    except ValueError as exc:
        raise BadRequest("The cursor is not valid.") from exc


@router.get("", response_model=MemoryPage, responses=PAGINATED, dependencies=[Depends(reads_only)])
async def list_memories(
    bank: BankDep,
    db: ReadSessionDep,
    status_: Annotated[
        str | None, Query(alias="status", description="Comma list, e.g. active,superseded")
    ] = None,
    tag: Annotated[
        SafeText | None, Query(max_length=256, description="A tag and everything under it")
    ] = None,
    entity: Annotated[SafeText | None, Query(max_length=256, description="An entity name")] = None,
    session_id: Slug | None = None,
    since: Annotated[Timestamp | None, Query(description="Created at or after")] = None,
    until: Annotated[Timestamp | None, Query(description="Created before")] = None,
    agent_id: Annotated[Slug | None, Query(description="Only units this agent wrote")] = None,
    as_of: Annotated[
        Timestamp | None, Query(description="Only units that were active at this instant")
    ] = None,
    limit: Limit = 100,
    cursor: str | None = None,
) -> MemoryPage:
    """List the bank's units, newest first, filtered; `?status=proposed` lists the proposals waiting for
    a review."""
    return await reads.list_page(
        db,
        bank,
        statuses=_statuses(status_),
        tag=tag,
        entity=entity,
        session_id=session_id,
        since=since,
        until=until,
        as_of=as_of,
        agent_id=agent_id,
        after=_position(cursor),
        limit=limit,
    )


@router.get("/{memory_id}", response_model=MemoryRead, dependencies=[Depends(reads_only)])
async def get_memory(memory_id: uuid.UUID, bank: BankDep, db: ReadSessionDep) -> MemoryRead:
    """Get one unit, with the text of the turns it was distilled from."""
    return await reads.read_one(db, bank, memory_id)


@router.get("/{memory_id}/history", response_model=MemoryHistoryRead, dependencies=[Depends(reads_only)])
async def memory_history(memory_id: uuid.UUID, bank: BankDep, db: ReadSessionDep) -> MemoryHistoryRead:
    """Show a unit's past: its whole supersede chain both ways, what was merged into it, and every
    action on it (who, when, why)."""
    return await reads.history(db, bank, memory_id)


@router.patch(
    "/{memory_id}",
    status_code=status.HTTP_201_CREATED,
    response_model=MemoryRead,
    responses={**WITH_BODY, **CONFLICT},
)
async def update_memory(
    memory_id: uuid.UUID,
    body: MemoryPatch,
    bank: ContributableBankDep,
    principal: ActingPrincipalDep,
    db: SessionDep,
    embedder: EmbedderDep,
) -> MemoryRead:
    """Change a unit: a new unit with the changes supersedes it (history action `updated`); 409
    unless the unit is active. With a propose-only key the new unit waits as `proposed`
    (`proposed_update_of` this one) and supersedes it only once accepted."""
    unit = await service.update(
        db, embedder, bank, memory_id, body, writer(principal), propose=principal.proposes_only
    )
    return await reads.read_model(db, unit)


@router.delete("/{memory_id}", response_model=MemoryRead, responses=CONFLICT)
async def forget_memory(
    memory_id: uuid.UUID,
    bank: WritableBankDep,
    principal: ActingPrincipalDep,
    db: SessionDep,
    purge: bool = False,
) -> MemoryRead:
    """Forget a unit by the bank's `forgetting_policy`: `delete` → `deleted` (restorable),
    `downweight` → kept at a fifth of its importance, `never` → 409. `?purge=true` (admin key)
    erases its content and vectors for good; the history keeps a tombstone."""
    if purge:
        require_admin(principal)
        unit = await service.purge(db, bank, memory_id, actor(principal), agent_id=principal.agent_id)
    else:
        unit = await service.forget(db, bank, memory_id, actor(principal), agent_id=principal.agent_id)
    return await reads.read_model(db, unit)


@router.post("/{memory_id}/restore", response_model=MemoryRead, responses={**SIZE_LIMITED, **CONFLICT})
async def restore_memory(
    memory_id: uuid.UUID,
    bank: WritableBankDep,
    principal: ActingPrincipalDep,
    db: SessionDep,
    embedder: EmbedderDep,
) -> MemoryRead:
    """Undo a forget: back to the status it had (or its importance), a unit that was in force resolved
    again against what the bank learned meanwhile; 409 if it was not forgotten or was purged."""
    unit = await service.restore(db, embedder, bank, memory_id, actor(principal), agent_id=principal.agent_id)
    return await reads.read_model(db, unit)


# --- review (docs/guides/shared-memory.md) ----------------------------------------------------------------


@router.post("/{memory_id}/accept", response_model=MemoryRead, responses={**SIZE_LIMITED, **CONFLICT})
async def accept_memory(
    memory_id: uuid.UUID,
    bank: ReviewableBankDep,
    acting: ActingPrincipalDep,
    db: SessionDep,
    embedder: EmbedderDep,
    settings: SettingsDep,
    body: ReviewDecision | None = None,
) -> MemoryRead:
    """Accept a proposed unit (a key with the `review` scope): it is resolved now by the bank's claim
    rules, as if written at this moment, and returned as resolved; 409 unless it is `proposed`."""
    who, agent_id, reason = _reviewer(acting, body)
    unit = await review.accept(db, embedder, settings, bank, memory_id, who, agent_id=agent_id, reason=reason)
    return await reads.read_model(db, unit)


@router.post("/{memory_id}/reject", response_model=MemoryRead, responses={**SIZE_LIMITED, **CONFLICT})
async def reject_memory(
    memory_id: uuid.UUID,
    bank: ReviewableBankDep,
    acting: ActingPrincipalDep,
    db: SessionDep,
    body: ReviewDecision | None = None,
) -> MemoryRead:
    """Reject a proposed unit (a key with the `review` scope): `rejected`, never retrieved, its
    history kept (with the `reason` given); 409 unless it is `proposed`."""
    who, agent_id, reason = _reviewer(acting, body)
    unit = await review.reject(db, bank, memory_id, who, agent_id=agent_id, reason=reason)
    return await reads.read_model(db, unit)


def _reviewer(acting: Principal, body: ReviewDecision | None) -> tuple[str, str | None, str | None]:
    """Who decides (the actor and the agent it acts as) and the reason the review gives."""
    principal = acting.acting_as(body.agent_id if body else None)
    return actor(principal), principal.agent_id, body.reason if body else None
