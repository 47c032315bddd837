"""The bank's graph: entities named by memory units, the links to them, and the relations between them.
Written for units distilled from turns and for units written through the API alike; read in app/entities."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories import graph as graph_repo
from app.entities.types import GraphItem


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
