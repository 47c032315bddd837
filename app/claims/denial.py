"""A value denied as the one replaced ("amoxicillin, not penicillin", "改用微信，别打电话了",
"复诊不是周四了，是周五上午"): the old value a statement names by denying it, and the topic a Chinese
denial carries to the value said after it."""

from __future__ import annotations

import re

_LEAD_NOT_EN = re.compile(r"^\s*(?:and\s+|but\s+)?not\s+(?P<old>.+)$", re.IGNORECASE)
_LEAD_NOT_ZH = re.compile(r"^\s*(?:而不是|不是|不要|别|不用)(?P<old>.+?)(?:了)?$")
# a topic's value denied before its value is said ("复诊不是周四了，是周五上午")
_TOPIC_NOT_ZH = re.compile(
    r"^\s*(?P<topic>[\u4e00-\u9fffA-Za-z]{1,8}?)(?:已经|现在)?不是(?P<old>.+?)(?:了)?$"
)
_IS_ZH = re.compile(r"^\s*(?:而|应该|其实|现在)?是")


def denied(clause: str, clauses: list[str], zh: bool) -> tuple[str, str] | None:
    """(the value the clause denies, the topic it denies it of) when the clause only denies a value: it
    opens with "not" / 不是, or, before a clause saying the value (…，是…), denies its topic's."""
    found = (_LEAD_NOT_ZH if zh else _LEAD_NOT_EN).match(clause)
    if found is None and zh and any(_IS_ZH.match(c) for c in clauses[1:]):
        found = _TOPIC_NOT_ZH.match(clause)
    if found is None:
        return None
    return found.group("old"), found.groupdict().get("topic") or ""


def carried(clause: str, topic: str) -> tuple[str, str]:
    """(the clause with a denied value's topic carried in when it says the value, the topic left)."""
    if topic and _IS_ZH.match(clause):
        return topic + clause.lstrip(), ""
    return clause, topic
