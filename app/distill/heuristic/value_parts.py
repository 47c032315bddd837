"""The values a part of a sentence states beside the clause before it (issue 32): a second value with words
of its own is a claim of its own ("45 seats now, probably 60 by Q3"), a bound opens a limit ("…, max 150 a
night"), a bare value or a day's hour belongs to its clause."""

from __future__ import annotations

import re

from app.claims.values import Span, find_values
from app.text import STOPWORDS_EN

_NEGATED = re.compile(r"\s*(?:not|no|never|instead|rather|而不是|不是|并非)\b", re.IGNORECASE)

# a bound opening a value ("max 150 a night", "不超过2000"): a limit of its own
_BOUND = re.compile(
    r"\s*(?:(?:max(?:imum)?|min(?:imum)?|up to|under|no more than|at most|at least|less than)\b|"
    r"最多|至多|最少|至少|不超过|不低于|不少于|控制在)",
    re.IGNORECASE,
)


def second_value(before: str, part: str) -> bool:
    """Whether a part without a verb states a value of its own beside the clause before's ("45 seats
    now, probably 60 by Q3", "six nights, max £180 a night"): two values, two claims. A value after a
    clause that holds none is that clause's ("I bought a kettle, 40 euros")."""
    values, earlier = find_values(part), find_values(before)
    if _BOUND.match(part) and values:
        return True  # a limit said after its thing ("a hotel near the venue, max 150 a night"): a claim
    if not earlier or _NEGATED.match(part):
        return False  # "…is 300, not 200": the value it replaces, said with the clause
    if {s.value.type for s in earlier + values} <= {"date", "weekday", "time"}:
        return False  # a day and its hour ("next Friday, 3pm works"): one moment
    return _with_words(part, values)


def value_with_words(part: str) -> bool:
    """Whether a part states a value and words of its own beside it ("probably 60 by Q3", "每月最多50块"),
    not a value alone ("40 euros")."""
    return _with_words(part, find_values(part))


def _with_words(part: str, values: list[Span]) -> bool:
    rest = part
    for span in values:
        rest = rest.replace(span.value.text, " ")
    words = re.findall(r"[A-Za-z][A-Za-z0-9]+", rest)  # (a quarter, "Q3", is a word)
    return bool(values) and (
        any(w.lower() not in STOPWORDS_EN for w in words)
        or re.search(r"[\u4e00-\u9fff]{2,}", rest) is not None
    )
