"""The graph's and the timeline's resources as pydantic models (entities, relations, the replay's items),
as `_models` keeps the rest: fields the server adds later are kept, kinds are plain strings."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from hindsight_memory._models import EntityRef, Model

# The public models (the package exports these).
__all__ = [
    "Entity",
    "EntityDetail",
    "EventItem",
    "JobItem",
    "MemoryItem",
    "QueryItem",
    "TimelineItem",
]


class Entity(Model):
    id: str
    name: str
    type: str
    mentions: int = 0
    created_at: datetime
    updated_at: datetime


class Relation(Model):
    id: str
    subject: EntityRef
    relation: str
    object: EntityRef
    memory_id: str | None = None
    confidence: float


class EntityMemory(Model):
    id: str
    content: str
    tags: list[str]
    status: str
    confidence: float
    importance: float
    created_at: datetime


class EntityDetail(Model):
    entity: Entity
    relations: list[Relation] = Field(default_factory=list)
    memories: list[EntityMemory] = Field(default_factory=list)


class TimelineItem(Model):
    """One write or read of the bank; `kind` says which (items of a kind this client does not know
    come as this base model, their fields as extra attributes)."""

    kind: str
    id: str
    at: datetime


class EventItem(TimelineItem):
    kind: Literal["event"]
    session_id: str
    seq: int
    role: str
    content: str


class MemoryItem(TimelineItem):
    kind: Literal["memory"]
    memory_id: str
    action: str
    actor: str
    details: dict[str, Any] = Field(default_factory=dict)
    content: str | None = None


class QueryItem(TimelineItem):
    kind: Literal["query"]
    query: str
    result_ids: list[str] = Field(default_factory=list)


class JobItem(TimelineItem):
    kind: Literal["job"]
    job_id: str
    job_kind: str
    phase: str
    status: str


_KNOWN_KINDS = frozenset({"event", "memory", "query", "job"})


def _timeline_kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in _KNOWN_KINDS else "other"


AnyTimelineItem = Annotated[
    Annotated[EventItem, Tag("event")]
    | Annotated[MemoryItem, Tag("memory")]
    | Annotated[QueryItem, Tag("query")]
    | Annotated[JobItem, Tag("job")]
    | Annotated[TimelineItem, Tag("other")],
    Discriminator(_timeline_kind),
]


class TimelinePage(Model):
    items: list[AnyTimelineItem]
    next_cursor: str | None = None
