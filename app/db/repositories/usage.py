"""The LLM ledger: a call's row, what a bank (or everyone) spent since an instant by model, the usage
report's groups, and the once-a-day note that a bank's budget ran out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from sqlalchemy import Date, Integer, cast, func, insert, literal, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import BudgetExhaustion, LLMCallRecord

GroupBy = Literal["day", "operation", "model"]


@dataclass(frozen=True)
class UsageRow:
    """One group's calls of one model (cost is priced per model, then summed by the service)."""

    key: str
    model: str
    calls: int
    failed_calls: int
    estimated_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms_total: int
    latency_ms_max: int


async def insert_call(db: AsyncSession, values: dict[str, Any]) -> None:
    await db.execute(insert(LLMCallRecord).values(**values))


def _utc_day() -> Any:
    return cast(func.timezone("UTC", LLMCallRecord.created_at), Date)


async def spent_by_model(
    db: AsyncSession, since: datetime, bank_id: str | None = None
) -> dict[str, tuple[int, int]]:
    """Prompt and completion tokens since `since`, by model: the bank's, or everyone's (None)."""
    stmt = (
        select(
            LLMCallRecord.model,
            func.sum(LLMCallRecord.prompt_tokens),
            func.sum(LLMCallRecord.completion_tokens),
        )
        .where(LLMCallRecord.created_at >= since)
        .group_by(LLMCallRecord.model)
    )
    if bank_id is not None:
        stmt = stmt.where(LLMCallRecord.bank_id == bank_id)
    return {model: (int(p or 0), int(c or 0)) for model, p, c in (await db.execute(stmt)).all()}


async def usage_rows(
    db: AsyncSession, *, bank_id: str | None, since: datetime, until: datetime, group_by: GroupBy
) -> list[UsageRow]:
    """The calls in [since, until), of the bank or of everyone (None), by group and model."""
    key: Any = {
        "day": func.to_char(_utc_day(), "YYYY-MM-DD"),
        "operation": LLMCallRecord.operation,
        "model": LLMCallRecord.model,
    }[group_by].label("key")
    stmt = (
        select(
            key,
            LLMCallRecord.model,
            func.count().label("calls"),
            func.count().filter(LLMCallRecord.outcome != "ok").label("failed_calls"),
            func.count().filter(LLMCallRecord.estimated).label("estimated_calls"),
            func.sum(LLMCallRecord.prompt_tokens).label("prompt_tokens"),
            func.sum(LLMCallRecord.completion_tokens).label("completion_tokens"),
            func.sum(LLMCallRecord.latency_ms).label("latency_ms_total"),
            func.max(LLMCallRecord.latency_ms).label("latency_ms_max"),
        )
        .where(LLMCallRecord.created_at >= since, LLMCallRecord.created_at < until)
        .group_by(key, LLMCallRecord.model)
        .order_by(key, LLMCallRecord.model)
    )
    if bank_id is not None:
        stmt = stmt.where(LLMCallRecord.bank_id == bank_id)
    return [
        UsageRow(
            key=str(row.key),
            model=row.model,
            calls=int(row.calls),
            failed_calls=int(row.failed_calls),
            estimated_calls=int(row.estimated_calls),
            prompt_tokens=int(row.prompt_tokens or 0),
            completion_tokens=int(row.completion_tokens or 0),
            latency_ms_total=int(row.latency_ms_total or 0),
            latency_ms_max=int(row.latency_ms_max or 0),
        )
        for row in (await db.execute(stmt)).all()
    ]


async def note_exhaustion(db: AsyncSession, bank_id: str, day: date, budget: str) -> bool:
    """Write that the bank's budget ran out on `day`; True only for the first writer of that day."""
    stmt = (
        pg_insert(BudgetExhaustion)
        .values(bank_id=bank_id, day=day, budget=budget)
        .on_conflict_do_nothing(index_elements=["bank_id", "day"])
        .returning(literal(1, Integer))
    )
    return (await db.execute(stmt)).first() is not None
