"""The prompt-ready `context`: units grouped by tag, newest first within a group, each line
`- [YYYY-MM-DD] content (confidence 0.90)`; a unit that is not active says so, so a superseded value
is never read as current. Cut to `max_tokens` (see `tokens.py`) keeping the best-scored units. When
working memory is asked for, the session's turns not yet distilled follow as a `recent turns` group,
dated, in the order they were said: what the agent was told a minute ago is in the prompt too.
With `context_why` each unit's line is followed by its `why` sentence (`  why: …`, `  缘由：…`)."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Protocol, TypeVar

from app.db.repositories.task_ends import TASK_TAG
from app.query.tokens import count_tokens

RECENT_TURNS = "## recent turns (not yet distilled)"


class ContextTurn(Protocol):
    role: str
    content: str
    speaker: str | None
    occurred_at: datetime


class ContextUnit(Protocol):
    content: str
    tags: list[str]
    confidence: float
    status: str
    valid_from: datetime | None
    created_at: datetime


def _shown(unit: ContextUnit) -> str:
    """A task episode reads as its summary plus its outcome (when the summary does not say it)."""
    if TASK_TAG not in unit.tags:
        return unit.content
    outcome = (getattr(unit, "metadata", None) or {}).get("outcome")
    if not isinstance(outcome, str) or not outcome.strip() or outcome in unit.content:
        return unit.content
    return f"{unit.content} — outcome: {outcome}"


def line(unit: ContextUnit, tz: tzinfo, mark_status: bool = True, with_why: bool = False) -> str:
    said = (unit.valid_from or unit.created_at).astimezone(tz)
    marker = "" if unit.status == "active" or not mark_status else f" [{unit.status}]"
    text = f"- [{said:%Y-%m-%d}] {_shown(unit)} (confidence {unit.confidence:.2f}){marker}"
    why = getattr(unit, "why", None) if with_why else None
    if not why:
        return text
    chinese = why.endswith("。")  # the label in the sentence's language
    return f"{text}\n  缘由：{why}" if chinese else f"{text}\n  why: {why}"


U = TypeVar("U", bound=ContextUnit)


def build_context(
    units: list[U], tz: tzinfo, max_tokens: int | None, *, mark_status: bool = True, with_why: bool = False
) -> tuple[str, list[U]]:
    """`units` best first. Returns the block and the units it holds (best first). `mark_status`
    off for `as_of` answers, where every unit was active at that instant; `with_why` adds each unit's
    `why` under its line (counted in `max_tokens`)."""
    kept: list[U] = []
    groups: dict[str, list[U]] = {}
    used = 0
    for unit in units:
        tag = unit.tags[0] if unit.tags else "episode"
        if max_tokens is not None:  # counting tokens is most of the work here: only with a budget
            header = 0 if tag in groups else count_tokens(f"## {tag}") + 1
            cost = count_tokens(line(unit, tz, mark_status, with_why)) + 1 + header
            if used + cost > max_tokens:
                continue  # a shorter, lower-ranked unit may still fit
            used += cost
        groups.setdefault(tag, []).append(unit)
        kept.append(unit)
    blocks = []
    for tag, members in groups.items():  # groups in the order of their best unit
        members.sort(key=lambda u: u.valid_from or u.created_at, reverse=True)
        blocks.append("\n".join([f"## {tag}", *(line(u, tz, mark_status, with_why) for u in members)]))
    return "\n\n".join(blocks), kept


def turn_line(turn: ContextTurn, tz: tzinfo) -> str:
    who = f"{turn.role} ({turn.speaker})" if turn.speaker else turn.role
    return f"- [{turn.occurred_at.astimezone(tz):%Y-%m-%d %H:%M}] {who}: {turn.content}"


def with_recent_turns(context: str, turns: list[ContextTurn], tz: tzinfo, max_tokens: int | None) -> str:
    """`context` followed by the undistilled turns (oldest first); under a token budget, what is left
    of it after the units goes to the newest turns."""
    lines = [turn_line(t, tz) for t in turns]
    if max_tokens is not None:
        left = max_tokens - (count_tokens(context) + 1 if context else 0) - count_tokens(RECENT_TURNS) - 1
        kept: list[str] = []
        for text in reversed(lines):
            left -= count_tokens(text) + 1
            if left < 0:
                break
            kept.append(text)
        lines = kept[::-1]
    if not lines:
        return context
    block = "\n".join([RECENT_TURNS, *lines])
    return f"{context}\n\n{block}" if context else block
