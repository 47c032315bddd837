"""Resolution: every `pending` unit becomes `active`, `superseded`-by-it, or `merged` into an older twin.
Decisions, in order (docs/architecture.md, "Claims and conflict detection"):

1. the distiller said `supersedes` → the head of that unit's chain is superseded;
2. a near-duplicate (cosine ≥ the bank's `dedupe_threshold`, same numbers, same polarity) → merged
   into the older unit, which gains its sources and some confidence;
3. a conflict → the older unit is superseded: by its claims when both units state one (`by_claim.py`,
   `app/claims`: same subject and attribute, another value; a retirement ends it, `retired`; a compound
   unit leaves its still-true clauses in a residual unit), else by the older rules (`conflicts.py`);
4. otherwise → active.

One bank is resolved by one transaction at a time, under the bank's lock (`lock.py`).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.claims import Claim
from app.db.models import Job, MemoryUnit
from app.db.repositories import banks as banks_repo
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.errors import Conflict
from app.providers.embeddings import Embedder
from app.resolve import by_claim
from app.resolve.authors import authors
from app.resolve.candidates import find_candidates
from app.resolve.claims import ClaimDecision, details_of, hedged_over_firm, one_attribute, residue
from app.resolve.conflicts import (
    conflict_reason,
    key_tag,
    same_statement,
)
from app.resolve.judge import Judge, JudgedUnit
from app.resolve.lock import lock_bank
from app.resolve.order import said_at, said_before, said_together
from app.resolve.restated import file_restatement, restated_head, retire_restatements
from app.resolve.tuning import BATCH, MAX_CONFIDENCE, SIMILAR
from app.schemas.banks import BankConfig
from app.webhooks import emit as webhooks

log = logging.getLogger(__name__)

# What resolution did with a pending unit; `outdated`: it stated an older value than the active one.
OUTCOMES = ("activated", "superseded", "merged", "outdated")


async def resolve_bank(
    sessionmaker: async_sessionmaker[AsyncSession],
    job: Job,
    *,
    embedder: Embedder,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """Resolve the bank's pending units in the order they were said, a bounded batch per transaction:
    the bank's lock is released between batches, so a big backlog never holds it for minutes and
    writes of the same bank (PATCH, `?wait=true`) go through in between."""
    assert job.bank_id is not None
    counts = dict.fromkeys(OUTCOMES, 0)
    while True:
        async with sessionmaker() as db, db.begin():
            batch = await resolve_pending(
                db, job.bank_id, embedder=embedder, judge=judge, actor_details={"job_id": str(job.id)}
            )
        for outcome, n in batch.items():
            counts[outcome] += n
        if sum(batch.values()) < BATCH:
            return counts


async def resolve_pending(
    db: AsyncSession,
    bank_id: str,
    *,
    embedder: Embedder,
    judge: Judge | None = None,
    only: list[uuid.UUID] | None = None,
    actor_details: dict[str, Any] | None = None,
    config: BankConfig | None = None,
) -> dict[str, int]:
    """One batch (at most `BATCH` units, or the units in `only`) in the caller's transaction, which
    holds the bank's lock until it ends. `config`: the bank's, when the caller holds it parsed already
    (a request); a job reads it here."""
    await lock_bank(db, bank_id)
    config = config or BankConfig.model_validate(await banks_repo.bank_config(db, bank_id) or {})
    if judge is not None and await judge.budget.exhausted(db, bank_id, config, "judge") is not None:
        judge = None  # a spent budget: the claims and rules decide ambiguous pairs alone
    counts = dict.fromkeys(OUTCOMES, 0)
    details = actor_details or {}
    units = await units_repo.lock_pending(db, bank_id, BATCH, only=only)
    if units:
        await _ensure_embeddings(db, bank_id, embedder, units)
        await by_claim.warm_frames(db, embedder, units)
    for unit in units:
        outcome = await _resolve_one(db, unit, config, embedder, judge, details)
        counts[outcome] += 1
    return counts


async def _ensure_embeddings(
    db: AsyncSession, bank_id: str, embedder: Embedder, units: list[MemoryUnit]
) -> None:
    missing = await embeddings_repo.without_embedding(db, [u.id for u in units], embedder.model)
    if missing:
        todo = [u for u in units if u.id in missing]
        vectors = await embedder.embed([u.content for u in todo])
        await embeddings_repo.insert_embeddings(
            db, bank_id, embedder.model, {u.id: v for u, v in zip(todo, vectors, strict=True)}
        )


async def _resolve_one(
    db: AsyncSession,
    unit: MemoryUnit,
    config: BankConfig,
    embedder: Embedder,
    judge: Judge | None,
    details: dict[str, Any],
) -> str:
    if unit.supersedes is not None:
        head = await history_repo.chain_head(db, unit.supersedes)
        head = await units_repo.get_unit(db, head.id, for_update=True) if head is not None else None
        if head is not None and head.status == "active" and head.bank_id == unit.bank_id:
            return await replace(
                db, head, unit, reason="distiller", actor="resolver", details=details, model=embedder.model
            )
    claims = await by_claim.ensure_claims(db, unit)
    candidates, unit_facts = await find_candidates(db, unit, embedder, claims)
    for c in candidates:
        if c.similarity >= config.dedupe_threshold and same_statement(unit, c.unit):
            await merge(db, unit, into=c.unit, similarity=c.similarity, details=details)
            return "merged"
    others = [c for c in candidates if not said_together(c.unit, unit)]
    newest = sorted(others, key=lambda c: (said_at(c.unit), c.unit.created_at), reverse=True)
    decision, olds = await by_claim.decide(db, unit, claims, [c.unit for c in newest], embedder)
    if decision is not None:
        old = next(c.unit for c in newest if c.unit.id == decision.candidate_id)
        return await _end_claim(db, old, unit, decision, olds[old.id], embedder, details)
    for c in newest:
        if hedged_over_firm(claims, olds.get(c.unit.id, [])):
            continue
        claimed = bool(claims) + bool(olds.get(c.unit.id))
        reason = conflict_reason(unit, unit_facts, c, claimed=claimed)
        if reason is not None:
            return await replace(
                db, c.unit, unit, reason=reason, actor="resolver", details=details, model=embedder.model
            )
    if judge is not None:
        for c in others:
            theirs = olds.get(c.unit.id, [])
            if one_attribute(claims, theirs) or hedged_over_firm(claims, theirs):
                continue  # one attribute on both sides: the claims' verdict stands
            if SIMILAR <= c.similarity < config.dedupe_threshold and key_tag(c.unit) == key_tag(unit):
                verdict = await judge.judge(
                    _judged(c.unit, theirs), _judged(unit, claims), model=config.llm_model("judge")
                )
                if verdict.replaces:
                    return await replace(
                        db,
                        c.unit,
                        unit,
                        reason=f"llm judge: {verdict.reason}",
                        actor="resolver:llm",
                        details=details,
                        model=embedder.model,
                    )
    restated = await restated_head(db, unit, embedder.model)
    if restated is not None:  # an episode that presents a replaced value as current
        await file_restatement(db, unit, *restated, actor="resolver", details=details)
        return "outdated"
    await history_repo.transition(
        db,
        unit.bank_id,
        [(unit.id, "pending", "active")],
        action="activated",
        actor="resolver",
        details={unit.id: details},
    )
    await webhooks.memory_created(db, unit)
    return "activated"


async def _end_claim(
    db: AsyncSession,
    old: MemoryUnit,
    new: MemoryUnit,
    decision: ClaimDecision,
    old_claims: list[Claim],
    embedder: Embedder,
    details: dict[str, Any],
) -> str:
    """`new`'s claim ends `old`'s: superseded (a new value) or retired (no successor value). The
    still-true clauses of a compound `old` stay active first, in a residual unit."""
    keep = residue(old_claims, decision.hit, decision.action == "retire", decision.kept, decision.replaced)
    if keep and not said_before(new, old):
        residual = await by_claim.split_off(db, old, keep, embedder, actor="resolver", details=details)
        details = {**details, "residual": str(residual.id)}
    action = "retired" if decision.action == "retire" else "superseded"
    outcome = await replace(
        db,
        old,
        new,
        reason=f"claim: {decision.reason}",
        actor="resolver",
        details=details,
        model=embedder.model,
        action=action,
    )
    if action == "retired" and outcome == "superseded":
        await _retire_details(db, old, old_claims, new, details)
    return outcome


async def _retire_details(
    db: AsyncSession, old: MemoryUnit, old_claims: list[Claim], new: MemoryUnit, details: dict[str, Any]
) -> None:
    """The active units split from the turn of the retired `old` that state only details of it
    (`details_of`: "月费99元" beside "我办了一张游泳卡"): retired with it, linked to `new`."""
    reason = "claim: a detail of what was retired"
    for sibling in await units_repo.turn_siblings(db, old):
        if sibling.id == new.id:
            continue
        if not details_of(await by_claim.ensure_claims(db, sibling), old_claims):
            continue
        if await _end(db, sibling, new, action="retired", actor="resolver", reason=reason, details=details):
            await webhooks.memory_superseded(db, sibling.bank_id, sibling.id, new.id, reason)


def _judged(unit: MemoryUnit, claims: list[Claim]) -> JudgedUnit:
    """The unit as the judge reads it: its words, tags, time and claims."""
    read = tuple(
        {"subject": c.subject, "attribute": c.attribute, "value": c.value.text, "modality": c.modality}
        for c in claims
    )
    return JudgedUnit(content=unit.content, tags=list(unit.tags), said_at=unit.valid_from, claims=read)


async def replace(
    db: AsyncSession,
    old: MemoryUnit,
    new: MemoryUnit,
    *,
    reason: str,
    actor: str,
    details: dict[str, Any],
    model: str | None = None,
    action: str = "superseded",
) -> str:
    """`new` and the active `old` give two values of one thing: the one said later is the truth. A
    statement older than the active one (a backfill, a late write) becomes history, never the head.
    With the embedding `model`, episodes that restate the old value follow it (`restated.py`)."""
    if said_before(new, old):
        await file_as_history(db, old, new, reason=reason, actor=actor, details=details)
        return "outdated"
    await supersede(db, old, new, reason=reason, actor=actor, details=details, action=action)
    if model is not None:
        await retire_restatements(db, old, new, model, actor=actor, details=details)
    return "superseded"


async def file_as_history(
    db: AsyncSession, head: MemoryUnit, unit: MemoryUnit, *, reason: str, actor: str, details: dict[str, Any]
) -> None:
    """`unit` states an older value of what the active `head` states: it joins head's chain at its
    place in valid time, superseded on arrival (valid until the next value was said)."""
    chain = await history_repo.supersede_chain(db, head)  # oldest first, `head` last
    # `head` at the latest (a unit said before it in its session may name a later day)
    at = next((i for i, u in enumerate(chain) if said_at(u) > said_at(unit)), len(chain) - 1)
    details = {**details, **authors(chain[at], unit)}
    later = chain[at]
    if at > 0:
        await history_repo.link_supersede(db, chain[at - 1].id, unit.id)
    await history_repo.link_supersede(db, unit.id, later.id)
    await history_repo.transition_unit(
        db,
        unit,
        "superseded",
        action="superseded",
        actor=actor,
        details={**details, "superseded_by": str(later.id), "reason": f"older statement; {reason}"},
    )
    await webhooks.memory_superseded(db, unit.bank_id, unit.id, later.id, f"older statement; {reason}")


async def supersede(
    db: AsyncSession,
    old: MemoryUnit,
    new: MemoryUnit,
    *,
    reason: str,
    actor: str,
    details: dict[str, Any] | None = None,
    action: str = "superseded",
    agent_id: str | None = None,
) -> None:
    """`new` replaces the active `old`: old → superseded (valid until new's valid time), new → active;
    both directions of the chain are stored and both units get a history row, naming both units'
    agents when they have one. `agent_id`: the agent that acted (a PATCH's)."""
    extra = {**(details or {}), **authors(new, old)}
    ended = await _end(
        db, old, new, action=action, actor=actor, reason=reason, details=extra, agent_id=agent_id
    )
    if not ended:  # callers lock `old` and see it active first; never on a stale read
        raise Conflict(f"Memory {old.id} is no longer active; retry.")
    await units_repo.inherit_search_text(db, new.id, old.id)
    await history_repo.transition_unit(
        db,
        new,
        "active",
        action="activated",
        actor=actor,
        details={**extra, "supersedes": str(old.id), "reason": reason},
        agent_id=agent_id,
    )
    await webhooks.memory_created(db, new, supersedes=old.id)
    await webhooks.memory_superseded(db, old.bank_id, old.id, new.id, reason)


async def _end(
    db: AsyncSession,
    old: MemoryUnit,
    new: MemoryUnit,
    *,
    action: str,
    actor: str,
    reason: str,
    details: dict[str, Any],
    agent_id: str | None = None,
) -> bool:
    """`old` → superseded by `new` (its history row with `action` and the reason), the chain linked;
    False when `old` was no longer active."""
    ended = await history_repo.transition_unit(
        db,
        old,
        "superseded",
        action=action,
        actor=actor,
        details={**details, "superseded_by": str(new.id), "reason": reason},
        agent_id=agent_id,
    )
    if ended:
        await history_repo.link_supersede(db, old.id, new.id)
    return ended


async def merge(
    db: AsyncSession, unit: MemoryUnit, *, into: MemoryUnit, similarity: float, details: dict[str, Any]
) -> bool:
    """The pending `unit` says again what the active `into` says: `into` keeps its id, gains the
    sources and confidence; `unit` becomes `merged`. False (nothing done) when `unit` was no longer
    in its status when its row was reached (maintenance's merge reads it without a lock)."""
    confidence = min(MAX_CONFIDENCE, 1 - (1 - into.confidence) * (1 - unit.confidence))
    details = {**details, **authors(into, unit)}
    merged = await history_repo.transition_unit(
        db,
        unit,
        "merged",
        action="merged",
        actor="resolver",
        details={**details, "merged_into": str(into.id), "similarity": round(similarity, 4)},
    )
    if not merged:
        return False
    await units_repo.absorb(db, into, unit, confidence=confidence)
    await webhooks.memory_merged(db, unit.bank_id, unit.id, into.id)
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": into.bank_id,
                "memory_id": into.id,
                "action": "merged_from",
                "actor": "resolver",
                "details": {
                    **details,
                    "source": str(unit.id),
                    "confidence": round(confidence, 4),
                    "from": "active",
                    "to": "active",
                },
            }
        ],
    )
    return True
