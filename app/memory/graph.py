"""The bank's graph: entities named by memory units, the links to them, and the relations between them.
Written for units distilled from turns and for units written through the API alike; read by entity."""

from __future__ import annotations

import uuid
from typing import Annotated, Unpack

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories import entities as entities_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories.entities import EntitySearch
from app.errors import NotFound
from app.schemas.entities import EntityDetailRead, EntityPage
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


async def store_graph(db: AsyncSession, bank_id: str, units: list[GraphItem]) -> None:
    """Entities named by the units, the links to them and the relations between them."""
    pairs = [(e.name, e.type) for _, entities, _, _ in units for e in entities]
    for _, entities, relations, _ in units:
        # A relation's ends are entities of the unit where it names them; else new ones.
        named = {graph_repo.canonical(e.name) for e in entities}
        for r in relations:
            pairs += [(r.subject, "person")] if graph_repo.canonical(r.subject) not in named else []
            pairs += [(r.object, "other")] if graph_repo.canonical(r.object) not in named else []
    ids = await graph_repo.upsert_entities(db, bank_id, pairs)
    by_name: dict[str, uuid.UUID] = {}
    for (key, _), entity_id in ids.items():
        by_name.setdefault(key, entity_id)
    links, rows = [], []
    for memory_id, entities, relations, confidence in units:
        for e in entities:
            links.append((memory_id, ids[(graph_repo.canonical(e.name), e.type)]))
        typed = {graph_repo.canonical(e.name): ids[(graph_repo.canonical(e.name), e.type)] for e in entities}
        for r in relations:
            subject = typed.get(graph_repo.canonical(r.subject)) or by_name[graph_repo.canonical(r.subject)]
            obj = typed.get(graph_repo.canonical(r.object)) or by_name[graph_repo.canonical(r.object)]
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "bank_id": bank_id,
                    "subject_id": subject,
                    "relation": r.relation,
                    "object_id": obj,
                    "memory_id": memory_id,
                    "confidence": confidence,
                }
            )
    await graph_repo.link_entities(db, bank_id, links)
    await graph_repo.insert_relations(db, rows)


async def entity_page(
    db: AsyncSession, bank_id: str, *, limit: int, **search: Unpack[EntitySearch]
) -> EntityPage:
    """The bank's entities by name, with how many units mention each; `q` a part of the name."""
    rows = await entities_repo.list_entities(db, bank_id, limit=limit + 1, **search)
    return EntityPage.from_rows(rows, limit)


async def entity(
    db: AsyncSession, bank_id: str, entity_id: uuid.UUID, *, statuses: list[str], limit: int
) -> EntityDetailRead:
    """One entity with its relations and the newest units that mention it (404 if the bank has none)."""
    detail = await entities_repo.entity_detail(db, bank_id, entity_id, statuses=statuses, limit=limit)
    if detail is None:
        raise NotFound(f"Entity {entity_id} not found.")
    return EntityDetailRead.from_detail(detail)
