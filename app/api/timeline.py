from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.deps import BankDep, ReadSessionDep, reads_only
from app.schemas.common import Limit, Slug, Timestamp
from app.schemas.problems import IN_A_BANK, PAGINATED
from app.schemas.timeline import TimelinePage
from app.timeline import service as timeline_service

router = APIRouter(prefix="/v1/banks/{bank_id}", tags=["timeline"], responses=IN_A_BANK)


@router.get(
    "/timeline",
    response_model=TimelinePage,
    responses=PAGINATED,
    dependencies=[Depends(reads_only)],
)
async def get_timeline(
    bank: BankDep,
    db: ReadSessionDep,
    start: Annotated[
        Timestamp | None,
        Query(alias="from", description="Inclusive lower bound (RFC 3339)."),
    ] = None,
    end: Annotated[
        Timestamp | None, Query(alias="to", description="Exclusive upper bound (RFC 3339).")
    ] = None,
    kinds: Annotated[
        str | None,
        Query(
            description="Comma-separated: `event,memory,query,job` (default: all).", examples=["event,job"]
        ),
    ] = None,
    session_id: Annotated[
        Slug | None,
        Query(description="Only this session's events and units (and jobs and queries naming no other)."),
    ] = None,
    limit: Limit = 100,
    cursor: str | None = None,
) -> TimelinePage:
    """Replay the bank's memory: every write and read of the bank in ascending time order — appended
    turns (`event`), unit transitions from the history (`memory`: created, activated, superseded,
    merged, deleted, purged, …), queries with the ids they returned (`query`), and background jobs
    (`job`, once at creation and once more when finished). A timestamp without an offset is read in
    the bank's `timezone`. Ties at one instant list events, then units, queries and jobs."""
    return await timeline_service.timeline(
        db,
        bank,
        kinds=kinds,
        start=start,
        end=end,
        session_id=session_id,
        cursor=cursor,
        limit=limit,
    )
