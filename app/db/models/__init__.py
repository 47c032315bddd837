"""Typed SQLAlchemy models; the schema itself is owned by Alembic (alembic/versions)."""

from app.db.models.banks import ApiKey, Bank
from app.db.models.base import Base
from app.db.models.events import ChatSession, Event
from app.db.models.jobs import Job, QueryLog
from app.db.models.memory import (
    MEMORY_STATUSES,
    REVIEW_STATUSES,
    Entity,
    MemoryEmbedding,
    MemoryEntity,
    MemoryHistory,
    MemoryUnit,
    Relation,
)
from app.db.models.webhooks import Webhook, WebhookDelivery

__all__ = [
    "MEMORY_STATUSES",
    "REVIEW_STATUSES",
    "ApiKey",
    "Bank",
    "Base",
    "ChatSession",
    "Entity",
    "Event",
    "Job",
    "MemoryEmbedding",
    "MemoryEntity",
    "MemoryHistory",
    "MemoryUnit",
    "QueryLog",
    "Relation",
    "Webhook",
    "WebhookDelivery",
]
