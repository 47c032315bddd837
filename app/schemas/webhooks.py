from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal, get_args

from pydantic import Field

from app.schemas.common import ReadSchema, SafeText, Schema

EventType = Literal[
    "memory.created",
    "memory.superseded",
    "memory.merged",
    "memory.forgotten",
    "session.distilled",
    "job.failed",
    "budget.exhausted",
]


# An absolute http(s) URL: a host name or IPv4 address (IPv6 in brackets), an optional port, path and
# query; no credentials (the signature authenticates the sender).
URL_PATTERN = (
    r"^https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])"  # host
    r"(?::[0-9]{1,5})?(?:[/?][\x21-\x7e]*)?$"  # port, path and query
)


class WebhookCreate(Schema):
    url: SafeText = Field(
        max_length=2048,
        pattern=URL_PATTERN,
        description="http(s) URL the events are POSTed to. Private, loopback and link-local targets are "
        "refused unless the server sets HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true.",
        examples=["https://example.com/hooks/hindsight"],
    )
    events: list[EventType] = Field(
        min_length=1, max_length=len(get_args(EventType)), examples=[["memory.created"]]
    )


class WebhookRead(ReadSchema):
    id: uuid.UUID
    bank_id: str
    url: str
    events: list[str]
    created_at: datetime


class WebhookCreated(WebhookRead):
    secret: str = Field(
        description="The Standard Webhooks signing secret (`whsec_…`), shown once: verify each request's "
        "`webhook-signature` with it."
    )


class WebhookPage(ReadSchema):
    webhooks: list[WebhookRead]
    next_cursor: str | None


class DeliveryRead(ReadSchema):
    id: str = Field(description="The `webhook-id` header the receiver sees (the same on every retry).")
    event: str
    status: Literal["pending", "succeeded", "failed"] = Field(
        description="`pending`: not delivered yet (or being retried); `failed`: given up after the retries."
    )
    attempts: int
    response_code: int | None = Field(description="The status code of the last attempt's answer.")
    latency_ms: float | None = Field(description="How long the last attempt took.")
    error: str | None = Field(description="Why the last attempt failed (the response body is never kept).")
    payload: dict[str, object]
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    finished_at: datetime | None


class DeliveryPage(ReadSchema):
    deliveries: list[DeliveryRead]
    next_cursor: str | None
