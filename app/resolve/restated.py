"""No leak after a supersede (issue 16): when a value is superseded, the episodes of the bank that
present the old value as current ("For 5000, the assistant recommends the IdeaPad" once the budget
is 8000) are linked to the new head and leave the default retrieval, so a question about the value
does not bring back two budgets; an episode that arrives after the supersede restating the old value
joins the chain the same way instead of becoming active. An episode restates the old value when it is
close to the old unit (cosine) and carries one of the old unit's numbers and none of the new one's; the
values are those of constraints (a budget, a quantity, a limit), the numbers not the dates resolved."""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import history as history_repo
from app.resolve.tuning import RESTATING_NEIGHBOURS, RESTATING_SIMILARITY
from app.webhooks import emit as webhooks

RESTATING_KINDS = ("episode",)  # typed units have their own chains; life events are not restatements
VALUE_KINDS = ("constraint",)  # the values a restatement can carry: budgets, quantities, limits
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
# the dates the distiller writes beside what it resolved ("(2026-12-04)", "(the week of 2026-11-23)",
# "(2022)"): the day something was said, not a value
_RESOLVED_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b|\(\d{4}\)|（\d{4}）")


def _restating_kind(unit: MemoryUnit) -> bool:
    return bool(unit.tags) and unit.tags[0].split(".", 1)[0] in RESTATING_KINDS


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(_RESOLVED_DATE.sub(" ", text))}


def _value_kind(unit: MemoryUnit) -> bool:
    return bool(unit.tags) and unit.tags[0].split(".", 1)[0] in VALUE_KINDS


def restates(candidate: MemoryUnit, old: MemoryUnit, new: MemoryUnit) -> bool:
    """`candidate` carries a number only the old unit has and none that only the new one has."""
    mine, before, after = numbers(candidate.content), numbers(old.content), numbers(new.content)
    gone, current = before - after, after - before
    return bool(mine & gone) and not (mine & current)


async def retire_restatements(
    db: AsyncSession, old: MemoryUnit, new: MemoryUnit, model: str, *, actor: str, details: dict[str, Any]
) -> list[uuid.UUID]:
    """Link the active episodes that restate `old`'s value to `new` (status `superseded`, history
    action `superseded` with the reason). Returns their ids."""
    if not _value_kind(old) or not numbers(old.content) - numbers(new.content):
        return []
    near = await embeddings_repo.neighbours(db, old, model, RESTATING_NEIGHBOURS)
    restating = [
        u
        for u, similarity in near
        if similarity >= RESTATING_SIMILARITY
        and u.id != new.id
        and _restating_kind(u)
        and restates(u, old, new)
    ]
    return sorted(await _link(db, restating, old, new, actor=actor, details=details))


async def restated_head(
    db: AsyncSession, unit: MemoryUnit, model: str
) -> tuple[MemoryUnit, MemoryUnit] | None:
    """For a pending episode: (the superseded unit whose value it restates, the active head of that
    unit's chain), or None when it restates no superseded value."""
    if not _restating_kind(unit) or not numbers(unit.content):
        return None
    near = await embeddings_repo.neighbours(db, unit, model, RESTATING_NEIGHBOURS, status="superseded")
    for old, similarity in near:
        if similarity < RESTATING_SIMILARITY or not _value_kind(old):
            continue
        head = await history_repo.chain_head(db, old.id)
        if head is not None and head.status == "active" and head.id != old.id and restates(unit, old, head):
            return old, head
    return None


async def file_restatement(
    db: AsyncSession,
    unit: MemoryUnit,
    old: MemoryUnit,
    head: MemoryUnit,
    *,
    actor: str,
    details: dict[str, Any],
) -> None:
    """The pending `unit` restates `old`'s value, which `head` replaced: superseded on arrival."""
    await _link(db, [unit], old, head, actor=actor, details=details)


async def _link(
    db: AsyncSession,
    units: list[MemoryUnit],
    old: MemoryUnit,
    head: MemoryUnit,
    *,
    actor: str,
    details: dict[str, Any],
) -> set[uuid.UUID]:
    reason = f"restates the value {old.id} held"
    moved = await history_repo.transition(
        db,
        head.bank_id,
        [(u.id, u.status, "superseded") for u in units],
        action="superseded",
        actor=actor,
        details={u.id: {**details, "superseded_by": str(head.id), "reason": reason} for u in units},
    )
    # only those still active when locked: one another transaction changed meanwhile keeps its status
    await history_repo.link_restatements(db, sorted(moved), head.id)
    for unit_id in sorted(moved):
        await webhooks.memory_superseded(db, head.bank_id, unit_id, head.id, reason)
    return moved
