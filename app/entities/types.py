"""The entities and relations a memory unit names, as distillers and direct writes give them (no I/O)."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from app.text import clip

NAME_MAX_CHARS = 256


def _clipped(limit: int) -> BeforeValidator:
    # The last bound, not the rule: distillers leave out a "name" this long (400 digits are no amount,
    # a 600-letter word no company); whatever still reaches here is cut, never a failed distillation.
    return BeforeValidator(lambda value: clip(value, limit) if isinstance(value, str) else value)


Name = Annotated[str, _clipped(NAME_MAX_CHARS), Field(min_length=1, max_length=NAME_MAX_CHARS)]


def fits_a_name(text: str) -> bool:
    """Whether the text can name an entity: not empty, not longer than a name is stored."""
    return 0 < len(text.strip()) <= NAME_MAX_CHARS


class EntityOut(BaseModel):
    """An entity a unit names (from a distiller, or given with a direct write)."""

    model_config = ConfigDict(extra="ignore")

    name: Name
    type: Annotated[str, _clipped(64), Field(min_length=1, max_length=64)] = "other"


class RelationOut(BaseModel):
    """A fact between two entities a unit states: Alice / works_at / Acme."""

    model_config = ConfigDict(extra="ignore")

    subject: Name
    relation: Annotated[str, _clipped(128), Field(min_length=1, max_length=128)]
    object: Name


GraphItem = tuple[
    uuid.UUID, list[EntityOut], list[RelationOut], float
]  # unit, entities, relations, confidence
