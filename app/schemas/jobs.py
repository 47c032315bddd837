from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from app.schemas.common import ReadSchema


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
