from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_at_column


class Bank(Base):
    __tablename__ = "banks"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    name: Mapped[str | None] = mapped_column(Text)
    config: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    name: Mapped[str | None] = mapped_column(Text)
    key_hash: Mapped[str] = mapped_column(Text, unique=True)
    key_prefix: Mapped[str] = mapped_column(Text)
    scopes: Mapped[list[str]] = mapped_column(ARRAY(Text))
    agent_id: Mapped[str | None] = mapped_column(Text)  # the agent this key's writes are recorded as
    created_at: Mapped[datetime] = created_at_column()
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]
