"""The active units a pending unit is compared with, and the facts (entities, relations) the older
rules compare."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.claims import Claim
from app.db.models import MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories import units as units_repo
from app.providers.embeddings import Embedder
from app.resolve import by_claim
from app.resolve.conflicts import SINGLE_VALUED_RELATIONS, VALUE_TYPES, Facts, Neighbour, key_tag
from app.resolve.tuning import NEIGHBOURS


def _facts(rows: dict[uuid.UUID, Facts], memory_id: uuid.UUID) -> Facts:
    return rows.get(memory_id) or Facts()


async def find_candidates(
    db: AsyncSession, unit: MemoryUnit, embedder: Embedder, claims: list[Claim]
) -> tuple[list[Neighbour], Facts]:
    """Active units that could be the same fact or its older value (semantic neighbours, units
    with the same key tag, units sharing a single-valued relation, the holders of the unit's claimed
    attributes and the units stating a value it names as replaced), and the unit's own facts."""
    near = await embeddings_repo.active_neighbour_ids(db, unit, embedder.model, NEIGHBOURS, embedder.dim)
    similar = dict(near)  # id → similarity, in the order found: nearest first, then the others
    tag = key_tag(unit)
    extra = await graph_repo.active_related(
        db, unit, tag, list(SINGLE_VALUED_RELATIONS), exclude=list(similar)
    )
    for uid, sim in extra:
        similar.setdefault(uid, sim)
    for uid, sim in await by_claim.holders(db, unit, claims, exclude=similar):
        similar.setdefault(uid, sim)
    # Read (once, whole rows) as they are now, locked: maintenance may have archived one since the reads
    # above, so what is superseded or merged into is what the rows say now.
    live = {u.id: u for u in await units_repo.lock_units(db, list(similar)) if u.status == "active"}
    facts = await load_facts(db, [unit.id, *live])  # the unit's and theirs in one read
    neighbours = [
        Neighbour(live[uid], sim, _facts(facts, uid)) for uid, sim in similar.items() if uid in live
    ]
    return neighbours, _facts(facts, unit.id)


async def load_facts(db: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, Facts]:
    facts: dict[uuid.UUID, Facts] = {}
    entities, relations = await graph_repo.unit_facts(db, ids)
    for memory_id, entity_id, kind in entities:
        f = facts.setdefault(memory_id, Facts())
        if kind == "person":
            f.persons.add(entity_id)
        elif kind in VALUE_TYPES:
            f.values.add(entity_id)
    for memory_id, subject, relation, obj in relations:
        facts.setdefault(memory_id, Facts()).relations.add((subject, relation, obj))
    return facts
