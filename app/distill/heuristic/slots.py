"""Slots across turns (read by `context.py`): a value said right after its slot was discussed fills it."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """A value said right after its slot was discussed fills it: "如果配置能升级的话，可以到8000" after a
    budget is a budget. `value`: "amount", "date" or "place" (what fills it)."""

    tag: str
    trigger: re.Pattern[str]
    value: str
    relation: str | None = None
    confidence: float = 0.9  # as sure as the rule that names the slot; a hedge lowers it the same way
    importance: float = 0.8


SLOTS: tuple[Slot, ...] = (
    Slot(
        "constraint.budget",
        re.compile(r"\b(?:budget|price range)\b|预算|价位", re.I),
        "amount",
        relation="has_budget",
        importance=0.85,
    ),
    Slot("constraint.time", re.compile(r"\b(?:deadline|due date)\b|截止|期限|最晚什么时候", re.I), "date"),
    Slot(
        "constraint.location",
        re.compile(r"\b(?:address|deliver(?:y|ed)? to|ship(?:ped|ping)? to)\b|地址|送到|寄到", re.I),
        "place",
    ),
)
SLOT_AMOUNT = re.compile(
    r"[$€£¥]\s?\d[\d,]*|(?<![\d.,])\d{3,}(?:,\d{3})*(?:\.\d+)?(?![\d%])|(?<![\d.])\d+(?:\.\d+)?\s*(?:k|元|块|万)(?![A-Za-z])|"
    r"(?<![一二两三四五六七八九十])[一二两三四五六七八九十]+[千万]"
)
