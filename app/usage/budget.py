"""Daily LLM budgets, a bank's (its config's `llm_daily_tokens`, `llm_daily_cost`) and the service's
(`HINDSIGHT_LLM_DAILY_TOKENS`, `HINDSIGHT_LLM_DAILY_COST`), over UTC days, and the price table that turns
tokens into money.

A budget is spent once the day's tokens (or cost) reach it; the work that finds it spent does without the
LLM for that bank (the distiller falls back to the heuristic one, the judge and the merge summary are
skipped) until the day ends. The first finder of a bank's day writes it down and tells the bank's hooks
(`budget.exhausted`) in that work's transaction: once a day (a finder that rolls back tells nothing; the
next one does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import BankConfig
from app.config import ModelPrice, Settings
from app.db.repositories import usage as repo
from app.metrics import LLM_BUDGET_EXHAUSTED, LLM_FALLBACKS
from app.webhooks import emit as webhooks

MILLION = 1_000_000


@dataclass(frozen=True)
class Prices:
    """Model → price per million prompt and completion tokens; a model without one has no cost."""

    table: Mapping[str, ModelPrice] = field(default_factory=dict)
    currency: str = "USD"

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.table.get(model)
        if price is None:
            return None
        return (prompt_tokens * price.prompt + completion_tokens * price.completion) / MILLION

    def total(self, spent: Mapping[str, tuple[int, int]]) -> float | None:
        """The cost of `spent` (model → prompt, completion tokens) over the priced models; None when
        none is priced."""
        costs = [c for model, (p, k) in spent.items() if (c := self.cost(model, p, k)) is not None]
        return sum(costs) if costs else None


def day_of(now: datetime) -> tuple[date, datetime, datetime]:
    """The UTC day of `now`, when it began and when it ends (the window's reset)."""
    day = now.astimezone(UTC).date()
    start = datetime.combine(day, time(), tzinfo=UTC)
    return day, start, start + timedelta(days=1)


@dataclass(frozen=True)
class Spending:
    """What was spent in a day against one budget (the bank's, or everyone's for the global one)."""

    budget: Literal["bank", "global"]
    tokens: int
    cost: float | None
    limit_tokens: int | None
    limit_cost: float | None

    @property
    def spent(self) -> bool:
        over_tokens = self.limit_tokens is not None and self.tokens >= self.limit_tokens
        over_cost = self.limit_cost is not None and (self.cost or 0.0) >= self.limit_cost
        return over_tokens or over_cost


@dataclass(frozen=True)
class BudgetStatus:
    """A bank's day: its own spending, the service's, and which budget (if any) is spent."""

    day: date
    resets_at: datetime
    bank: Spending
    service: Spending

    @property
    def exhausted(self) -> Spending | None:
        """The spent budget, the bank's first; None while the LLM may be used."""
        return next((s for s in (self.bank, self.service) if s.spent), None)

    def reason(self) -> dict[str, Any]:
        """Why the LLM was not used, for a job's result and the webhook event."""
        spent = self.exhausted
        assert spent is not None
        return {
            "reason": "budget.exhausted",
            "budget": spent.budget,
            "day": self.day.isoformat(),
            "resets_at": self.resets_at.isoformat(),
            "tokens": spent.tokens,
            "cost": spent.cost,
            "limit_tokens": spent.limit_tokens,
            "limit_cost": spent.limit_cost,
        }


@dataclass(frozen=True)
class Budget:
    """The service's budget and prices; a bank's own budget comes with its config."""

    daily_tokens: int | None = None
    daily_cost: float | None = None
    prices: Prices = field(default_factory=Prices)

    @classmethod
    def from_settings(cls, settings: Settings) -> Budget:
        return cls(
            daily_tokens=settings.llm_daily_tokens,
            daily_cost=settings.llm_daily_cost,
            prices=Prices(settings.llm_prices, settings.llm_price_currency),
        )

    async def status(
        self, db: AsyncSession, bank_id: str, config: BankConfig, now: datetime | None = None
    ) -> BudgetStatus:
        """The bank's day so far (two indexed sums; the service's only when it has a budget)."""
        day, start, resets_at = day_of(now or datetime.now(UTC))
        mine = await repo.spent_by_model(db, start, bank_id)
        everyone = (
            await repo.spent_by_model(db, start)
            if self.daily_tokens is not None or self.daily_cost is not None
            else {}
        )
        return BudgetStatus(
            day=day,
            resets_at=resets_at,
            bank=self._spending("bank", mine, config.llm_daily_tokens, config.llm_daily_cost),
            service=self._spending("global", everyone, self.daily_tokens, self.daily_cost),
        )

    def _spending(
        self,
        budget: Literal["bank", "global"],
        spent: Mapping[str, tuple[int, int]],
        limit_tokens: int | None,
        limit_cost: float | None,
    ) -> Spending:
        tokens = sum(p + c for p, c in spent.values())
        return Spending(budget, tokens, self.prices.total(spent), limit_tokens, limit_cost)

    async def exhausted(
        self, db: AsyncSession, bank_id: str, config: BankConfig, operation: str
    ) -> BudgetStatus | None:
        """The bank's status when a budget is spent (the first finder of the day writes it down and
        fires `budget.exhausted`, in `db`'s transaction), else None: `operation` may call the LLM."""
        if config.llm_daily_tokens is None and config.llm_daily_cost is None:
            if self.daily_tokens is None and self.daily_cost is None:
                return None  # no budget anywhere: no sums to read
        status = await self.status(db, bank_id, config)
        spent = status.exhausted
        if spent is None:
            return None
        LLM_FALLBACKS.labels(operation).inc()
        if await repo.note_exhaustion(db, bank_id, status.day, spent.budget):
            LLM_BUDGET_EXHAUSTED.labels(spent.budget).inc()
            await webhooks.budget_exhausted(db, bank_id, {**status.reason(), "operation": operation})
        return status
