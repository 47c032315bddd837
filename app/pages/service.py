"""Knowledge pages (docs/architecture.md, "Knowledge pages"): an entity's current facts, preferences,
constraints and task state, grouped by tag, L3 first and newest first, every line citing its unit. Derived
from the active units on read: a superseded, merged, expired or forgotten unit is never on a page, and there
is no second copy that could drift. The profile is the page of the bank's main subject: `config.subject`, else
the speaker of most user turns, else the user no turn names (the units that name no person)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.repositories import pages as repo
from app.errors import NotFound
from app.schemas.pages import KnowledgePage, PageEntityRead, PageLine, PageSection

# Kinds a page leaves out: conversation (episodes, task episodes) is history, not what is true now.
LEFT_OUT = ["episode"]
KIND_ORDER = ("fact", "preference", "constraint", "task_state")
THE_USER = "The user"


def _kind_rank(tag: str) -> int:
    kind = tag.split(".", 1)[0]
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def build_page(entity: repo.PageEntity, units: list[repo.PageUnit]) -> KnowledgePage:
    """`units` come L3 first, then newest first; each goes to the section of its first tag. Built in
    one pass (a page has hundreds of lines)."""
    groups: dict[str, tuple[list[PageLine], list[str]]] = {}
    for unit in units:
        lines, text = groups.setdefault(unit.tags[0], ([], []))
        when = unit.valid_from or unit.created_at
        lines.append(
            PageLine(
                memory_id=unit.id,
                content=unit.content,
                valid_from=when,
                confidence=unit.confidence,
                layer=unit.layer,
            )
        )
        cite = f"[{unit.day}] confidence {unit.confidence:.2f}{' · L3' if unit.layer == 'semantic' else ''}"
        text.append(f"- {unit.content} ({cite}; memory `{unit.id}`)")
    # Sections with L3 knowledge first, then by kind (facts, preferences, constraints, task state).
    order = sorted(groups, key=lambda tag: (groups[tag][0][0].layer != "semantic", _kind_rank(tag), tag))
    markdown = [f"# {entity.name}"] + ([] if groups else ["", "_Nothing is known yet._"])
    for tag in order:
        markdown += ["", f"## {tag}", *groups[tag][1]]
    return KnowledgePage(
        entity=PageEntityRead(id=entity.id, name=entity.name, type=entity.type),
        sections=[PageSection(tag=tag, lines=groups[tag][0]) for tag in order],
        markdown="\n".join(markdown) + "\n",
    )


async def _page(db: AsyncSession, bank: ConfiguredBank, entity: repo.PageEntity) -> KnowledgePage:
    if entity.id is None:  # the bank's user, named by no entity
        units = await repo.unnamed_subject_units(db, bank.id, LEFT_OUT, bank.config.timezone)
    else:
        units = await repo.entity_units(db, bank.id, entity.id, LEFT_OUT, bank.config.timezone)
    return build_page(entity, units)


async def entity_page(db: AsyncSession, bank: ConfiguredBank, entity_id: uuid.UUID) -> KnowledgePage:
    """`GET /v1/banks/{bank_id}/entities/{entity_id}/page` (404 for an entity of no such bank)."""
    entity = await repo.entity_by_id(db, bank.id, entity_id)
    if entity is None:
        raise NotFound(f"Entity {entity_id} not found.")
    return await _page(db, bank, entity)


async def profile(db: AsyncSession, bank: ConfiguredBank, name: str | None = None) -> KnowledgePage:
    """`GET /v1/banks/{bank_id}/profile`: the page of the bank's main subject, or of the entity `name`
    (the MCP tool's argument; 404 when the bank has no entity of that name)."""
    if name is not None:
        entity = await repo.entity_by_name(db, bank.id, name)
        if entity is None:
            raise NotFound(f"No entity named {name!r} in this bank.")
        return await _page(db, bank, entity)
    subject = bank.config.subject or await repo.main_speaker(db, bank.id)
    entity = await repo.entity_by_name(db, bank.id, subject) if subject else None
    return await _page(db, bank, entity or repo.PageEntity(None, subject or THE_USER, "person"))
