from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Identity, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_at_column


class LLMCallRecord(Base):
    """The ledger: one row per request to the LLM, whoever made it (app.providers.metering.LLMCall). It
    outlives the bank it charged (no foreign key): deleting a bank refunds nothing against a budget."""

    __tablename__ = "llm_calls"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    bank_id: Mapped[str | None] = mapped_column(String(128))
    job_id: Mapped[uuid.UUID | None]
    operation: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    estimated: Mapped[bool] = mapped_column(Boolean)
    latency_ms: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()


class BudgetExhaustion(Base):
    """A bank's day whose budget ran out: written once, so `budget.exhausted` fires once a day."""

    __tablename__ = "llm_budget_exhaustions"

    bank_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("banks.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(primary_key=True)
    budget: Mapped[str] = mapped_column(Text)  # which one ran out first: bank or global
    created_at: Mapped[datetime] = created_at_column()
