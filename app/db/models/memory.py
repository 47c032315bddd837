from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Computed,
    Float,
    ForeignKey,
    Identity,
    Integer,
    Text,
    func,
    literal_column,
)
from sqlalchemy.dialects.postgresql import ARRAY, DATERANGE, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_at_column

MEMORY_STATUSES = (
    "pending",
    "active",
    "superseded",
    "merged",
    "expired",
    "archived",
    "deleted",
    "proposed",  # written with a propose-only key: waits for a review (accept → pending, reject)
    "rejected",
)
REVIEW_STATUSES = ("proposed", "rejected")  # never retrieved: a proposal changes nothing until accepted
MEMORY_LAYERS = ("episodic", "semantic")


class MemoryUnit(Base):
    __tablename__ = "memory_units"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    content: Mapped[str] = mapped_column(Text)
    # What full-text search indexes: content plus CJK segmentation, written by the service layer.
    search_text: Mapped[str] = mapped_column(Text, server_default="")
    search: Mapped[Any] = mapped_column(
        TSVECTOR, Computed("to_tsvector('english'::regconfig, search_text)", persisted=True)
    )
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    # Every tag with its dotted prefixes ("constraint.budget" → "constraint", "constraint.budget").
    tag_paths: Mapped[list[str]] = mapped_column(ARRAY(Text), Computed("tag_paths(tags)", persisted=True))
    confidence: Mapped[float] = mapped_column(Float, server_default="0.8")
    importance: Mapped[float] = mapped_column(Float, server_default="0.5")
    status: Mapped[str] = mapped_column(Text, server_default="pending")
    previous_status: Mapped[str | None] = mapped_column(Text)
    layer: Mapped[str] = mapped_column(Text, server_default="episodic")
    session_id: Mapped[str | None] = mapped_column(Text)
    source_seqs: Mapped[list[int]] = mapped_column(ARRAY(Integer), server_default="{}")
    source_event_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), server_default="{}")
    supersedes: Mapped[uuid.UUID | None]
    superseded_by: Mapped[uuid.UUID | None]
    merged_into: Mapped[uuid.UUID | None]
    merged_from: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)), server_default="{}")
    valid_from: Mapped[datetime | None]
    valid_to: Mapped[datetime | None]
    status_changed_at: Mapped[datetime] = mapped_column(server_default=func.now())
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
    expires_at: Mapped[datetime | None]
    last_accessed_at: Mapped[datetime | None]
    confirmed_at: Mapped[datetime | None]  # last said again (a merge added a source)
    access_count: Mapped[int] = mapped_column(Integer, server_default="0")
    distiller: Mapped[str | None] = mapped_column(Text)
    # Idempotency of distillation: session + source seqs + distiller version (+ content hash).
    identity_key: Mapped[str | None] = mapped_column(Text)
    embedding_model: Mapped[str | None] = mapped_column(Text)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", server_default="{}")
    # Every claim the content states, in full (`app/resolve/claims.py`); None until read, [] for none.
    claims: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
    # The main claim's subject and attribute: resolution's indexed lookup of one attribute's holders.
    claim_subject: Mapped[str | None] = mapped_column(Text)
    claim_attribute: Mapped[str | None] = mapped_column(Text)
    # The agent that wrote it (a key's `agent_id`, or the request's); None: no agent named.
    agent_id: Mapped[str | None] = mapped_column(Text)
    # A proposed PATCH: the unit it supersedes once accepted.
    proposed_update_of: Mapped[uuid.UUID | None]


class MemoryEmbedding(Base):
    """Vectors keyed by model: a new model or dimension adds rows and a partial index, not columns."""

    __tablename__ = "memory_embeddings"

    memory_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(Text, primary_key=True)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    dim: Mapped[int] = mapped_column(Integer)
    embedding: Mapped[Any] = mapped_column(Vector())
    created_at: Mapped[datetime] = created_at_column()


class Entity(Base):
    __tablename__ = "entities"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    canonical_name: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    # The days a date entity names ("2024-03" is March), for time filters; see the `date_span` function.
    date_span: Mapped[Any] = mapped_column(
        DATERANGE, Computed("CASE WHEN type = 'date' THEN date_span(name) END", persisted=True)
    )
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", server_default="{}")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class MemoryEntity(Base):
    __tablename__ = "memory_entities"

    memory_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True
    )
    entity_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True
    )
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))


class Relation(Base):
    __tablename__ = "relations"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    subject_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    relation: Mapped[str] = mapped_column(Text)
    object_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    memory_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("memory_units.id", ondelete="SET NULL"))
    confidence: Mapped[float] = mapped_column(Float, server_default="0.8")
    created_at: Mapped[datetime] = created_at_column()


class MemoryHistory(Base):
    """Every transition of a unit; `memory_id` has no foreign key so tombstones outlive a purge."""

    __tablename__ = "memory_history"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    bank_id: Mapped[str] = mapped_column(ForeignKey("banks.id", ondelete="CASCADE"))
    memory_id: Mapped[uuid.UUID]
    action: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    agent_id: Mapped[str | None] = mapped_column(Text)  # the agent that acted, when one was named
    at: Mapped[datetime] = mapped_column(server_default=func.now())
    details: Mapped[dict[str, Any]] = mapped_column(server_default="{}")


def is_active() -> ColumnElement[bool]:
    """`status = 'active'` with the status written out, not a bound parameter: a prepared statement's
    generic plan (PostgreSQL's after a few runs) can then use the partial indexes of active units, whose
    predicate it could not prove from a parameter."""
    return MemoryUnit.status == literal_column("'active'")
