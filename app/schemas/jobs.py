from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.schemas.common import AwareTimestamp, ReadSchema, Schema, Slug


class JobRead(ReadSchema):
    id: uuid.UUID
    bank_id: str | None
    kind: str
    status: Literal["queued", "running", "succeeded", "failed"]
    progress: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class JobAccepted(ReadSchema):
    job_id: uuid.UUID


class RedistillRequest(Schema):
    session_ids: list[Slug] | None = Field(
        default=None, min_length=1, max_length=1000, description="Default: every session of the bank."
    )
    distiller: Literal["heuristic", "llm"] | None = Field(
        default=None, description="Default: the configured one."
    )
    dry_run: bool = Field(default=False, description="Only compute the diff; change nothing.")


class MaintenanceRequest(Schema):
    bank_id: Slug | None = Field(default=None, description="Only this bank (merge then runs at once).")
    now: AwareTimestamp | None = Field(
        default=None, description="The time the task works with (default: now)."
    )
    force: bool = Field(
        default=False,
        description="Expire and decay: archive more than a bank's `max_forget_share` of its active units "
        "in this run (the guard against a wrong clock or rule refuses such a run otherwise).",
    )
