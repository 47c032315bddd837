"""The values a part of a sentence states beside the clause before it (issue 32): a second value with words
of its own is a claim of its own ("30 desks now, probably 50 by Q2"), a bound opens a limit ("…, max 150 a
night"), a bare value or a day's hour belongs to its clause, as do a thing's attribute said after it
(…有一台打印机，IP是…) and what a change said before it moves to ("…raised it, so from July I pay 48")."""

from __future__ import annotations

import re

from app.claims.values import Span, find_values
from app.text import STOPWORDS_EN, pos_words

_NEGATED = re.compile(r"\s*(?:not|no|never|instead|rather|而不是|不是|并非)\b", re.IGNORECASE)

# a bound opening a value ("max 150 a night", "不超过2000"): a limit of its own
_BOUND = re.compile(
    r"\s*(?:(?:max(?:imum)?|min(?:imum)?|up to|under|no more than|at most|at least|less than)\b|"
    r"最多|至多|最少|至少|不超过|不低于|不少于|控制在)",
    re.IGNORECASE,
)


def second_value(before: str, part: str) -> bool:
    """Whether a part without a verb states a value of its own beside the clause before's ("30 desks
    now, probably 50 by Q2", "four nights, max £120 a night"): two values, two claims. A value after a
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


# A Chinese clause that brings a thing in, its object last and no value of its own ("办公室有一台打印机",
# "公司给我配了一台测试机"): not a wish for one (想买台…), whose value is the speaker's bound
_THING_LAST_ZH = re.compile(r"(?:有|了)[^，,。；;]{0,6}[^，,。；;了的]{1,8}$")
_WISH_ZH = re.compile(r"想|要|打算|准备|考虑|计划")
# what a detail says beside its value: a short name of the thing's attribute (IP, 编号, 月费)
_DETAIL_REST_ZH = re.compile(r"^[\u4e00-\u9fffA-Za-z]{1,4}$")


def detail_of_thing(before: str, part: str) -> bool:
    """Whether a Chinese part is an attribute of the thing the clause before brought in, a typed value
    and a short noun ("…有一台跳板机，IP是10.0.3.25", "…配了一台测试机，编号是A-1024"): one claim."""
    if not _THING_LAST_ZH.search(before) or _WISH_ZH.search(before):
        return False  # (the patterns first: this is asked of every Chinese clause)
    values = find_values(part)
    # (the count of the thing brought in, 一台, is no value of its own)
    if not values or not all(s.value.unit.startswith("count:") for s in find_values(before)):
        return False
    rest = part
    for span in reversed(values):
        rest = rest[: span.start] + rest[span.end :]
    rest = re.sub(r"[是为：:，,。.！!；;\s]|的", "", rest)
    # (a noun alone: "现在是十个人了" says how many there are now, no attribute of the thing)
    words = pos_words(rest)
    noun = bool(words) and words[-1][1][:1] in ("n", "e") and all(f[:1] in ("n", "e", "m") for _, f in words)
    return _DETAIL_REST_ZH.match(rest) is not None and noun


# A change done to what was spoken of, naming no value ("Landlord hiked it", "They moved the call", "I
# switched gyms", 涨价了, 票改签了, 钥匙换了个地方)
_CHANGED_EN = re.compile(
    r"\b(?:hiked|raised|bumped|upped|increased|lowered|cut|reduced|dropped|changed|moved|pushed|switched|"
    r"swapped|replaced|rebooked|upgraded|downgraded|updated|rescheduled|renamed|relocated|transferred|"
    r"shifted|extended|shortened|postponed|delayed|doubled|halved)"
    r"(?:\s+(?:it|them|that|(?:the|our|my)\s+[\w-]+|[a-z]+s))?\s*$",
    re.IGNORECASE,
)
_CHANGED_ZH = re.compile(
    r"(?:[改换调变挪搬迁][\u4e00-\u9fff]?了|(?:涨|降|加|调)价|换了个?[\u4e00-\u9fff]{1,3})了?$"
)
# ...and what it is now, said next ("…, now it's on Fridays", "…，现在放公司抽屉里")
_NOW = re.compile(
    r"^(?:(?:so|and)\s+)?(?:now\b|it'?s\s+now\b|(?:it'?s|it\s+is|they'?re)\b.*\bnow\W*$)|^(?:现在|如今|目前|以后)",
    re.IGNORECASE,
)


def changed_then_said(before: str, text: str, zh: bool) -> bool:
    """Whether `before` says a change and `text` the value it changed to, or what holds now: one claim,
    not a bare change and a value with no change word."""
    changed = (_CHANGED_ZH if zh else _CHANGED_EN).search(before.strip(" ,，。.")) is not None
    return changed and not find_values(before) and (bool(find_values(text)) or _NOW.match(text) is not None)
