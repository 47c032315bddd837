"""The prompt-ready `context`: units grouped by tag, newest first within a group, each line
`- [YYYY-MM-DD] content (confidence 0.90)`; a unit that is not active says so, so a superseded value
is never read as current. Cut to `max_tokens` (see `tokens.py`) keeping the best-scored units."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Protocol, TypeVar

from app.query.tokens import count_tokens


class ContextUnit(Protocol):
    content: str
    tags: list[str]
    confidence: float
    status: str
    valid_from: datetime | None
    created_at: datetime


def line(unit: ContextUnit, tz: tzinfo, mark_status: bool = True) -> str:
    said = (unit.valid_from or unit.created_at).astimezone(tz)
    marker = "" if unit.status == "active" or not mark_status else f" [{unit.status}]"
    return f"- [{said:%Y-%m-%d}] {unit.content} (confidence {unit.confidence:.2f}){marker}"


U = TypeVar("U", bound=ContextUnit)


def build_context(
    units: list[U], tz: tzinfo, max_tokens: int | None, *, mark_status: bool = True
) -> tuple[str, list[U]]:
    """`units` best first. Returns the block and the units it holds (best first). `mark_status`
    off for `as_of` answers, where every unit was active at that instant."""
    kept: list[U] = []
    groups: dict[str, list[U]] = {}
    used = 0
    for unit in units:
        tag = unit.tags[0] if unit.tags else "episode"
        if max_tokens is not None:  # counting tokens is most of the work here: only with a budget
            header = 0 if tag in groups else count_tokens(f"## {tag}") + 1
            cost = count_tokens(line(unit, tz, mark_status)) + 1 + header
            if used + cost > max_tokens:
                continue  # a shorter, lower-ranked unit may still fit
            used += cost
        groups.setdefault(tag, []).append(unit)
        kept.append(unit)
    blocks = []
    for tag, members in groups.items():  # groups in the order of their best unit
        members.sort(key=lambda u: u.valid_from or u.created_at, reverse=True)
        blocks.append("\n".join([f"## {tag}", *(line(u, tz, mark_status) for u in members)]))
    return "\n\n".join(blocks), kept
