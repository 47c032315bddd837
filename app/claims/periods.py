"""The period a value is of ("last year's bonus", "the Q3 target", 去年的年终奖, 周末): two values of two
periods are two facts, both true."""

from __future__ import annotations

import re
from functools import lru_cache

# A period a value is of ("last year's bonus", "this month's bill", 去年的年终奖): two values of two
# periods are two facts, both true. The key is the period as said, its deixis and unit.
EN_PERIOD = re.compile(
    r"\b(?P<when>this|last|next|previous|coming|current)\s+(?P<unit>year|month|week|quarter|semester|term|"
    r"season|spring|summer|autumn|fall|winter)(?:'s)?\b",
    re.IGNORECASE,
)
ZH_PERIOD = re.compile(
    r"(?:今|去|明|前|后)年|(?:这|上|下|本)个?(?:月|周|星期|季度|学期)|(?:本|上|下)季度|第[一二三四1-4]季度|[上下]半年"
)
# a period named by itself: a quarter, a half, a fiscal year ("the Q3 target", "FY26 budget")
NAMED_PERIOD = re.compile(
    r"(?<![A-Za-z0-9])(?:Q[1-4]|H[12]|FY\s?\d{2,4}|(?i:week(?:day|end|night)s?))(?![A-Za-z0-9])|工作日|周末|节假日"
)


@lru_cache(maxsize=16_384)
def periods(text: str) -> frozenset[str]:
    """The periods `text` says its values are of: "last year", 去年 …"""
    found = {f"{m.group('when').lower()} {m.group('unit').lower()}" for m in EN_PERIOD.finditer(text)}
    named = {m.group().replace(" ", "") for m in NAMED_PERIOD.finditer(text)}
    return frozenset(found | named | {m.group() for m in ZH_PERIOD.finditer(text)})
