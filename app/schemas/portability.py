"""The lines of a bank export (NDJSON, one JSON object per line, `type` first): what `GET …/export`
writes and `POST …/import` reads back. One model per line type, so a bad line of an import is refused
with its field named. No vectors: the importer's `reembed` job rebuilds them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, NonNegativeInt, TypeAdapter

from app.db.models.memory import MEMORY_LAYERS, MEMORY_STATUSES
from app.schemas.common import (
    AwareTimestamp,
    DerivedTimestamp,
    JsonObject,
    ReadSchema,
    SafeText,
    Schema,
    Slug,
)
from app.schemas.events import MAX_CONTENT_CHARS
from app.schemas.memories import MAX_TAG_CHARS, MAX_TAGS, MAX_UNIT_CHARS, ClaimRead
from app.text import strip_invisible

MemoryStatus = Literal[MEMORY_STATUSES]  # type: ignore[valid-type]
MemoryLayer = Literal[MEMORY_LAYERS]  # type: ignore[valid-type]
Seq = Annotated[int, Field(ge=1, le=2**31 - 1)]
SeqOrNone = Annotated[int, Field(ge=0, le=2**31 - 1)]  # a session's last (0: none yet); events.seq is int4
Probability = Annotated[float, Field(ge=0.0, le=1.0)]

# The limits of the routes that write each text, so an import stores nothing a write could not (a
# crafted line would otherwise reach what those limits keep safe: the search index, the distiller).
# Stored text may be longer than it was written: a bank that redacts replaces a secret as short as one
# character ("pin:1,") by its 19-character mask, at most 5 times the length; and an entity's canonical
# name is its case-folded name ("ß" → "ss", at most 3 characters for one).
MASK_GROWTH = 5
MAX_CLAIMS = 64  # a unit's clauses: far more than a 4000-character unit holds
MAX_NAME_CHARS = 256
MAX_ENTITY_TYPE_CHARS = 64
MAX_RELATION_CHARS = 128
# Keys of unique B-tree indexes: a row over PostgreSQL's index row size (2704 bytes) cannot be stored.
MAX_KEY_BYTES = 2000


def _key_sized(value: str) -> str:
    if len(value.encode()) > MAX_KEY_BYTES:
        raise ValueError(f"must be at most {MAX_KEY_BYTES} bytes (UTF-8)")
    return value


def _visible(value: str) -> str:
    """Clean as the write routes do (invisible characters would reach prompts and the console); a text
    of nothing else is refused, not stored empty (an empty unit is a purged unit's tombstone)."""
    cleaned = strip_invisible(value)
    if value and not cleaned:
        raise ValueError("holds only invisible characters")
    return cleaned


Visible = AfterValidator(_visible)
Name = Annotated[SafeText, Visible, Field(min_length=1, max_length=MAX_NAME_CHARS * MASK_GROWTH)]
Key = Annotated[SafeText, AfterValidator(_key_sized)]
Short = Annotated[SafeText, Field(max_length=MAX_NAME_CHARS)]


class BankLine(Schema):
    """The first line: the bank itself, and what the stream holds."""

    type: Literal["bank"] = "bank"
    format: Literal["hindsight.bank"] = "hindsight.bank"
    version: Literal[1] = 1
    bank_id: Slug = Field(description="The exported bank's id (an import takes the id of its URL).")
    name: SafeText | None = Field(default=None, max_length=256)
    config: JsonObject = Field(default_factory=dict)
    events: bool = Field(default=True, description="Whether the stream holds the raw events.")
    created_at: AwareTimestamp
    updated_at: AwareTimestamp


class SessionLine(Schema):
    type: Literal["session"] = "session"
    session_id: Slug
    status: Literal["open", "closed"]
    last_seq: SeqOrNone
    distilled_seq: SeqOrNone
    metadata: JsonObject = Field(default_factory=dict)
    created_at: AwareTimestamp
    last_event_at: AwareTimestamp | None = None
    closed_at: AwareTimestamp | None = None
    # the turns its distiller failed on, each {seq, reason, job_id} as the session lists them (the newest 100)
    quarantined: list[JsonObject] = Field(default_factory=list, max_length=100)


class EventLine(Schema):
    """A raw turn; a session's in seq order (sessions in any order), which is also how units cite it."""

    type: Literal["event"] = "event"
    session_id: Slug
    seq: Seq
    role: Literal["user", "assistant", "system", "tool"]
    content: SafeText = Field(min_length=1, max_length=MAX_CONTENT_CHARS * MASK_GROWTH)
    speaker: Short | None = None
    occurred_at: AwareTimestamp
    external_id: Annotated[SafeText, Field(min_length=1, max_length=MAX_NAME_CHARS)] | None = None
    metadata: JsonObject = Field(default_factory=dict)
    agent_id: Slug | None = Field(default=None, description="The agent that appended it.")
    proposed: bool = Field(default=False, description="Appended with a propose-only key.")
    created_at: AwareTimestamp


class MemoryLine(Schema):
    """A unit. Ids are the exporting deployment's: an import gives every unit a new one and rewrites
    every reference to it (chains, merges, links, relations, history)."""

    type: Literal["memory"] = "memory"
    id: uuid.UUID
    content: Annotated[SafeText, Visible] = Field(
        max_length=MAX_UNIT_CHARS * MASK_GROWTH, description="Empty for a purged unit (its tombstone)."
    )
    tags: list[Annotated[SafeText, Field(max_length=MAX_TAG_CHARS)]] = Field(
        default_factory=list, max_length=MAX_TAGS
    )
    confidence: Probability
    importance: Probability
    status: MemoryStatus
    previous_status: MemoryStatus | None = None
    layer: MemoryLayer
    session_id: Slug | None = None
    source_seqs: list[Seq] = Field(default_factory=list)
    source_events: list[tuple[Slug, Seq]] = Field(
        default_factory=list, description="The source turns as [session_id, seq] pairs."
    )
    supersedes: uuid.UUID | None = None
    superseded_by: uuid.UUID | None = None
    merged_into: uuid.UUID | None = None
    merged_from: list[uuid.UUID] = Field(default_factory=list)
    valid_from: DerivedTimestamp | None = None
    valid_to: DerivedTimestamp | None = None
    status_changed_at: AwareTimestamp
    created_at: AwareTimestamp
    updated_at: AwareTimestamp
    expires_at: AwareTimestamp | None = None
    last_accessed_at: AwareTimestamp | None = None
    confirmed_at: AwareTimestamp | None = None
    access_count: Annotated[int, Field(ge=0, le=2**31 - 1)] = 0
    distiller: Short | None = None
    identity_key: Key | None = None
    metadata: JsonObject = Field(default_factory=dict)
    claim: ClaimRead | None = Field(
        default=None, description="The unit's main claim as the API shows it (not read on import)."
    )
    claims: list[JsonObject] | None = Field(
        default=None,
        max_length=MAX_CLAIMS,
        description="Every claim of the unit in full, kept as given; absent (an older export): read again "
        "from the content and tags.",
    )
    agent_id: Slug | None = Field(default=None, description="The agent that wrote it.")
    proposed_update_of: uuid.UUID | None = Field(
        default=None, description="A proposed update: the unit it supersedes once accepted."
    )


class EntityLine(Schema):
    type: Literal["entity"] = "entity"
    id: uuid.UUID
    name: Name
    canonical_name: Annotated[SafeText, Visible] = Field(
        min_length=1, max_length=MAX_NAME_CHARS * MASK_GROWTH * 3
    )
    entity_type: SafeText = Field(
        min_length=1, max_length=MAX_ENTITY_TYPE_CHARS, description="person, organisation, product, amount, …"
    )
    metadata: JsonObject = Field(default_factory=dict)
    created_at: AwareTimestamp
    updated_at: AwareTimestamp


class LinkLine(Schema):
    """A unit mentions an entity."""

    type: Literal["link"] = "link"
    memory_id: uuid.UUID
    entity_id: uuid.UUID


class RelationLine(Schema):
    type: Literal["relation"] = "relation"
    id: uuid.UUID
    subject_id: uuid.UUID
    relation: SafeText = Field(min_length=1, max_length=MAX_RELATION_CHARS)
    object_id: uuid.UUID
    memory_id: uuid.UUID | None = None
    confidence: Probability
    created_at: AwareTimestamp


class HistoryLine(Schema):
    type: Literal["history"] = "history"
    memory_id: uuid.UUID
    action: SafeText = Field(min_length=1, max_length=MAX_ENTITY_TYPE_CHARS)
    actor: Short
    agent_id: Slug | None = None
    at: AwareTimestamp
    details: JsonObject = Field(default_factory=dict)


class EndLine(Schema):
    """The last line: how many lines of each type came before it. A stream without it was cut short."""

    type: Literal["end"] = "end"
    counts: dict[str, NonNegativeInt]


Line = Annotated[
    BankLine
    | SessionLine
    | EventLine
    | MemoryLine
    | EntityLine
    | LinkLine
    | RelationLine
    | HistoryLine
    | EndLine,
    Field(discriminator="type"),
]
LINE: TypeAdapter[Line] = TypeAdapter(Line)
# The order of the sections: a line's type may not come before the previous line's.
SECTIONS = ("bank", "session", "event", "memory", "entity", "link", "relation", "history", "end")
COUNTED = SECTIONS[1:-1]


class ImportResult(ReadSchema):
    bank_id: str
    counts: dict[str, int] = Field(description="Lines imported, by type (session, event, memory, …).")
    job_id: uuid.UUID = Field(description="The `reembed` job that builds the imported units' vectors.")
    created_at: datetime
