from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.banks.config import BankConfig, ChannelWeights
from app.schemas.common import ReadSchema, SafeText, Schema, Slug

# BankConfig lives in app/banks/config.py; importers of app.schemas.banks keep finding it here.
__all__ = [
    "BankConfig",
    "BankCreate",
    "BankPage",
    "BankRead",
    "BankStats",
    "BankUpdate",
    "ChannelWeights",
    "KeyCreate",
    "KeyCreated",
]


class BankCreate(Schema):
    bank_id: Slug
    name: SafeText | None = Field(default=None, max_length=256)
    config: BankConfig = Field(default_factory=BankConfig)


class BankUpdate(Schema):
    name: SafeText | None = Field(default=None, max_length=256)
    config: dict[str, Any] | None = None  # merged into the current config, then validated whole


class BankRead(ReadSchema):
    bank_id: str = Field(validation_alias="id")
    name: str | None
    config: BankConfig
    created_at: datetime
    updated_at: datetime


class BankPage(ReadSchema):
    banks: list[BankRead]
    next_cursor: str | None


class KeyCreate(Schema):
    scopes: list[Literal["read", "write", "propose", "review"]] = Field(
        default=["read", "write"],
        min_length=1,
        description="`read`, `write`; `propose`: writes wait as `proposed` units until a key with `review` "
        "accepts or rejects them (a key with `write` too writes directly).",
    )
    name: SafeText | None = Field(default=None, max_length=256)
    agent_id: Slug | None = Field(
        default=None,
        description="The agent this key acts as: every write with it is recorded as this agent's.",
        examples=["planner"],
    )


class KeyCreated(ReadSchema):
    id: uuid.UUID
    bank_id: str
    key: str = Field(description="Shown once; only a hash is stored.")
    scopes: list[str]
    name: str | None
    agent_id: str | None = None
    created_at: datetime


class BankStats(ReadSchema):
    bank_id: str
    memories_by_status: dict[str, int]
    memories_by_tag: dict[str, int]
    memories_by_layer: dict[str, int]
    sessions: int
    events: int
    undistilled_events: int
    queued_jobs: int = Field(description="The bank's jobs waiting for a worker.")
    running_jobs: int = Field(description="The bank's jobs a worker is running now (a distillation, say).")
    queue_lag_seconds: float
    maintenance: dict[str, dict[str, Any]] = Field(
        description="The last finished run of each maintenance task: when, and what it changed in this bank."
    )
