"""Bank export and import (NDJSON)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request, status
from fastapi.responses import StreamingResponse

from app.api.deps import AdminForBankDep, BankDep, SessionDep, SettingsDep
from app.portability.export import export_bank
from app.portability.import_ import import_bank
from app.schemas.common import Slug
from app.schemas.portability import ImportResult
from app.schemas.problems import CONFLICT, IN_A_BANK, problem_responses

router = APIRouter(prefix="/v1/banks", tags=["banks"])

NDJSON = "application/x-ndjson"
_STREAM_SCHEMA = {
    "type": "string",
    "description": "One JSON object per line; see docs/guides/export-import.md.",
}
# The smallest stream an import takes: an empty bank (a bank line, an end line).
_EMPTY_BANK = (
    '{"type":"bank","format":"hindsight.bank","version":1,"bank_id":"example","name":null,"config":{},'
    '"events":true,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}\n'
    '{"type":"end","counts":{}}\n'
)


@router.get(
    "/{bank_id}/export",
    response_class=StreamingResponse,
    responses={
        **IN_A_BANK,
        200: {"description": "The bank as NDJSON lines", "content": {NDJSON: {"schema": _STREAM_SCHEMA}}},
    },
)
async def export(bank: BankDep, request: Request, events: bool = True) -> StreamingResponse:
    """Export the bank as NDJSON from one consistent snapshot (admin key or a bank key with `read`):
    a `bank` line, then `session`, `event`, `memory`, `entity`, `link`, `relation` and `history` lines
    and an `end` line with the counts. No vectors. `?events=false` leaves the raw events out."""
    # From the read replica when one answers (REPEATABLE READ works on a hot standby), else the primary.
    engine = await request.app.state.reads.read_engine(request.app.state.engine)
    stream = export_bank(engine, bank.id, include_events=events)
    filename = f"{bank.id}.ndjson"
    return StreamingResponse(
        stream, media_type=NDJSON, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )


@router.post(
    "/{bank_id}/import",
    status_code=status.HTTP_201_CREATED,
    response_model=ImportResult,
    responses={**IN_A_BANK, **CONFLICT, **problem_responses(413)},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {NDJSON: {"schema": _STREAM_SCHEMA, "example": _EMPTY_BANK}},
        }
    },
)
async def import_(
    bank_id: Slug,
    request: Request,
    db: SessionDep,
    settings: SettingsDep,
    _: AdminForBankDep,
) -> ImportResult:
    """Create `bank_id` from an export (admin key): the body is read as a stream, up to
    `HINDSIGHT_IMPORT_MAX_BYTES`. All or nothing: a bad line answers 422 naming the line and field and
    creates nothing; an existing bank is 409. Ids are new, references kept; a `reembed` job builds the
    vectors (queries answer from the other channels meanwhile)."""
    job, counts = await import_bank(db, bank_id, request.stream(), max_bytes=settings.import_max_bytes)
    return ImportResult(bank_id=bank_id, counts=counts, job_id=job.id, created_at=datetime.now(UTC))
