"""The time filter in a memory query: "where did I eat last month" keeps only units from last month.

`parse_time_filter(text, now, tz)` finds the first time phrase of a query (English or Chinese) and
returns the calendar period it names, computed in the caller's time zone. Queries look backwards:
a phrase whose period starts after `now` ("tomorrow", "next week", "this Friday" asked on a
Monday) is about plans, not about when things were said, so it gives no filter.

Supported phrases (case-insensitive; the tables `_FIXED_EN`, `_FIXED_ZH` and `_RULES_*` below):

- a day: today, tonight, this morning/afternoon/evening, yesterday, last night, the day before
  yesterday, N days ago, on March 3 / March 3rd, 2025 / the 3rd of March, 2026-03-03, on Friday,
  last Friday, this Monday, Friday last week; 今天 今晚 今早 昨天 昨晚 前天 大前天 N天前 3月5日
  三月五号 周五 星期五 上周五 这周一
- a week (Monday to Monday): this week, last week, the week before last, N weeks ago; 本周 这周
  这个星期 上周 上个星期 上礼拜 上上周 N周前 N个星期前
- a weekend (Saturday 00:00 to Monday 00:00): last weekend, this weekend, the weekend (the latest
  one, today's when today is Saturday or Sunday); 周末 上周末 这周末
- a month: this month, last month, the month before last, N months ago, in March, early March,
  March 2025, 2026-03, last March (the latest March before this month); 本月 这个月 上个月 上上个月
  N个月前 三月 3月 2025年3月 去年三月
- a year: this year, last year, the year before last, N years ago, in 2025; 今年 去年 前年 N年前
  2025年
- a window ending now: in the last/past N hours|days|weeks|months|years, the past week, last 3 days,
  the past few days (few = 3); recently, lately (7 days); 最近N天 过去N周 近一周 最近几个月
  过去24小时; 最近 近期 近来 这几天 (7 days)
- "since <phrase>", "<phrase>以来/至今/到现在": the period's start to now.

Choices:

- A bare month is the latest one, this month included: "in March" asked in November 2026 is March
  2026, asked in February 2026 it is March 2025. A date without a year is the latest, today
  included. "last March" is the latest March before the current month. Such a filter is `yearless`:
  when its window holds no memory, the query takes the latest earlier year's that does.
- A bare weekday ("on Friday", "last Friday", 周五) is the latest one before today: asked on a
  Friday it is a week ago, since today would be "today". "this Friday" and 这周五 are this week's;
  "Friday last week" and 上周五 are last week's.
- Words that only look like dates do not count: "may", "march", "april", "june", "august" and the
  month abbreviations name a month only next to a day, a year or in/during/last/this/early/late/
  mid/of/since; "sunday best", "Good Friday", "most recent", 离我最近 (nearest), 最近一次 (the
  latest time), 以前天天, 一周三次, 每周五, 下周末 give nothing; bare numbers never do.
- Several phrases: the first one in the text wins; of phrases starting at the same place the
  longest ("上周五" over "上周", "March 3" over "March"). A phrase about the future gives no filter
  and hides the shorter phrases inside it ("本周三" asked on a Monday is not "本周").

dateparser is not used: every phrase above maps to a period by calendar arithmetic, which is exact
about period boundaries (dateparser returns a point) and much faster.

Performance (measured on the development machine, CPython 3.11, one core): a query with no time
phrase takes 2-8 µs when the per-language keyword gate turns it away ("what is my budget?",
"我的预算是多少？") and 30-50 µs when the gate lets it through ("may I ask ..."); a query with a
phrase 30-70 µs, about 110 µs for a long English one. Patterns are compiled at import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo

from app.query.periods import (
    Clock,
    Resolver,
    Span,
    ago,
    date_en,
    day_first_date_en,
    iso_date,
    latest_weekend,
    month_en,
    month_zh,
    normal,
    recent,
    relative_period,
    weekday_en,
    weekday_zh,
    window,
    year_number,
)
from app.text import MONTHS_EN, NUMBERS_EN, WEEKDAYS_EN, ZH_NUMERAL


@dataclass(frozen=True)
class TimeFilter:
    start: datetime  # aware, in the query's time zone, inclusive
    end: datetime  # aware, in the query's time zone, exclusive
    phrase: str  # the text that produced it: "last week", "上周"
    vague: bool = False  # "recently", 最近: a week as a guess, not a period the query names
    # a month or a date named without its year ("in June", "on March 3", 六月): the latest one, or an
    # earlier year's when the latest holds no memory (`app.query.channels.size_window`)
    yearless: bool = False


# --- fixed phrases -------------------------------------------------------------------------------


def _alternatives(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first, so that "last weekend" is tried before "last week"."""
    return "|".join(sorted(words, key=len, reverse=True)).replace(" ", r"\s+")


def _this_and_last_en(unit: str) -> dict[str, Resolver]:
    """Name the current `unit` (week, month, year), the last one and the one before it, in English."""
    return {
        f"this {unit}": relative_period(unit, 0),
        f"last {unit}": relative_period(unit, -1),
        f"previous {unit}": relative_period(unit, -1),
        f"the {unit} before last": relative_period(unit, -2),
    }


# Fixed phrases. Within a table, the longest phrase that fits wins.
_FIXED_EN: dict[str, Resolver] = {
    "today": relative_period("day", 0),
    "tonight": relative_period("day", 0),
    "this morning": relative_period("day", 0),
    "this afternoon": relative_period("day", 0),
    "this evening": relative_period("day", 0),
    "yesterday": relative_period("day", -1),
    "last night": relative_period("day", -1),
    "the day before yesterday": relative_period("day", -2),
    "day before yesterday": relative_period("day", -2),
    **_this_and_last_en("week"),
    "this weekend": relative_period("weekend", 0),
    "last weekend": relative_period("weekend", -1),
    "this past weekend": latest_weekend,
    "the weekend": latest_weekend,
    **_this_and_last_en("month"),
    **_this_and_last_en("year"),
    "recently": recent,
    "lately": recent,
}
_FIXED_ZH: dict[str, Resolver] = {
    **dict.fromkeys(["今天", "今日", "今早", "今晨", "今晚"], relative_period("day", 0)),
    **dict.fromkeys(["昨天", "昨日", "昨晚", "昨夜"], relative_period("day", -1)),
    "前天": relative_period("day", -2),
    "大前天": relative_period("day", -3),
    **dict.fromkeys(
        ["本周", "这周", "这一周", "这个星期", "这星期", "本星期", "这礼拜", "这个礼拜", "这个周"],
        relative_period("week", 0),
    ),
    **dict.fromkeys(
        ["上周", "上一周", "上个星期", "上星期", "上礼拜", "上个礼拜", "上个周"], relative_period("week", -1)
    ),
    **dict.fromkeys(
        ["上上周", "上上个星期", "上上星期", "上上礼拜", "上上个礼拜"], relative_period("week", -2)
    ),
    "周末": latest_weekend,
    **dict.fromkeys(["上周末", "上个周末"], relative_period("weekend", -1)),
    **dict.fromkeys(["这周末", "本周末", "这个周末"], relative_period("weekend", 0)),
    **dict.fromkeys(["本月", "这个月", "这月"], relative_period("month", 0)),
    **dict.fromkeys(["上个月", "上月"], relative_period("month", -1)),
    "上上个月": relative_period("month", -2),
    "今年": relative_period("year", 0),
    "去年": relative_period("year", -1),
    "前年": relative_period("year", -2),
    **dict.fromkeys(["最近", "近期", "近来", "这几天", "这段时间"], recent),
}

_VAGUE = frozenset(p for p, resolve in {**_FIXED_EN, **_FIXED_ZH}.items() if resolve is recent)

# Fixed phrases that are no time when their neighbours say so: (text just before, text just after).
_NOT_A_TIME = {
    "前天": (r"[以之从提目眼面事先]$", None),  # 以前天天…, 之前天气…
    "前年": (r"[以之从提目眼面事先]$", None),
    "最近": (r"离[^，。？！,.?!\s]{0,10}$", r"的?一次"),  # 离我最近 = nearest; 最近一次 = the latest time
    "周末": (r"[下每]个?$", None),  # 下周末 is next weekend, 每周末 every weekend
}
_NOT_A_TIME_RE = {
    phrase: (re.compile(before) if before else None, re.compile(after) if after else None)
    for phrase, (before, after) in _NOT_A_TIME.items()
}


def _fixed(table: dict[str, Resolver]) -> Resolver:
    def resolve(m: re.Match[str], now: Clock) -> Span | None:
        phrase = normal(m.group())
        before, after = _NOT_A_TIME_RE.get(phrase, (None, None))
        if (before and before.search(m.string, 0, m.start())) or (after and after.match(m.string, m.end())):
            return None
        return table[phrase](m, now)

    return resolve


# --- patterns ------------------------------------------------------------------------------------

_WD_EN = _alternatives(WEEKDAYS_EN)
_MON_EN = _alternatives(MONTHS_EN)
_NUM_EN = rf"\d{{1,3}}|{_alternatives(NUMBERS_EN)}"
_YEAR = r"(?:19|20)\d{2}"
# "the second week of October" is in October
_NOT_PART_OF = rf"(?!\s+of\s+(?:{_MON_EN}|{_YEAR}|this|last|the)\b)"
_ZH_NUM = ZH_NUMERAL
_ZH_UNIT = r"天|周|个?星期|个?礼拜|个月|年"
_ZH_MONTH = r"1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九]"
_ZH_DAY = r"[0-3]?[0-9]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Resolver


def _rule(pattern: str, resolve: Resolver) -> _Rule:
    return _Rule(re.compile(pattern, re.I | re.X), resolve)


_RULES_EN = [
    _rule(rf"\b(?:{_alternatives(_FIXED_EN)})\b{_NOT_PART_OF}", _fixed(_FIXED_EN)),
    # 3 days ago, two weeks ago, a month ago
    _rule(rf"\b(?P<n>{_NUM_EN})\s+(?P<unit>day|week|month|year)s?\s+ago\b", ago),
    # in the last 3 days, over the past two weeks, the past month, last 24 hours, the past few days
    _rule(
        rf"""\b(?:(?:in|over|during|within)\s+)?(?:the\s+(?:last|past|previous)|past)
             \s+(?:(?P<n>{_NUM_EN}|a\s+few|few)\s+)?(?P<unit>hour|day|week|month|year)s?\b{_NOT_PART_OF}""",
        window,
    ),
    _rule(
        rf"\b(?:last|previous)\s+(?P<n>{_NUM_EN}|few)\s+(?P<unit>hour|day|week|month|year)s?\b{_NOT_PART_OF}",
        window,
    ),
    # on Friday, last Friday, this Monday, Friday last week; not next Friday, Good Friday, sunday best
    _rule(
        rf"""\b(?<!next\ )(?<!coming\ )(?<!good\ )(?<!girl\ )(?<!black\ )
             (?:(?P<q>last|this|on|past|previous)\s+)?(?P<wd>{_WD_EN})\b(?!\s+(?:best|school)\b)
             (?:\s+(?:of\s+)?(?P<wk>last|this)\s+week\b)?""",
        weekday_en,
    ),
    # March 3, March 3rd 2025, the 3rd of March
    _rule(
        rf"""\b(?<!next\ )(?P<mon>{_MON_EN})\.?\s+(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?\b(?![:.]\d)
             (?:,?\s+(?P<y>{_YEAR})\b)?""",
        date_en,
    ),
    _rule(
        rf"""\b(?:the\s+)?(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?\s+(?P<of>of\s+)?(?P<mon>{_MON_EN})\b
             (?:,?\s+(?P<y>{_YEAR})\b)?""",
        day_first_date_en,
    ),
    # in March, March 2025, last March, early May; not "may I", "they march", next March
    _rule(
        rf"""\b(?<!next\ )(?<!coming\ )(?:(?P<q>in|during|last|this|early|late|mid|of)[\s-]+)?
             (?P<mon>{_MON_EN})\b\.?(?:,?\s+(?:of\s+)?(?P<y>{_YEAR})\b)?""",
        month_en,
    ),
    _rule(rf"\b(?:in|during)\s+(?P<y>{_YEAR})\b(?![-/])", year_number),
    _rule(rf"\b(?P<y>{_YEAR})[-/](?P<m>[01]\d)(?:[-/](?P<d>[0-3]\d))?\b", iso_date),
]
_RULES_ZH = [
    _rule(_alternatives(_FIXED_ZH), _fixed(_FIXED_ZH)),
    # 三天前, 两周前, 一个月前
    _rule(rf"(?<![0-9零一二两三四五六七八九十])(?P<n>{_ZH_NUM})(?P<unit>{_ZH_UNIT})(?:以前|之前|前)", ago),
    # 最近三天, 过去一周, 近一周, 过去24小时, 最近几个月
    _rule(
        rf"(?:最近|过去|(?<![附接靠将亲])近)的?(?P<n>{_ZH_NUM}|几)(?P<unit>{_ZH_UNIT}|个?小时)",
        window,
    ),
    # 上周五, 这个星期一, 周五, 礼拜天; not 下周五, 每周五, 一周三次
    _rule(
        r"(?<![下每0-9零一二两三四五六七八九十])(?:(?P<wk>上上|上|这|本)个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])",
        weekday_zh,
    ),
    # 三月, 3月, 3月5日, 三月五号, 2025年3月, 去年三月
    _rule(
        rf"""(?<![0-9零一二两三四五六七八九十上下这本个每几])
             (?:(?P<y>{_YEAR})\s*年|(?P<ry>[去今前])年)?
             (?P<m>{_ZH_MONTH})月(?:份|(?P<d>{_ZH_DAY})\s*[日号])?""",
        month_zh,
    ),
    _rule(rf"(?<![0-9])(?P<y>{_YEAR})\s*年(?!以?前|以?后|之前|之后)", year_number),
]

# Every rule of a language needs one of its words; most queries have none and stop here.
_GATE_EN = re.compile(
    rf"""\b(?:to(?:day|night)|yesterday|night|morning|afternoon|evening|week|month|year|ago|recently|lately
       |hours?|days?|{_WD_EN}|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d{{4}}""",
    re.I | re.X,
)
_GATE_ZH = re.compile(r"[今昨周月年近]|前天|天前|几天|过去|星期|礼拜|小时|这段时间")

# "since last week", "上周以来": from the start of the period until now
_SINCE_BEFORE = re.compile(r"\bsince\s+$", re.I)
_UNTIL_NOW_AFTER = re.compile(r"\s*(?:以来|至今|到现在|到今天|(?:until|till)\s+now\b|to\s+date\b)", re.I)


def parse_time_filter(text: str, now: datetime, tz: tzinfo) -> TimeFilter | None:
    """The period named by the first time phrase of a query, as local times in `tz`; None without one."""
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    rules = [*(_RULES_EN if _GATE_EN.search(text) else ()), *(_RULES_ZH if _GATE_ZH.search(text) else ())]
    if not rules:
        return None
    clock = Clock(now.astimezone(tz), tz)
    found: list[tuple[re.Match[str], Span | None]] = []  # None: a time still to come
    for rule in rules:
        for match in rule.pattern.finditer(text):
            try:
                span = rule.resolve(match, clock)
            except (ValueError, OverflowError):  # a period past the calendar's end: nothing to filter
                continue
            if span is not None:
                found.append((match, span if span[0] <= clock.at else None))
    # First phrase wins, the longest of those starting together. A phrase about the future gives no
    # filter and hides the shorter phrases inside it ("本周三" asked on Monday is not "本周").
    hidden_until = 0
    for match, span in sorted(found, key=lambda item: (item[0].start(), -item[0].end())):
        if match.start() < hidden_until:
            continue
        if span is None:
            hidden_until = max(hidden_until, match.end())
            continue
        return _time_filter(match, span, clock)
    return None


def _time_filter(match: re.Match[str], span: Span, clock: Clock) -> TimeFilter:
    (start, end), text, first, last = span, match.string, match.start(), match.end()
    since = _SINCE_BEFORE.search(text, 0, first)
    until_now = _UNTIL_NOW_AFTER.match(text, last)
    if since or until_now:
        end = clock.at
        first = since.start() if since else first
        last = until_now.end() if until_now else last
    named = match.groupdict()
    yearless = bool(named.get("mon") or named.get("m")) and not (named.get("y") or named.get("ry"))
    yearless = yearless and normal(named.get("q") or "") != "this" and not since and not until_now
    return TimeFilter(
        start, end, text[first:last].strip(), vague=normal(match.group()) in _VAGUE, yearless=yearless
    )
