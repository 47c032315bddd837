"""The timeline ("memory replay") of a bank: one item per write or read, in time order."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, field_validator

from app.db.repositories.timeline import KIND_RANK, TimelinePosition, TimelineRow
from app.errors import BadRequest
from app.schemas.common import ReadSchema, decode_cursor, encode_cursor, page_of, parse_choices

TimelineKind = Literal["event", "memory", "query", "job"]
TIMELINE_KINDS: tuple[TimelineKind, ...] = ("event", "memory", "query", "job")
# A position's tie-break key: a zero-padded row id, or a job id's hex digits and its phase (0, 1).
_KEY = re.compile(r"\d{20}|[0-9a-f]{32}[01]")


class _Item(ReadSchema):
    at: datetime = Field(description="When it happened (server time of the write or read).")
    id: str = Field(description="Unique within the timeline: `event:42`, `memory:7`, `job:<uuid>:finished`.")


class EventItem(_Item):
    """A turn appended to a session."""

    kind: Literal["event"]
    session_id: str
    seq: int
    role: str
    speaker: str | None
    event_id: int
    agent_id: str | None = Field(default=None, description="The agent that appended it.")
    occurred_at: datetime = Field(description="The client's time of the turn.")
    content: str = Field(description="The first 280 characters of the turn.")
    content_truncated: bool


class MemoryItem(_Item):
    """A unit's transition: one memory_history row (`created`, `activated`, `superseded`, …)."""

    kind: Literal["memory"]
    memory_id: uuid.UUID
    action: str
    actor: str
    agent_id: str | None = Field(default=None, description="The agent that acted, when one was named.")
    unit_agent_id: str | None = Field(default=None, description="The agent that wrote the unit.")
    details: dict[str, Any] = Field(description="Carries `from` and `to` statuses; never content.")
    session_id: str | None = Field(description="The session the unit was distilled from, if any.")
    content: str | None = Field(
        description="The unit's current content (first 280 characters); null when purged or gone."
    )
    content_truncated: bool

    @field_validator("details")
    @classmethod
    def _without_content(cls, details: dict[str, Any]) -> dict[str, Any]:
        # A purge erases a unit's content; history must not keep a copy of it around.
        return {key: value for key, value in details.items() if "content" not in key.lower()}


class QueryItem(_Item):
    """A query of the bank and the unit ids it returned."""

    kind: Literal["query"]
    query: str
    params: dict[str, Any]
    result_ids: list[uuid.UUID]
    took_ms: float


class JobItem(_Item):
    """A background job, once when it was created and once more when it finished."""

    kind: Literal["job"]
    job_id: uuid.UUID
    job_kind: str = Field(description="e.g. `distill.session`, `resolve.bank`.")
    phase: Literal["created", "finished"]
    status: str = Field(description="`queued` when created; the final status when finished.")
    error: str | None


TimelineItem = Annotated[EventItem | MemoryItem | QueryItem | JobItem, Field(discriminator="kind")]
_items: TypeAdapter[list[TimelineItem]] = TypeAdapter(list[TimelineItem])


class TimelinePage(ReadSchema):
    items: list[TimelineItem]
    next_cursor: str | None

    @classmethod
    def from_rows(cls, rows: list[TimelineRow], limit: int) -> TimelinePage:
        """`rows` holds up to `limit + 1` rows (see `page_of`)."""
        page, next_cursor = page_of(rows, limit, lambda last: encode_position(last.position))
        items = _items.validate_python([{**row.item, "at": row.at} for row in page])
        return cls(items=items, next_cursor=next_cursor)


def parse_kinds(raw: str | None) -> list[TimelineKind]:
    """`event,memory` → the kinds; none given means all of them; an unknown one is a 422."""
    names = parse_choices(raw, "kinds", "kind", TIMELINE_KINDS, TIMELINE_KINDS)
    return [kind for kind in TIMELINE_KINDS if kind in names]


def encode_position(position: TimelinePosition) -> str:
    return encode_cursor("after", f"{position.at.isoformat()}|{position.rank}|{position.key}")


def decode_position(cursor: str | None) -> TimelinePosition | None:
    """The position a timeline cursor holds; 400 for anything else."""
    value = decode_cursor(cursor, "after", str)
    if value is None:
        return None
    try:
        at, rank, key = value.split("|", 2)
        position = TimelinePosition(datetime.fromisoformat(at), int(rank), key)
    except ValueError as exc:
        raise BadRequest("The cursor is not valid.") from exc
    if (
        position.at.tzinfo is None
        or position.rank not in KIND_RANK.values()
        or not _KEY.fullmatch(position.key)
    ):
        raise BadRequest("The cursor is not valid.")
    return position
