from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypedDict

from fastapi import APIRouter, Depends, Query

from app.api.deps import AdminDep, BankDep, ReadSessionDep, SettingsDep, reads_only
from app.schemas.common import Timestamp
from app.schemas.problems import ADMIN_ONLY, IN_A_BANK, problem_responses
from app.schemas.usage import GroupBy, UsageReport
from app.usage import service
from app.usage.budget import Budget

router = APIRouter(tags=["usage"], dependencies=[Depends(reads_only)], responses=problem_responses(422))

Since = Annotated[
    Timestamp | None,
    Query(description="Start of the window, inclusive (RFC 3339); default: 30 days before `until`."),
]
Until = Annotated[
    Timestamp | None, Query(description="End of the window, exclusive (RFC 3339); default: now.")
]
Grouping = Annotated[GroupBy, Query(description="Cut the window by UTC `day`, `operation` or `model`.")]


class Window(TypedDict):
    since: datetime | None
    until: datetime | None
    group_by: GroupBy


def report_window(since: Since = None, until: Until = None, group_by: Grouping = "day") -> Window:
    """Read the window a usage report covers and how it is grouped, as both reports take them."""
    return {"since": since, "until": until, "group_by": group_by}


WindowDep = Annotated[Window, Depends(report_window)]


@router.get("/v1/banks/{bank_id}/usage", response_model=UsageReport, responses=IN_A_BANK)
async def bank_usage(
    bank: BankDep, db: ReadSessionDep, settings: SettingsDep, window: WindowDep
) -> UsageReport:
    """The bank's LLM calls in a window (the distiller's, the judge's, the merge summary's): calls,
    prompt and completion tokens, latency and, with a price table, cost; grouped by UTC day, operation
    or model; with today's budgets. A timestamp without an offset is read in the bank's `timezone`."""
    return await service.bank_report(db, Budget.from_settings(settings), bank, **window)


@router.get("/v1/admin/usage", response_model=UsageReport, tags=["admin"], responses=ADMIN_ONLY)
async def service_usage(
    db: ReadSessionDep, settings: SettingsDep, _: AdminDep, window: WindowDep
) -> UsageReport:
    """Every bank's LLM calls in a window (admin key), as the bank report counts them, with the
    service-wide budget. A timestamp without an offset is read in UTC."""
    return await service.service_report(db, Budget.from_settings(settings), **window)
