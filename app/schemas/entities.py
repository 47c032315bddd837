"""Entities of a bank, the relations between them and the units that mention them."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from app.db.models.memory import MEMORY_STATUSES
from app.db.repositories.entities import EntityDetail, EntityRow, RelationRow
from app.errors import BadRequest
from app.schemas.common import ReadSchema, decode_cursor, encode_cursor, page_of, parse_choices

DEFAULT_STATUSES = ("active", "pending")


class RelationEnd(ReadSchema):
    """The subject or object of a relation."""

    id: uuid.UUID
    name: str
    type: str


class EntityRead(ReadSchema):
    id: uuid.UUID
    name: str
    type: str
    mentions: int = Field(description="Units linked to the entity, whatever their status.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: EntityRow) -> EntityRead:
        return cls.of(row.entity, mentions=row.mentions)


class EntityPage(ReadSchema):
    entities: list[EntityRead]
    next_cursor: str | None

    @classmethod
    def from_rows(cls, rows: list[EntityRow], limit: int) -> EntityPage:
        """`rows` holds up to `limit + 1` rows (see `page_of`)."""
        page, next_cursor = page_of(
            rows, limit, lambda last: encode_cursor("after", f"{last.entity.id}|{last.entity.canonical_name}")
        )
        return cls(entities=[EntityRead.from_row(row) for row in page], next_cursor=next_cursor)


class RelationRead(ReadSchema):
    id: uuid.UUID
    subject: RelationEnd
    relation: str = Field(examples=["lives_in"])
    object: RelationEnd
    memory_id: uuid.UUID | None = Field(description="The unit the relation was read from.")
    confidence: float

    @classmethod
    def from_row(cls, row: RelationRow) -> RelationRead:
        return cls.of(
            row.relation,
            subject=RelationEnd.model_validate(row.subject),
            object=RelationEnd.model_validate(row.object),
        )


class EntityMemory(ReadSchema):
    id: uuid.UUID
    content: str
    tags: list[str]
    status: str
    confidence: float
    importance: float
    created_at: datetime


class EntityDetailRead(ReadSchema):
    entity: EntityRead
    relations: list[RelationRead] = Field(description="Where the entity is subject or object, newest first.")
    memories: list[EntityMemory] = Field(description="Units that mention the entity, newest first.")

    @classmethod
    def from_detail(cls, detail: EntityDetail) -> EntityDetailRead:
        return cls(
            entity=EntityRead.from_row(detail.entity),
            relations=[RelationRead.from_row(r) for r in detail.relations],
            memories=[EntityMemory.model_validate(m) for m in detail.memories],
        )


def decode_entity_cursor(cursor: str | None) -> tuple[str, uuid.UUID] | None:
    """The (canonical name, id) an entity cursor holds; 400 for anything else."""
    value = decode_cursor(cursor, "after", str)
    if value is None:
        return None
    entity_id, sep, name = value.partition("|")
    try:
        parsed = uuid.UUID(entity_id)
        name.encode("utf-8")  # no lone surrogates
    except (ValueError, UnicodeEncodeError) as exc:
        raise BadRequest("The cursor is not valid.") from exc
    if not sep or "\x00" in name:
        raise BadRequest("The cursor is not valid.")
    return name, parsed


def parse_statuses(raw: str | None) -> list[str]:
    """`active,superseded` → the statuses (default active and pending); an unknown one is a 422."""
    return parse_choices(raw, "statuses", "status", MEMORY_STATUSES, DEFAULT_STATUSES)
