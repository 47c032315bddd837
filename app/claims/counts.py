"""What a count counts: the noun after a number ("8 engineers", "8个后端") is the count's unit, so "2
designers" is no other count of the engineers."""

from __future__ import annotations

import re

from app.claims.model import Claim, Value
from app.text import STOPWORDS_EN

_COUNTED_EN = re.compile(r"\s+([a-z]{3,})\b")
# the thing a Chinese count names, after its classifier: a run of characters up to a particle
_COUNTED_ZH = re.compile(
    r"(?![左右以上下多就了的而也还都呢吧啊着过来去])[\u4e00-\u9fff]{1,4}?(?=[了的吧呢啊，。,.!！?？\s]|$)"
)


def counted(value: Value, after: str) -> Value:
    """A bare number or a count of things, its unit the noun it counts (`count:engineer`); `after`
    the text that follows it."""
    if value.type == "number" and (m := _COUNTED_EN.match(after)):
        from lemminflect import getAllLemmas

        nouns = getAllLemmas(m.group(1)).get("NOUN", ())
        plural = bool(nouns) and nouns[0] != m.group(1)  # things counted are said in the plural
        if plural and m.group(1) not in STOPWORDS_EN:
            return Value(value.type, value.text, value.number, f"count:{nouns[0]}", value.key)
    if value.type == "quantity" and value.unit == "count" and (m := _COUNTED_ZH.match(after)):
        return Value(value.type, value.text, value.number, f"count:{m.group()}", value.key)
    return value


def units_agree(a: str, b: str) -> bool:
    """Units of one dimension: equal, one unsaid, or a count beside a count of named things."""
    counts = {a.split(":")[0], b.split(":")[0]} == {"count"}
    return not (a and b) or a == b or (counts and "count" in (a, b))


def one_count(old: Claim, new: Claim) -> bool:
    """Counts of one kind of thing by one verb ("住三晚", "得住四晚了"; "we need 3 licences", "we
    need 5 licences now"), or the count a verb of change moves ("runs 6 replicas", "scaled it out to 10
    replicas"): the count is the attribute."""
    a, b = old.value, new.value
    counted = a.unit.startswith("count:") and a.unit == b.unit
    return counted and (new.shift or _counts_by(old, new.verb) or _counts_by(new, old.verb))


def _counts_by(claim: Claim, verb: str) -> bool:
    """Whether `verb` (another clause's) is said before this claim's value, or neither says one."""
    before = claim.text[: max(claim.text.find(claim.value.text), 0)].lower()
    return not verb or not claim.verb or verb in before
