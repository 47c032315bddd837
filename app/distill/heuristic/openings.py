"""Where a sentence's content starts after its markers (greetings, discourse markers, the openings of a
correction or a hedge), and whether they corrected or hedged it."""

from __future__ import annotations

import re

from app.distill.heuristic.noise import (
    CORRECTION_OPENING_EN,
    CORRECTION_OPENING_ZH,
    HEDGE_OPENING_EN,
    HEDGE_OPENING_ZH,
    WRAPPING_EN,
    WRAPPING_ZH,
)
from app.distill.heuristic.predicates import PRONOUN_ZH, has_predicate_en
from app.text import has_cjk


def opening(sentence: str) -> tuple[int, bool, bool]:
    """Where the sentence's content starts after its markers, and whether they corrected or hedged."""
    zh = has_cjk(sentence)
    wrapping = WRAPPING_ZH if zh else WRAPPING_EN
    correction = CORRECTION_OPENING_ZH if zh else CORRECTION_OPENING_EN
    hedge = HEDGE_OPENING_ZH if zh else HEDGE_OPENING_EN
    position, corrected, hedged = 0, False, False
    while True:
        rest = sentence[position:]
        found = [
            (m.end(), i)
            for i, p in enumerate((correction, hedge, wrapping))
            if (m := p.match(rest)) and m.end()
        ]
        if not found:
            break
        end, which = max(found, key=lambda f: (f[0], -f[1]))
        if end >= len(rest.rstrip(" .!?。！？")):
            # nothing but wrapping: left alone; nothing but owning an error ("不对，我记混了。"): the whole
            # sentence says so, and states nothing (the next one corrects)
            return (0, False, False) if which == 0 else (position, corrected, hedged)
        corrected = corrected or which == 0
        hedged = hedged or which == 1
        position += end
    return position + _lead_in(sentence[position:], zh), corrected, hedged


# A few words before a colon ("While I have you:", "Two things:", "还有个事："), then a clause
_LEAD_IN = re.compile(r"(?:[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,5}|[\u4e00-\u9fff]{2,8})\s*[:：]\s*")


def _lead_in(rest: str, zh: bool) -> int:
    """The length of a heading before a colon that frames the clause after it, a clause of its own; 0 for
    a label and its value ("Address: 12 Elm St", "地址：学院路17号"), a value in it ("Step 2:", 3点：)."""
    lead = _LEAD_IN.match(rest)
    if lead is None or any(ch.isdigit() for ch in lead.group()):
        return 0
    after = rest[lead.end() :]
    # (Chinese: a clause with its subject; a list or a letter after a colon has verbs too)
    return lead.end() if (PRONOUN_ZH.match(after) if zh else has_predicate_en(after)) else 0
