"""The usage reports: a bank's LLM calls (or every bank's, for the admin) in a window, grouped by UTC day,
operation or model, with tokens, latency, cost by the price table and today's budgets."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.repositories import usage as repo
from app.db.repositories.usage import UsageRow
from app.errors import Invalid
from app.schemas.common import as_aware
from app.schemas.usage import BudgetRead, BudgetSpending, GroupBy, UsageGroup, UsageReport, UsageTotals
from app.usage.budget import Budget, Prices, Spending, day_of

DEFAULT_WINDOW = timedelta(days=30)  # `since` when none is given: the last 30 days


async def bank_report(
    db: AsyncSession,
    budget: Budget,
    bank: ConfiguredBank,
    *,
    since: datetime | None,
    until: datetime | None,
    group_by: GroupBy,
) -> UsageReport:
    """The bank's usage in [since, until) (a timestamp without an offset read in its time zone)."""
    start, end = window(since, until, bank.timezone)
    rows = await repo.usage_rows(db, bank_id=bank.id, since=start, until=end, group_by=group_by)
    status = await budget.status(db, bank.id, bank.config)
    spent = status.exhausted
    today = BudgetRead(
        day=status.day,
        resets_at=status.resets_at,
        bank=BudgetSpending.of(status.bank),
        service=BudgetSpending.of(status.service),
        exhausted=spent.budget if spent is not None else None,
    )
    return _report(bank.id, start, end, group_by, budget.prices, rows, today)


async def service_report(
    db: AsyncSession,
    budget: Budget,
    *,
    since: datetime | None,
    until: datetime | None,
    group_by: GroupBy,
) -> UsageReport:
    """Every bank's usage in [since, until) (a timestamp without an offset read in UTC), with the calls
    charged to no bank."""
    start, end = window(since, until, UTC)
    rows = await repo.usage_rows(db, bank_id=None, since=start, until=end, group_by=group_by)
    day, day_start, resets_at = day_of(datetime.now(UTC))
    spent = await repo.spent_by_model(db, day_start)
    service = Spending(
        "global",
        sum(p + c for p, c in spent.values()),
        budget.prices.total(spent),
        budget.daily_tokens,
        budget.daily_cost,
    )
    today = BudgetRead(
        day=day,
        resets_at=resets_at,
        bank=None,
        service=BudgetSpending.of(service),
        exhausted="global" if service.spent else None,
    )
    return _report(None, start, end, group_by, budget.prices, rows, today)


def window(since: datetime | None, until: datetime | None, tz: tzinfo) -> tuple[datetime, datetime]:
    """[since, until): `until` defaults to now, `since` to DEFAULT_WINDOW before it; 422 unless
    since < until."""
    end = as_aware(until, tz) if until is not None else datetime.now(UTC)
    start = as_aware(since, tz) if since is not None else end - DEFAULT_WINDOW
    if start >= end:
        raise Invalid(
            "`since` must be before `until`.",
            errors=[{"loc": ["query", "since"], "msg": "must be before until", "type": "value_error"}],
        )
    return start, end


def _report(
    bank_id: str | None,
    since: datetime,
    until: datetime,
    group_by: GroupBy,
    prices: Prices,
    rows: list[UsageRow],
    today: BudgetRead,
) -> UsageReport:
    keys = list(dict.fromkeys(row.key for row in rows))
    groups = [
        UsageGroup(key=key, **_totals((r for r in rows if r.key == key), prices).model_dump()) for key in keys
    ]
    return UsageReport(
        bank_id=bank_id,
        since=since,
        until=until,
        group_by=group_by,
        currency=prices.currency,
        totals=_totals(rows, prices),
        groups=groups,
        budget=today,
    )


def _totals(rows: Iterable[UsageRow], prices: Prices) -> UsageTotals:
    rows = list(rows)
    calls = sum(r.calls for r in rows)
    prompt = sum(r.prompt_tokens for r in rows)
    completion = sum(r.completion_tokens for r in rows)
    costs = [(r, prices.cost(r.model, r.prompt_tokens, r.completion_tokens)) for r in rows]
    priced = [c for _, c in costs if c is not None]
    return UsageTotals(
        calls=calls,
        failed_calls=sum(r.failed_calls for r in rows),
        estimated_calls=sum(r.estimated_calls for r in rows),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        latency_ms_avg=round(sum(r.latency_ms_total for r in rows) / calls, 1) if calls else None,
        latency_ms_max=max((r.latency_ms_max for r in rows), default=None),
        cost=round(sum(priced), 6) if priced else None,
        unpriced_tokens=sum(r.prompt_tokens + r.completion_tokens for r, c in costs if c is None),
    )
