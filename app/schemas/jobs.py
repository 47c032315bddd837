from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.schemas.common import ReadSchema, Schema, Slug, Timestamp


class JobRead(ReadSchema):
    id: uuid.UUID = Field(description="The job's id.")
    bank_id: str | None = Field(description="The bank it works on; null for a maintenance run of every bank.")
    kind: str = Field(description="What it does: `distill.session`, `resolve.bank`, `maintenance.sweep`, …")
    status: Literal["queued", "running", "succeeded", "failed"] = Field(description="Where it is.")
    progress: dict[str, Any] = Field(description="What it has done so far (counts), while it runs.")
    result: dict[str, Any] | None = Field(
        description="What it did, once succeeded. A distillation: `events`, `units`, "
        "`dropped_low_confidence`, `distilled_seq`, `resolve_job_ids` (the jobs that resolve its units)."
    )
    error: str | None = Field(description="Why it failed (its last attempt's error).")
    attempts: int = Field(description="How many times a worker has started it.")
    created_at: datetime = Field(description="When it was queued.")
    started_at: datetime | None = Field(description="When a worker last started it.")
    finished_at: datetime | None = Field(description="When it succeeded or failed.")
    searchable: bool | None = Field(
        default=None,
        description="A session's distillation only (else null): true once it succeeded and every unit "
        "it wrote is resolved (no longer `pending`), so a query finds them; `succeeded` alone means the "
        "units are stored, their resolution may still be running.",
    )


class JobAccepted(ReadSchema):
    job_id: uuid.UUID = Field(description="Follow it at `GET /v1/jobs/{job_id}`.")


class DistillAccepted(JobAccepted):
    job: JobRead | None = Field(
        default=None,
        description="With `?wait=true`: the job as it stood when the wait ended (`searchable` true, or "
        "`failed`, or still going when the bound ran out).",
    )


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
    now: Timestamp | None = Field(
        default=None,
        description="The time the task works with (default: now); without an offset, read in the bank's "
        "timezone (UTC for every bank).",
    )
    force: bool = Field(
        default=False,
        description="Expire and decay: archive more than a bank's `max_forget_share` of its active units "
        "in this run (the guard against a wrong clock or rule refuses such a run otherwise).",
    )
