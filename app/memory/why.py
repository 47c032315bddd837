"""`why`: one sentence an agent can say about why it remembers a unit, built from the unit's provenance
and history alone (deterministic: the same unit reads the same every time), in English or Chinese:

    Said by the user in chat-1, turn 7, on 2026-11-20: 'My budget is 8000 now.'; replaces 5000 said on
    2026-11-13.
    用户在 chat-1 第 7 轮（2026-11-20）说：“我的预算现在是8000”；取代了 2026-11-13 说的 5000。

The provenance of a page of units is one statement (`app.db.repositories.why`). The quote is the sentence
of the source turn that shares the most words with the unit, masked like the unit when the bank redacts."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import BankConfig
from app.claims.stored import contract_claim
from app.db.repositories import why as why_repo
from app.db.repositories.why import Neighbour, Provenance
from app.redact import redact
from app.text import clip, has_cjk, split_sentences

QUOTE_CHARS = 120  # a quote of the source turn, at most
VALUE_CHARS = 60  # an older or newer statement named by its content, at most
LISTED_TURNS = 3  # turn numbers named; more are counted
_TOKEN = re.compile(r"[A-Za-z0-9]+|[\u3400-\u9fff]")

ROLE_EN = {"user": "the user", "assistant": "the assistant", "system": "the system", "tool": "a tool"}
ROLE_ZH = {"user": "用户", "assistant": "助手", "system": "系统", "tool": "工具"}


class WhyUnit(Protocol):
    """What of a unit (`MemoryRead`) the sentence reads."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def content(self) -> str: ...
    @property
    def distiller(self) -> str | None: ...
    @property
    def merged_from(self) -> list[uuid.UUID]: ...
    @property
    def valid_from(self) -> datetime | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def source(self) -> Any: ...  # `.session_id`, `.seqs`
    @property
    def claim(self) -> Any: ...  # `.attribute`, `.value`, or None


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


def quote(turn: str, content: str, *, mask: bool) -> str:
    """The sentence of `turn` sharing the most words with `content` (the first of equals), clipped."""
    sentences = split_sentences(turn) or [turn.strip()]
    wanted = _tokens(content)
    best = max(sentences, key=lambda s: len(_tokens(s) & wanted))  # max keeps the first of equals
    best = " ".join(best.split())
    return clip(redact(best) if mask else best, QUOTE_CHARS)


def _value(neighbour: Neighbour, unit: WhyUnit, zh: bool) -> str:
    """The other statement by its claim's value when it states the same attribute, else its words."""
    theirs = contract_claim(neighbour.claims)
    mine = unit.claim
    if theirs and mine is not None and theirs["attribute"] and theirs["attribute"] == mine.attribute:
        return str(theirs["value"])
    words = " ".join(neighbour.content.split())
    if not words:
        return "一条已抹去的记录" if zh else "an erased statement"
    shown = clip(words, VALUE_CHARS)
    return f"“{shown}”" if zh else f"'{shown}'"


def _turns_en(seqs: Sequence[int]) -> str:
    if len(seqs) == 1:
        return f"turn {seqs[0]}"
    listed = [str(s) for s in seqs[:LISTED_TURNS]]
    more = len(seqs) - len(listed)
    if more:
        return f"turns {', '.join(listed)} and {more} more"
    return f"turns {', '.join(listed[:-1])} and {listed[-1]}"


def _turns_zh(seqs: Sequence[int]) -> str:
    listed = "、".join(str(s) for s in seqs[:LISTED_TURNS])
    more = len(seqs) - min(len(seqs), LISTED_TURNS)
    return f"第 {listed} 轮" + (f"等 {len(seqs)} 轮" if more else "")


def _door(created_by: str | None, agent: str | None, zh: bool) -> str:
    """How a direct write came in, by its creator (`api:…`, `mcp:…`), and the agent if one was named."""
    door = "directly"
    if created_by and created_by.startswith("mcp:"):
        door = "through MCP"
    elif created_by and created_by.startswith("api:"):
        door = "through the API"
    if zh:
        where = {"directly": "直接", "through MCP": "通过 MCP ", "through the API": "通过 API "}[door]
        return f"由 {agent} {where}写入" if agent else f"{where}写入"
    return f"Written by {agent} {door}" if agent else f"Written {door}"


def _day(at: datetime, tz: tzinfo) -> str:
    return f"{at.astimezone(tz):%Y-%m-%d}"


def _origin(unit: WhyUnit, facts: Provenance | None, tz: tzinfo, zh: bool, mask: bool) -> str:
    said = unit.valid_from or unit.created_at
    direct = unit.distiller == "api"
    if facts is not None and facts.occurred_at is not None and facts.turn is not None and not direct:
        session = unit.source.session_id or "?"
        seqs = list(unit.source.seqs) or ([facts.seq] if facts.seq is not None else [])
        words = quote(facts.turn, unit.content, mask=mask)
        if zh:
            who = facts.speaker or ROLE_ZH.get(facts.role or "", facts.role or "")
            return f"{who}在 {session} {_turns_zh(seqs)}（{_day(facts.occurred_at, tz)}）说：“{words}”"
        who = facts.speaker or ROLE_EN.get(facts.role or "", facts.role or "someone")
        return f"Said by {who} in {session}, {_turns_en(seqs)}, on {_day(facts.occurred_at, tz)}: '{words}'"
    if direct:
        door = _door(facts.created_by if facts else None, getattr(unit, "agent_id", None), zh)
        return f"{_day(said, tz)} {door}" if zh else f"{door} on {_day(said, tz)}"
    return f"{_day(said, tz)} 存入" if zh else f"Stored on {_day(said, tz)}"


def sentence(unit: WhyUnit, facts: Provenance | None, tz: tzinfo, *, zh: bool, mask: bool) -> str:
    """The unit's `why` (the module's docstring)."""
    parts = [_origin(unit, facts, tz, zh, mask)]
    if facts is not None and facts.replaced is not None:
        value, day = _value(facts.replaced, unit, zh), _day(facts.replaced.said_at, tz)
        parts.append(f"取代了 {day} 说的 {value}" if zh else f"replaces {value} said on {day}")
    if facts is not None and facts.replaced_by is not None:
        value, day = _value(facts.replaced_by, unit, zh), _day(facts.replaced_by.said_at, tz)
        parts.append(f"已于 {day} 被 {value} 取代" if zh else f"replaced by {value} on {day}")
    if unit.merged_from:
        n = len(unit.merged_from)
        parts.append(f"又被确认 {n} 次" if zh else f"confirmed {n} more time{'s' if n > 1 else ''}")
    return "；".join(parts) + "。" if zh else "; ".join(parts) + "."


def in_chinese(unit: WhyUnit, config: BankConfig) -> bool:
    """The bank's `why_language`, or the unit's own."""
    if config.why_language != "auto":
        return config.why_language == "zh"
    return has_cjk(unit.content)


async def explain(
    db: AsyncSession, units: Sequence[WhyUnit], tz: tzinfo, config: BankConfig
) -> dict[uuid.UUID, str]:
    """Each unit's `why`, by id: one statement for the page of units."""
    facts = await why_repo.provenance(db, [u.id for u in units])
    return {
        u.id: sentence(u, facts.get(u.id), tz, zh=in_chinese(u, config), mask=config.redact) for u in units
    }
