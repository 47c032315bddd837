from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKeyConstraint, Identity, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_at_column


class ChatSession(Base):
    """A conversation of one agent in one bank; `seq` watermarks drive distillation."""

    __tablename__ = "sessions"

    bank_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    status: Mapped[str] = mapped_column(Text, server_default="open")
    last_seq: Mapped[int] = mapped_column(BigInteger, server_default="0")
    distilled_seq: Mapped[int] = mapped_column(BigInteger, server_default="0")
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", server_default="{}")
    # Turns a distillation left out because the distiller failed on them: [{seq, reason, job_id}].
    quarantined: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, server_default="[]")
    created_at: Mapped[datetime] = created_at_column()
    last_event_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]


class Event(Base):
    """One raw turn, append-only (a trigger refuses UPDATE and DELETE outside a bank purge)."""

    __tablename__ = "events"
    __table_args__ = (
        ForeignKeyConstraint(
            ["bank_id", "session_id"],
            ["sessions.bank_id", "sessions.session_id"],
            ondelete="CASCADE",
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    bank_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(128))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    speaker: Mapped[str | None] = mapped_column(Text)
    occurred_at: Mapped[datetime]
    external_id: Mapped[str | None] = mapped_column(Text)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", server_default="{}")
    agent_id: Mapped[str | None] = mapped_column(Text)  # the agent that appended it
    proposed: Mapped[bool] = mapped_column(server_default="false")  # appended with a propose-only key
    created_at: Mapped[datetime] = created_at_column()
