from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from app.schemas.common import TAG_PATTERN, JsonObject, ReadSchema, SafeText, Schema, Slug, Timestamp
from app.schemas.glossary import describe
from app.text import strip_invisible

MAX_UNIT_CHARS = 4000
MAX_TAGS = 16
MAX_TAG_CHARS = 256  # the tag index (GIN) refuses an entry over ~2.7 kB: a 500 rather than a 422
Tag = Annotated[str, StringConstraints(max_length=MAX_TAG_CHARS, pattern=TAG_PATTERN)]
Tags = Annotated[list[Tag], Field(min_length=1, max_length=MAX_TAGS)]
# A unit's text, cleaned at the door: bidi overrides, zero-width and other invisible characters would reach
# an agent's prompt and the console (text shown reversed); a content of nothing else is empty (422). NUL
# stays to be refused (SafeText), as in every other field.
Visible = BeforeValidator(lambda v: strip_invisible(v) if isinstance(v, str) and "\x00" not in v else v)
Content = Annotated[SafeText, Visible, Field(min_length=1, max_length=MAX_UNIT_CHARS)]
Score = Annotated[float, Field(ge=0, le=1)]
AGENT_HELP = "The agent that wrote it (its key's `agent_id`, or the writing request's); null when none."
AGENT_WRITE_HELP = (
    "The agent writing (also the `X-Agent-Id` header): only when the key names no agent, or with the "
    "admin key; a key's own agent cannot be overridden (403)."
)


class EntityIn(Schema):
    name: Annotated[SafeText, Visible, Field(min_length=1, max_length=256)]
    type: Annotated[SafeText, Visible, Field(min_length=1, max_length=64)] = "other"


class EntityRef(ReadSchema):
    id: uuid.UUID
    name: str
    type: str


class SourceEvent(ReadSchema):
    id: int
    seq: int
    role: str
    speaker: str | None
    content: str
    occurred_at: datetime


class Source(ReadSchema):
    session_id: str | None
    seqs: list[int]
    event_ids: list[int]
    events: list[SourceEvent] | None = Field(
        default=None, description="The source turns' text (single reads)."
    )


ValueType = Literal[
    "amount", "quantity", "number", "date", "weekday", "time", "version", "id", "name", "text"
]


class ClaimRead(ReadSchema):
    """What the unit states: two units conflict when subject and attribute match and the values
    differ."""

    subject: str = Field(description="Who or what it is about: `user` (the speaker) or an entity's name.")
    attribute: str = Field(
        description="The normalised attribute, e.g. `budget.laptop`, `address.home`, `employer`; empty when "
        "the statement names none."
    )
    value: str = Field(description="The value as said (e.g. `8000`, `Oslo`, `Wednesdays`).")
    value_type: ValueType = Field(
        description="The value's type, what decides whether two values can be compared (`id`: an "
        "identifier or a contact such as an order number, a phone number or an email)."
    )
    modality: Literal["firm", "hedged", "retired"] = Field(
        description="`firm`; `hedged` (conditional, never replaces a firm claim); `retired` (ends the claim "
        "without a new value: no longer, 不再)."
    )


CLAIM_EXAMPLE = {
    "subject": "user",
    "attribute": "budget.laptop",
    "value": "8000",
    "value_type": "number",
    "modality": "firm",
}

WHY_EXAMPLE = (
    "Said by Ana in chat-1, turn 7, on 2026-11-20: 'If the configuration can be upgraded I can go to 8000.'; "
    "replaces 5000 said on 2026-11-13."
)


class MemoryRead(ReadSchema):
    id: uuid.UUID
    bank_id: str
    content: str
    tags: list[str]
    confidence: float
    importance: float
    status: str
    layer: str
    entities: list[EntityRef]
    source: Source
    supersedes: uuid.UUID | None
    superseded_by: uuid.UUID | None
    merged_from: list[uuid.UUID]
    merged_into: uuid.UUID | None
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    updated_at: datetime
    status_changed_at: datetime
    expires_at: datetime | None
    last_accessed_at: datetime | None
    access_count: int
    distiller: str | None
    embedding_model: str | None
    metadata: dict[str, Any]
    claim: ClaimRead | None = Field(
        default=None,
        description="The unit's main claim; null when its content states none (or before it is read).",
        examples=[CLAIM_EXAMPLE],
    )
    why: str | None = Field(
        default=None,
        description="Why this is remembered: one sentence from its provenance and history, in the bank's or "
        "the unit's language (query results and single reads; null in lists).",
        examples=[WHY_EXAMPLE],
    )
    agent_id: str | None = Field(default=None, description=AGENT_HELP, examples=["planner"])
    proposed_update_of: uuid.UUID | None = Field(
        default=None, description="A proposed update: the unit it supersedes once accepted."
    )


class MemoryCreate(Schema):
    content: Content
    tags: Tags
    confidence: Score = 0.9
    importance: Score = 0.5
    entities: list[EntityIn] = Field(default_factory=list, max_length=64)
    occurred_at: Timestamp | None = Field(
        default=None, description="When it was true or said (valid time); default now. Naive = bank timezone."
    )
    session_id: Slug | None = None
    metadata: JsonObject = Field(default_factory=dict)
    agent_id: Slug | None = Field(default=None, description=AGENT_WRITE_HELP, examples=["planner"])


def _at_least_one_field(schema: dict[str, Any], model: type) -> None:
    describe(schema, model)
    schema["minProperties"] = 1  # the validator's rule, said in the schema too (clients, fuzzers)


class MemoryPatch(Schema):
    model_config = ConfigDict(json_schema_extra=_at_least_one_field)

    content: Content | None = None
    tags: Tags | None = None
    confidence: Score | None = None
    importance: Score | None = None

    @model_validator(mode="after")
    def _something(self) -> MemoryPatch:
        if not self.model_fields_set:
            raise ValueError("give at least one of content, tags, confidence, importance")
        return self


class MemoryAccepted(ReadSchema):
    memory: MemoryRead
    job_id: uuid.UUID | None = Field(description="The resolution job; null when resolved in the request.")


class MemoryPage(ReadSchema):
    memories: list[MemoryRead]
    next_cursor: str | None


class MemoryBrief(ReadSchema):
    id: uuid.UUID
    content: str
    tags: list[str]
    status: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    status_changed_at: datetime
    agent_id: str | None = Field(default=None, description=AGENT_HELP)


class HistoryAction(ReadSchema):
    memory_id: uuid.UUID
    action: str
    actor: str
    agent_id: str | None = Field(default=None, description="The agent that acted, when one was named.")
    at: datetime
    details: dict[str, Any]


class ReviewDecision(Schema):
    """An accept or a reject of a proposed unit (the body is optional)."""

    reason: SafeText | None = Field(default=None, max_length=1000, description="Kept in the history.")
    agent_id: Slug | None = Field(default=None, description=AGENT_WRITE_HELP)


class MemoryHistoryRead(ReadSchema):
    memory: MemoryRead
    chain: list[MemoryBrief] = Field(
        description="The whole supersede chain, oldest first; this unit included."
    )
    merged_from: list[MemoryBrief]
    merged_into: MemoryBrief | None
    actions: list[HistoryAction] = Field(description="Every action on this unit, oldest first.")
