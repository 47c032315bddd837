"""Shared memory: who wrote the two units a resolution decision is about (docs/guides/shared-memory.md)."""

from __future__ import annotations

from app.db.models import MemoryUnit


def authors(kept: MemoryUnit, replaced: MemoryUnit) -> dict[str, str]:
    """The agents of the unit that stays in force and of the one that does not, for the history rows
    of a supersede, a merge or an older statement filed as history; nothing when neither names one."""
    if kept.agent_id is None and replaced.agent_id is None:
        return {}
    return {"kept_agent": kept.agent_id or "", "replaced_agent": replaced.agent_id or ""}
