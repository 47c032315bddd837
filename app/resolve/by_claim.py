"""Resolution by claims (docs/architecture.md, "Claims and conflict detection"): a unit's claims are read when
it reaches resolution without them, its candidates include the active holders of its attributes and the units
stating a value it names as replaced, the verdicts of `app/claims` decide, and a compound unit whose one
clause ends leaves its still-true clauses behind in a residual unit (history action `split`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import numpy as np
from cachetools import LRUCache
from sqlalchemy.ext.asyncio import AsyncSession

from app.claims import Claim, compatible, conflicts, retired_object
from app.claims import stored as unit_claims
from app.claims.values import free
from app.db.models import MemoryUnit
from app.db.repositories import claims as claims_repo
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.providers.embeddings import Embedder
from app.resolve import claims as rc
from app.text import search_text
from app.webhooks import emit as webhooks


async def ensure_claims(db: AsyncSession, unit: MemoryUnit) -> list[Claim]:
    """The unit's claims; read from its content and tags (and stored) when it has none yet: a
    distilled, redistilled or imported unit reaches resolution so."""
    if unit.claims is not None:
        return unit_claims.load_all(unit.claims)
    found = unit_claims.read_claims(unit.content, unit.tags)
    await claims_repo.set_claims(db, unit, unit_claims.columns(found))
    return found


async def holders(
    db: AsyncSession, unit: MemoryUnit, claims: list[Claim], exclude: Iterable[uuid.UUID]
) -> list[tuple[uuid.UUID, float]]:
    """The ids of the active units holding one of the claims' attributes, or stating a value they name
    as replaced, with their similarity to `unit`."""
    return await claims_repo.active_holders(
        db,
        unit,
        keys=rc.slot_keys(claims),
        attributes=sorted({(c.subject, c.attribute) for c in claims if c.attribute}),
        old_values=rc.named_values(claims),
        exclude=list(exclude),
    )


async def _frame_similarity(
    embedder: Embedder, new: list[Claim], candidates: list[tuple[Any, list[Claim]]]
) -> dict[tuple[str, str], float]:
    """Cosine of the value-masked frames of each pair that could conflict (same subject, values of a
    compatible type), of the values of the pairs `rc.decide` may weigh by them, and of a retirement's
    object; nothing when the claims carry no frames."""
    olds = [o for _, claims in candidates for o in claims]
    pairs = {
        (o.frame, n.frame) for o in olds for n in new if o.frame and n.frame and compatible(o.value, n.value)
    }
    # a retirement's object beside each candidate claim's value and frame (`rc.decide`'s last resort)
    pairs |= {
        (thing, text)
        for n in new
        if (thing := retired_object(n))
        for o in olds
        for text in (o.value.text, o.frame or o.text)
        if text
    }
    found = await _cosines(embedder, pairs)
    # two free values of a weak tie: the nearer in kind is the one replaced ("vegan" ends "vegetarian");
    # their values embedded only for the pairs whose verdict is such a tie (most pairs are kept)
    ties = {
        (o.value.text, n.value.text)
        for o in olds
        for n in new
        if free(o.value) and free(n.value) and o.value.text and n.value.text and _weak_tie(o, n, found)
    }
    return found | await _cosines(embedder, ties - found.keys())


def _weak_tie(old: Claim, new: Claim, frames: dict[tuple[str, str], float]) -> bool:
    verdict = conflicts(old, new, frame_similarity=frames.get((old.frame, new.frame)))
    return verdict.action != "keep" and not verdict.strong


async def _cosines(embedder: Embedder, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], float]:
    if not pairs:
        return {}
    vectors = await _frame_vectors(embedder, sorted({t for pair in pairs for t in pair}))
    return {(a, b): float(vectors[a] @ vectors[b]) for a, b in pairs}


async def warm_frames(db: AsyncSession, embedder: Embedder, units: list[MemoryUnit]) -> None:
    """Read and store the claims of a batch's units that have none (in one statement), and embed their
    frames in one call of the embedder, before they are resolved one by one (a call per unit costs the
    model's overhead each time)."""
    unread = [
        (unit, unit_claims.columns(unit_claims.read_claims(unit.content, unit.tags)))
        for unit in units
        if unit.claims is None
    ]
    await claims_repo.set_claims_many(db, unread)
    frames = sorted({c.frame for unit in units for c in await ensure_claims(db, unit) if c.frame})
    if frames:
        await _frame_vectors(embedder, frames)


# A frame recurs: an old unit's frames meet every new unit resolved near it. Their vectors are kept per
# process, the least recently used dropped past FRAME_CACHE (a 384-dimension vector is 1.5 KiB).
FRAME_CACHE = 20_000
_FRAMES: LRUCache[tuple[str, str], np.ndarray] = LRUCache(FRAME_CACHE)


async def _frame_vectors(embedder: Embedder, texts: list[str]) -> dict[str, np.ndarray]:
    """The embedder's vectors of `texts`, those not already kept embedded in one call, each as if alone
    (the verdicts compare their cosines with thresholds)."""
    found = {t: v for t in texts if (v := _FRAMES.get((embedder.model, t))) is not None}
    missing = [t for t in texts if t not in found]
    if missing:
        for text, vector in zip(missing, await embedder.embed_each(missing), strict=True):
            found[text] = _FRAMES[(embedder.model, text)] = np.asarray(vector, dtype=np.float32)
    return found


async def decide(
    db: AsyncSession, unit: MemoryUnit, new: list[Claim], candidates: list[MemoryUnit], embedder: Embedder
) -> tuple[rc.ClaimDecision | None, dict[uuid.UUID, list[Claim]]]:
    """The verdict of the new claims on `candidates` (newest first), and every candidate's claims
    (read now for a unit stored before claims were)."""
    olds = {c.id: await ensure_claims(db, c) for c in candidates}
    judged = [(c.id, olds[c.id]) for c in candidates if olds[c.id]]
    if not new or not judged:
        return None, olds
    similarity = await _frame_similarity(embedder, new, judged)
    happenings = frozenset(c.id for c in candidates if rc.is_happening(c.tags, olds[c.id])) | (
        frozenset([None]) if rc.is_happening(unit.tags, new) else frozenset()
    )
    decision = rc.decide(new, judged, lambda a, b: similarity.get((a, b)), happenings)
    if decision is not None:
        # a unit said with this one may say what stays as it was ("…; the hotel stays as it is"): what
        # it names is no claim this one ends
        beside = await claims_repo.unchanged_beside(db, unit)
        kept = [c for stored in beside for c in unit_claims.load_all(stored) if c.unchanged]
        if kept:
            decision = rc.decide([*new, *kept], judged, lambda a, b: similarity.get((a, b)), happenings)
    return decision, olds


async def split_off(
    db: AsyncSession,
    old: MemoryUnit,
    keep: list[Claim],
    embedder: Embedder,
    *,
    actor: str,
    details: dict[str, Any],
) -> MemoryUnit:
    """A new active unit holding the still-true clauses of the compound `old` (same sources, tags,
    valid time), with its vector and the entities and relations it still names."""
    content = rc.residual_text(keep)
    unit_id = uuid.uuid4()
    await units_repo.insert_units(
        db,
        [
            {
                "id": unit_id,
                "bank_id": old.bank_id,
                "content": content,
                "search_text": search_text(content),
                "tags": list(old.tags),
                "confidence": old.confidence,
                "importance": old.importance,
                "status": "active",
                "layer": old.layer,
                "session_id": old.session_id,
                "source_seqs": list(old.source_seqs),
                "source_event_ids": list(old.source_event_ids),
                "valid_from": old.valid_from,
                "distiller": old.distiller,
                "embedding_model": embedder.model,
                "metadata": {**old.metadata_, "split_from": str(old.id)},
                **unit_claims.columns(keep),
                "agent_id": old.agent_id,  # still the old unit's author's words
            }
        ],
    )
    [vector] = await embedder.embed([content])
    await embeddings_repo.insert_embeddings(db, old.bank_id, embedder.model, {unit_id: vector})
    await claims_repo.copy_graph(db, old.bank_id, old.id, unit_id, content)
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": old.bank_id,
                "memory_id": unit_id,
                "action": "split",
                "actor": actor,
                "details": {**details, "split_from": str(old.id), "to": "active"},
            }
        ],
    )
    residual = await units_repo.get_unit(db, unit_id)
    assert residual is not None
    await webhooks.memory_created(db, residual)
    return residual
