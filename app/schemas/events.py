from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from app.schemas.common import JsonObject, ReadSchema, SafeText, Schema, Slug, Timestamp

MAX_EVENTS_PER_APPEND = 1000
MAX_CONTENT_CHARS = 32_000


class EventIn(Schema):
    role: Literal["user", "assistant", "system", "tool"]
    content: SafeText = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    speaker: SafeText | None = Field(default=None, max_length=256)
    occurred_at: Timestamp | None = Field(
        default=None, description="RFC 3339; without an offset it is read in the bank's timezone."
    )
    external_id: SafeText | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="Client id of the turn; a repeat in the same session is not appended again.",
    )
    metadata: JsonObject = Field(default_factory=dict)


class AppendRequest(Schema):
    events: list[EventIn] = Field(min_length=1, max_length=MAX_EVENTS_PER_APPEND)
    agent_id: Slug | None = Field(
        default=None,
        description="The agent appending (also the `X-Agent-Id` header): only when the key names no agent, "
        "or with the admin key. The units distilled from these turns are recorded as this agent's.",
    )


class AppendResult(ReadSchema):
    session_id: str
    appended: int
    first_seq: int | None = Field(description="Seq of the first appended event; null if all were duplicates.")
    last_seq: int | None
    duplicates: int
    distill_job_id: uuid.UUID | None = Field(
        default=None,
        description="The distillation these turns started (the session reached `distill_every_n_turns` "
        "undistilled turns); follow it at `GET /v1/jobs/{id}` until `searchable`. Null: none yet.",
    )


class EventRead(ReadSchema):
    id: int
    session_id: str
    seq: int
    role: str
    content: str
    speaker: str | None
    occurred_at: datetime
    external_id: str | None
    metadata: dict[str, object] = Field(validation_alias="metadata_")
    agent_id: str | None = Field(default=None, description="The agent that appended it.")
    proposed: bool = Field(
        default=False, description="Appended with a propose-only key: its distilled units wait for review."
    )
    created_at: datetime


class EventPage(ReadSchema):
    events: list[EventRead]
    next_cursor: str | None


class QuarantinedTurn(ReadSchema):
    seq: int
    reason: str = Field(description="What failed when the turn was distilled (never the turn's text).")
    job_id: uuid.UUID | None = Field(default=None, description="The distillation that left it out.")


class SessionRead(ReadSchema):
    session_id: str
    status: str
    last_seq: int
    distilled_seq: int
    created_at: datetime
    last_event_at: datetime | None
    quarantined: list[QuarantinedTurn] = Field(
        default_factory=list,
        description="Turns the distiller failed on: left out (no unit made from them), with the reason; "
        "the rest of the session was distilled and `distilled_seq` moved past them. The newest 100.",
    )


class SessionClosed(SessionRead):
    job_id: uuid.UUID | None = Field(description="The distillation of the session's tail, if it had one.")


class SessionPage(ReadSchema):
    sessions: list[SessionRead]
    next_cursor: str | None


class WorkingTurn(ReadSchema):
    seq: int
    role: str
    content: str
    speaker: str | None
    occurred_at: datetime


class WorkingMemoryRead(ReadSchema):
    session_id: str
    last_seq: int
    distilled_seq: int
    turns: list[WorkingTurn] = Field(description="The newest turns not yet distilled, in seq order.")
    source: Literal["redis", "events"] = Field(
        description="`events` when the Redis buffer did not hold them all and the log was read instead."
    )
