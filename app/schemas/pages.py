"""Knowledge pages: what a bank knows of an entity (or of its main subject, the profile) now, by tag."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field


class PageEntityRead(BaseModel):
    id: uuid.UUID | None = Field(description="The entity; null for a bank user no turn names.")
    name: str
    type: str


class PageLine(BaseModel):
    memory_id: uuid.UUID = Field(description="The unit the line cites (`GET …/memories/{memory_id}`).")
    content: str
    valid_from: datetime | None
    confidence: float
    layer: str = Field(description="`semantic` (L3, listed first) or `episodic` (L2).")


class PageSection(BaseModel):
    tag: str = Field(description="The units' most specific tag, e.g. `preference.contact`.")
    lines: list[PageLine] = Field(description="L3 first, then newest first.")


class KnowledgePage(BaseModel):
    """The entity's page, derived from its active units on every read (never a stored copy)."""

    entity: PageEntityRead
    sections: list[PageSection]
    markdown: str = Field(description="The same page as Markdown, every line citing its unit id and date.")
