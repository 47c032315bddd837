"""The `why` sentence from provenance (app/memory/why.py), without a database: each clause, both languages,
the quote's choice, and the same sentence every time."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from app.banks.config import BankConfig
from app.claims.stored import columns, contract_claim, read_claims
from app.db.repositories.why import Neighbour, Provenance
from app.memory.why import in_chinese, quote, sentence

D1 = datetime(2026, 11, 13, 9, tzinfo=UTC)
D2 = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)  # already the 21st in Shanghai


@dataclass
class Claim:
    attribute: str
    value: str


@dataclass
class Source:
    session_id: str | None
    seqs: list[int]


@dataclass
class Unit:
    content: str
    source: Source = field(default_factory=lambda: Source("chat-1", [7]))
    distiller: str | None = "heuristic-2"
    claim: Any = None
    merged_from: list[uuid.UUID] = field(default_factory=list)
    valid_from: datetime | None = D2
    created_at: datetime = D2
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    agent_id: str | None = None


def facts(turn: str | None = None, **kwargs: Any) -> Provenance:
    base: dict[str, Any] = {
        "seq": 7,
        "role": "user",
        "speaker": None,
        "occurred_at": D2,
        "turn": turn,
        "replaced": None,
        "replaced_by": None,
        "created_by": None,
    }
    return Provenance(**(base | kwargs))


def stored(content: str, tags: tuple[str, ...] = ("constraint.budget",)) -> list[dict[str, Any]]:
    """The claims of `content` as a unit row holds them."""
    claims: list[dict[str, Any]] = columns(read_claims(content, tags))["claims"]
    return claims


def claim_of(content: str, tags: tuple[str, ...] = ("constraint.budget",)) -> Claim:
    shown = contract_claim(stored(content, tags))
    assert shown is not None
    return Claim(shown["attribute"], shown["value"])


def test_a_turn_and_the_value_it_replaced() -> None:
    unit = Unit("The user's budget is 8000.", claim=claim_of("The user's budget is 8000."))
    old = "The user's budget is 5000."
    said = facts("Hi there. My budget is 8000 now. Thanks!", replaced=Neighbour(old, stored(old), D1))
    assert sentence(unit, said, UTC, zh=False, mask=True) == (
        "Said by the user in chat-1, turn 7, on 2026-11-20: 'My budget is 8000 now.'; "
        "replaces 5000 said on 2026-11-13."
    )
    # In the bank's zone; the same sentence every time.
    shanghai = sentence(unit, said, ZoneInfo("Asia/Shanghai"), zh=False, mask=True)
    assert "on 2026-11-21:" in shanghai
    assert shanghai == sentence(unit, said, ZoneInfo("Asia/Shanghai"), zh=False, mask=True)


def test_another_attribute_is_named_by_its_words_and_history_both_ways() -> None:
    unit = Unit(
        "Ana moved to Porto.",
        claim=claim_of("Ana moved to Porto.", ("fact",)),
        merged_from=[uuid.uuid4()] * 2,
    )
    other = "Ana works in Lisbon at a bakery near the river, five days a week."
    said = facts(
        "Ana moved to Porto.",
        speaker="Ana",
        replaced=Neighbour(other, stored(other, ("fact",)), D1),
        replaced_by=Neighbour("", None, D2),
    )
    assert sentence(unit, said, UTC, zh=False, mask=False) == (
        "Said by Ana in chat-1, turn 7, on 2026-11-20: 'Ana moved to Porto.'; replaces 'Ana works in "
        "Lisbon at a bakery near the river, five days…' said on 2026-11-13; replaced by an erased "
        "statement on 2026-11-20; confirmed 2 more times."
    )


def test_several_turns_and_the_roles() -> None:
    unit = Unit("The refund was approved.", source=Source("s", [3, 4, 5, 8, 9]))
    assert sentence(unit, facts("The refund was approved.", role="tool"), UTC, zh=False, mask=False) == (
        "Said by a tool in s, turns 3, 4, 5 and 2 more, on 2026-11-20: 'The refund was approved.'."
    )
    two = Unit("x", source=Source("s", [3, 4]))
    assert "turns 3 and 4," in sentence(two, facts("x"), UTC, zh=False, mask=False)
    assert "第 3、4、5 轮等 5 轮" in sentence(unit, facts("退款已批准。"), UTC, zh=True, mask=False)


def test_direct_writes_by_door_and_stored_units() -> None:
    written = Unit("The wifi is Harbour.", distiller="api", source=Source(None, []))
    assert sentence(written, facts(None, created_by="mcp:key:1"), UTC, zh=False, mask=False) == (
        "Written through MCP on 2026-11-20."
    )
    assert sentence(written, facts(None, created_by="api:admin"), UTC, zh=True, mask=False) == (
        "2026-11-20 通过 API 写入。"
    )
    assert sentence(written, None, UTC, zh=False, mask=False) == "Written directly on 2026-11-20."
    by_agent = Unit("The wifi is Harbour.", distiller="api", source=Source(None, []), agent_id="planner")
    assert sentence(by_agent, facts(None, created_by="mcp:key:1"), UTC, zh=False, mask=False) == (
        "Written by planner through MCP on 2026-11-20."
    )
    assert sentence(by_agent, facts(None, created_by="api:key:2"), UTC, zh=True, mask=False) == (
        "2026-11-20 由 planner 通过 API 写入。"
    )
    imported = Unit(
        "Old fact.", distiller="heuristic-1", source=Source(None, []), valid_from=None, created_at=D1
    )
    assert sentence(imported, None, UTC, zh=False, mask=False) == "Stored on 2026-11-13."


def test_the_chinese_form() -> None:
    unit = Unit("用户的预算是8000", claim=claim_of("用户的预算是8000"))
    said = facts(
        "好的。我的预算现在是8000。谢谢",
        replaced=Neighbour("用户的预算是5000", stored("用户的预算是5000"), D1),
    )
    assert sentence(unit, said, UTC, zh=True, mask=True) == (
        "用户在 chat-1 第 7 轮（2026-11-20）说：“我的预算现在是8000。”；取代了 2026-11-13 说的 5000。"
    )
    assert in_chinese(unit, BankConfig())
    assert not in_chinese(unit, BankConfig(why_language="en"))
    assert in_chinese(Unit("Budget 8000."), BankConfig(why_language="zh"))


def test_the_quote_is_the_closest_sentence_masked_and_clipped() -> None:
    turn = "We met on Monday. My card is 4111 1111 1111 1111 and my budget is 8000. Bye."
    assert quote(turn, "The user's budget is 8000.", mask=True) == (
        "My card is [REDACTED:card_number] and my budget is 8000."
    )
    assert "4111" in quote(turn, "The user's budget is 8000.", mask=False)
    long = "My budget is 8000 " + "and more words " * 30
    shown = quote(long, "budget 8000", mask=False)
    assert len(shown) <= 120
    assert shown.endswith("…")
