"""The LLM usage report (`GET /v1/banks/{bank_id}/usage`, `GET /v1/admin/usage`)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import Field

from app.schemas.common import ReadSchema

GroupBy = Literal["day", "operation", "model"]


class UsageTotals(ReadSchema):
    calls: int = Field(description="LLM requests (each corrective retry and refused request counts).")
    failed_calls: int = Field(description="Requests without a usable reply: invalid, refused or failed.")
    estimated_calls: int = Field(
        description="Requests whose server reported no `usage`: their tokens are estimates."
    )
    prompt_tokens: int = Field(description="Prompt (input) tokens.")
    completion_tokens: int = Field(description="Completion (output) tokens.")
    total_tokens: int = Field(description="Prompt and completion tokens.")
    latency_ms_avg: float | None = Field(description="Mean request latency in milliseconds; null: no calls.")
    latency_ms_max: int | None = Field(description="Slowest request in milliseconds; null: no calls.")
    cost: float | None = Field(
        description="What the calls cost by the price table (`HINDSIGHT_LLM_PRICES`, per million tokens), "
        "in `currency`; null when none of their models has a price."
    )
    unpriced_tokens: int = Field(description="Tokens of calls to models without a price (not in `cost`).")


class UsageGroup(UsageTotals):
    key: str = Field(description="The group: a UTC day (YYYY-MM-DD), an operation or a model.")


class BudgetSpending(ReadSchema):
    tokens: int = Field(description="Tokens spent today (UTC) against this budget.")
    cost: float | None = Field(description="Their cost by the price table; null without prices.")
    limit_tokens: int | None = Field(description="The budget in tokens per day; null: none.")
    limit_cost: float | None = Field(description="The budget in money per day; null: none.")
    spent: bool = Field(description="Whether the budget is spent (the LLM is not used until it resets).")


class BudgetRead(ReadSchema):
    day: date = Field(description="The budget's day (UTC).")
    resets_at: datetime = Field(description="When the day ends and the budgets are whole again.")
    bank: BudgetSpending | None = Field(description="The bank's own budget (bank reports only).")
    service: BudgetSpending = Field(description="The service-wide budget, over every bank.")
    exhausted: Literal["bank", "global"] | None = Field(
        description="Which budget is spent, if any: the bank then distils with the heuristic distiller and "
        "skips the judge and the merge summary until `resets_at`."
    )


class UsageReport(ReadSchema):
    bank_id: str | None = Field(description="The bank reported on; null for every bank (admin).")
    since: datetime = Field(description="Start of the window (inclusive).")
    until: datetime = Field(description="End of the window (exclusive).")
    group_by: GroupBy = Field(description="How `groups` are cut: by UTC day, operation or model.")
    currency: str = Field(description="The price table's currency.")
    totals: UsageTotals = Field(description="The whole window.")
    groups: list[UsageGroup] = Field(description="The window by `group_by`, in key order.")
    budget: BudgetRead = Field(description="Today's budgets and what they have left.")
