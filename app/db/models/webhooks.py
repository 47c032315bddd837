from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, ForeignKey, Identity, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_at_column


class Webhook(Base):
    """A bank's subscription: where to POST which events, and the secret they are signed with."""

    __tablename__ = "webhooks"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    bank_id: Mapped[str] = mapped_column(String(128), ForeignKey("banks.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)
    events: Mapped[list[str]] = mapped_column(ARRAY(Text))
    secret: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()


class WebhookDelivery(Base):
    """One event for one hook: the outbox row, written with the change, and its delivery's record."""

    __tablename__ = "webhook_deliveries"

    seq: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    id: Mapped[uuid.UUID] = mapped_column(unique=True, default=uuid.uuid4)  # the `webhook-id` header
    webhook_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    bank_id: Mapped[str] = mapped_column(String(128), ForeignKey("banks.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(Text, server_default="pending")
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    next_attempt_at: Mapped[datetime] = mapped_column(server_default=func.now())
    first_attempt_at: Mapped[datetime | None]  # its day of retries counts from here
    last_attempt_at: Mapped[datetime | None]
    response_code: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()
    finished_at: Mapped[datetime | None]
