"""The time filter in a memory query: "what did I do last week" keeps only units from last week.

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
  included. "last March" is the latest March before the current month.
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

import calendar
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from app.text import (
    MONTHS_EN,
    NUMBERS_EN,
    WEEKDAYS_EN,
    WEEKDAYS_ZH,
    ZH_NUMERAL,
    ZH_WEEK_OFFSETS,
    ZH_YEAR_OFFSETS,
    zh_number,
)

Span = tuple[datetime, datetime]

RECENT = timedelta(days=7)  # "recently", "lately", 最近
FEW = 3  # "the past few days", 过去几天


@dataclass(frozen=True)
class TimeFilter:
    start: datetime  # aware, in the query's time zone, inclusive
    end: datetime  # aware, in the query's time zone, exclusive
    phrase: str  # the text that produced it: "last week", "上周"
    vague: bool = False  # "recently", 最近: a week as a guess, not a period the query names


# --- calendar ------------------------------------------------------------------------------------


# Arithmetic saturates at the ends of the calendar Python can hold, a day inside them so that any time
# zone's offset still fits: "the past 999 years" asked in the year 1000 starts at the calendar's start.
_FIRST_DAY, _LAST_DAY = date.min + timedelta(days=1), date.max - timedelta(days=1)
_FIRST_MONTH, _LAST_MONTH = _FIRST_DAY.year * 12, _LAST_DAY.year * 12 + 11


def _saturate(ordinal: int) -> date:
    return date.fromordinal(min(max(ordinal, _FIRST_DAY.toordinal()), _LAST_DAY.toordinal()))


def _month_start(day: date, months: int = 0) -> date:
    index = min(max(day.year * 12 + day.month - 1 + months, _FIRST_MONTH), _LAST_MONTH)
    return date(index // 12, index % 12 + 1, 1)


def _shift(day: date, unit: str, n: int) -> date:
    """`day` moved by `n` units; a month or year move keeps the day of month where it exists."""
    if unit in ("day", "week"):
        return _saturate(day.toordinal() + n * (7 if unit == "week" else 1))
    first = _month_start(day, n * 12 if unit == "year" else n)
    shifted = first.replace(day=min(day.day, calendar.monthrange(first.year, first.month)[1]))
    return _saturate(shifted.toordinal())


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


# the first day of the period containing a day, and the first day after it
_PERIODS: dict[str, Callable[[date], tuple[date, date]]] = {
    "day": lambda d: (d, d + timedelta(days=1)),
    "week": lambda d: (_monday(d), _monday(d) + timedelta(weeks=1)),
    "weekend": lambda d: (_monday(d) + timedelta(days=5), _monday(d) + timedelta(weeks=1)),
    "month": lambda d: (d.replace(day=1), _month_start(d, 1)),
    "year": lambda d: (date(d.year, 1, 1), date(d.year + 1, 1, 1)),
}


@dataclass(frozen=True)
class _Now:
    at: datetime  # now, in the query's time zone
    tz: tzinfo

    @property
    def today(self) -> date:
        return self.at.date()

    def period(self, unit: str, day: date) -> Span:
        first, after = _PERIODS[unit](day)
        return datetime.combine(first, time(), self.tz), datetime.combine(after, time(), self.tz)

    def back(self, unit: str, n: int) -> datetime:
        if unit == "hour":
            return (self.at.astimezone(UTC) - timedelta(hours=n)).astimezone(self.tz)
        return datetime.combine(_shift(self.today, unit, -n), self.at.timetz())

    def weekday(self, weekday: int, week: int | None) -> date:
        """That weekday of the week `week` weeks from this one; with no week, the latest before today."""
        if week is None:
            return self.today - timedelta(days=(self.today.weekday() - weekday - 1) % 7 + 1)
        return _monday(self.today) + timedelta(weeks=week, days=weekday)

    def in_month(self, month: int, year: int | None, before_this_month: bool = False) -> Span:
        """A month; with no year, the latest one (this month included unless `before_this_month`)."""
        if year is None:
            year = self.today.year
            if month > self.today.month or (before_this_month and month == self.today.month):
                year -= 1
        return self.period("month", date(year, month, 1))

    def on_date(self, month: int, day: int, year: int | None) -> Span | None:
        """A date; with no year, the latest one, today included."""
        try:
            value = date(year or self.today.year, month, day)
            if year is None and value > self.today:
                value = value.replace(year=value.year - 1)
        except ValueError:
            return None
        return self.period("day", value)


Resolver = Callable[[re.Match[str], _Now], Span | None]


# --- words ---------------------------------------------------------------------------------------

# month names that are not also a common word or name ("may", "march", "June"): these alone are a month
_BARE_MONTHS = {"january", "february", "july", "september", "october", "november", "december"}
_FEW = {"few": FEW, "a few": FEW, "几": FEW}
_UNITS = {
    "hour": "hour",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
    "小时": "hour",
    "天": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "月": "month",
    "年": "year",
}


def _alternatives(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first, so that "last weekend" is tried before "last week"."""
    return "|".join(sorted(words, key=len, reverse=True)).replace(" ", r"\s+")


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _number(text: str) -> int:
    text = _normal(text)
    return NUMBERS_EN.get(text) or _FEW.get(text) or zh_number(text)


def _unit(text: str) -> str:
    return _UNITS[text.lower().removeprefix("个").removesuffix("s")]


def _year(text: str | None) -> int | None:
    return int(text) if text else None


# --- resolvers -----------------------------------------------------------------------------------


def _calendar(unit: str, shift: int) -> Resolver:
    """The period `shift` units from the current one: ("week", -1) is last week."""
    step = "week" if unit == "weekend" else unit
    return lambda _m, now: now.period(unit, _shift(now.today, step, shift))


def _latest_weekend(_m: re.Match[str], now: _Now) -> Span:
    return now.period("weekend", _shift(now.today, "week", 0 if now.today.weekday() >= 5 else -1))


def _recent(_m: re.Match[str], now: _Now) -> Span:
    return now.at - RECENT, now.at


def _ago(m: re.Match[str], now: _Now) -> Span | None:
    n, unit = _number(m["n"]), _unit(m["unit"])
    return now.period(unit, _shift(now.today, unit, -n)) if 1 <= n <= 99 else None


def _window(m: re.Match[str], now: _Now) -> Span | None:
    n, unit = _number(m["n"]) if m["n"] else 1, _unit(m["unit"])
    return (now.back(unit, n), now.at) if 1 <= n <= 999 else None


def _weekday_en(m: re.Match[str], now: _Now) -> Span:
    if m["wk"]:  # Friday last week, Monday this week
        week: int | None = -1 if m["wk"].lower() == "last" else 0
    else:  # this Friday; on/last Friday is the latest before today
        week = 0 if (m["q"] or "").lower() == "this" else None
    return now.period("day", now.weekday(WEEKDAYS_EN[m["wd"].lower()], week))


def _weekday_zh(m: re.Match[str], now: _Now) -> Span:
    week = ZH_WEEK_OFFSETS[m["wk"]] if m["wk"] else None
    return now.period("day", now.weekday(WEEKDAYS_ZH[m["wd"]], week))


_MONTH_CONTEXT_BEFORE = re.compile(r"\b(?:since|from|until)\s+$", re.I)


def _month_en(m: re.Match[str], now: _Now) -> Span | None:
    name, qualifier, year = m["mon"].lower(), _normal(m["q"] or ""), _year(m["y"])
    if not (
        name in _BARE_MONTHS or qualifier or year or _MONTH_CONTEXT_BEFORE.search(m.string, 0, m.start())
    ):
        return None  # "may I ask", "they march"
    if qualifier == "this" and year is None:
        year = now.today.year
    return now.in_month(MONTHS_EN[name], year, before_this_month=qualifier == "last")


def _date_en(m: re.Match[str], now: _Now) -> Span | None:
    return now.on_date(MONTHS_EN[m["mon"].lower()], int(m["d"]), _year(m["y"]))


def _day_first_date_en(m: re.Match[str], now: _Now) -> Span | None:
    if m["mon"].lower() not in _BARE_MONTHS and not (m["sfx"] or m["of"] or m["y"]):
        return None  # "options 2 and 3 may work"
    return _date_en(m, now)


def _iso(m: re.Match[str], now: _Now) -> Span | None:
    month = int(m["m"])
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        return now.on_date(month, int(m["d"]), int(m["y"]))
    return now.in_month(month, int(m["y"]))


def _year_number(m: re.Match[str], now: _Now) -> Span:
    return now.period("year", date(int(m["y"]), 1, 1))


def _month_zh(m: re.Match[str], now: _Now) -> Span | None:
    year = _year(m["y"]) or (now.today.year + ZH_YEAR_OFFSETS[m["ry"]] if m["ry"] else None)
    month = zh_number(m["m"])
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        return now.on_date(month, zh_number(m["d"]), year)
    return now.in_month(month, year)


# Fixed phrases. Within a table, the longest phrase that fits wins.
_FIXED_EN: dict[str, Resolver] = {
    "today": _calendar("day", 0),
    "tonight": _calendar("day", 0),
    "this morning": _calendar("day", 0),
    "this afternoon": _calendar("day", 0),
    "this evening": _calendar("day", 0),
    "yesterday": _calendar("day", -1),
    "last night": _calendar("day", -1),
    "the day before yesterday": _calendar("day", -2),
    "day before yesterday": _calendar("day", -2),
    "this week": _calendar("week", 0),
    "last week": _calendar("week", -1),
    "previous week": _calendar("week", -1),
    "the week before last": _calendar("week", -2),
    "this weekend": _calendar("weekend", 0),
    "last weekend": _calendar("weekend", -1),
    "this past weekend": _latest_weekend,
    "the weekend": _latest_weekend,
    "this month": _calendar("month", 0),
    "last month": _calendar("month", -1),
    "previous month": _calendar("month", -1),
    "the month before last": _calendar("month", -2),
    "this year": _calendar("year", 0),
    "last year": _calendar("year", -1),
    "previous year": _calendar("year", -1),
    "the year before last": _calendar("year", -2),
    "recently": _recent,
    "lately": _recent,
}
_FIXED_ZH: dict[str, Resolver] = {
    **dict.fromkeys(["今天", "今日", "今早", "今晨", "今晚"], _calendar("day", 0)),
    **dict.fromkeys(["昨天", "昨日", "昨晚", "昨夜"], _calendar("day", -1)),
    "前天": _calendar("day", -2),
    "大前天": _calendar("day", -3),
    **dict.fromkeys(
        ["本周", "这周", "这一周", "这个星期", "这星期", "本星期", "这礼拜", "这个礼拜", "这个周"],
        _calendar("week", 0),
    ),
    **dict.fromkeys(
        ["上周", "上一周", "上个星期", "上星期", "上礼拜", "上个礼拜", "上个周"], _calendar("week", -1)
    ),
    **dict.fromkeys(["上上周", "上上个星期", "上上星期", "上上礼拜", "上上个礼拜"], _calendar("week", -2)),
    "周末": _latest_weekend,
    **dict.fromkeys(["上周末", "上个周末"], _calendar("weekend", -1)),
    **dict.fromkeys(["这周末", "本周末", "这个周末"], _calendar("weekend", 0)),
    **dict.fromkeys(["本月", "这个月", "这月"], _calendar("month", 0)),
    **dict.fromkeys(["上个月", "上月"], _calendar("month", -1)),
    "上上个月": _calendar("month", -2),
    "今年": _calendar("year", 0),
    "去年": _calendar("year", -1),
    "前年": _calendar("year", -2),
    **dict.fromkeys(["最近", "近期", "近来", "这几天", "这段时间"], _recent),
}

_VAGUE = frozenset(p for p, resolve in {**_FIXED_EN, **_FIXED_ZH}.items() if resolve is _recent)

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
    def resolve(m: re.Match[str], now: _Now) -> Span | None:
        phrase = _normal(m.group())
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
# "the last week of March" is in March
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
    _rule(rf"\b(?P<n>{_NUM_EN})\s+(?P<unit>day|week|month|year)s?\s+ago\b", _ago),
    # in the last 3 days, over the past two weeks, the past month, last 24 hours, the past few days
    _rule(
        rf"""\b(?:(?:in|over|during|within)\s+)?(?:the\s+(?:last|past|previous)|past)
             \s+(?:(?P<n>{_NUM_EN}|a\s+few|few)\s+)?(?P<unit>hour|day|week|month|year)s?\b{_NOT_PART_OF}""",
        _window,
    ),
    _rule(
        rf"\b(?:last|previous)\s+(?P<n>{_NUM_EN}|few)\s+(?P<unit>hour|day|week|month|year)s?\b{_NOT_PART_OF}",
        _window,
    ),
    # on Friday, last Friday, this Monday, Friday last week; not next Friday, Good Friday, sunday best
    _rule(
        rf"""\b(?<!next\ )(?<!coming\ )(?<!good\ )(?<!girl\ )(?<!black\ )
             (?:(?P<q>last|this|on|past|previous)\s+)?(?P<wd>{_WD_EN})\b(?!\s+(?:best|school)\b)
             (?:\s+(?:of\s+)?(?P<wk>last|this)\s+week\b)?""",
        _weekday_en,
    ),
    # March 3, March 3rd 2025, the 3rd of March
    _rule(
        rf"""\b(?<!next\ )(?P<mon>{_MON_EN})\.?\s+(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?\b(?![:.]\d)
             (?:,?\s+(?P<y>{_YEAR})\b)?""",
        _date_en,
    ),
    _rule(
        rf"""\b(?:the\s+)?(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?\s+(?P<of>of\s+)?(?P<mon>{_MON_EN})\b
             (?:,?\s+(?P<y>{_YEAR})\b)?""",
        _day_first_date_en,
    ),
    # in March, March 2025, last March, early May; not "may I", "they march", next March
    _rule(
        rf"""\b(?<!next\ )(?<!coming\ )(?:(?P<q>in|during|last|this|early|late|mid|of)[\s-]+)?
             (?P<mon>{_MON_EN})\b\.?(?:,?\s+(?:of\s+)?(?P<y>{_YEAR})\b)?""",
        _month_en,
    ),
    _rule(rf"\b(?:in|during)\s+(?P<y>{_YEAR})\b(?![-/])", _year_number),
    _rule(rf"\b(?P<y>{_YEAR})[-/](?P<m>[01]\d)(?:[-/](?P<d>[0-3]\d))?\b", _iso),
]
_RULES_ZH = [
    _rule(_alternatives(_FIXED_ZH), _fixed(_FIXED_ZH)),
    # 三天前, 两周前, 一个月前
    _rule(rf"(?<![0-9零一二两三四五六七八九十])(?P<n>{_ZH_NUM})(?P<unit>{_ZH_UNIT})(?:以前|之前|前)", _ago),
    # 最近三天, 过去一周, 近一周, 过去24小时, 最近几个月
    _rule(
        rf"(?:最近|过去|(?<![附接靠将亲])近)的?(?P<n>{_ZH_NUM}|几)(?P<unit>{_ZH_UNIT}|个?小时)",
        _window,
    ),
    # 上周五, 这个星期一, 周五, 礼拜天; not 下周五, 每周五, 一周三次
    _rule(
        r"(?<![下每0-9零一二两三四五六七八九十])(?:(?P<wk>上上|上|这|本)个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])",
        _weekday_zh,
    ),
    # 三月, 3月, 3月5日, 三月五号, 2025年3月, 去年三月
    _rule(
        rf"""(?<![0-9零一二两三四五六七八九十上下这本个每几])
             (?:(?P<y>{_YEAR})\s*年|(?P<ry>[去今前])年)?
             (?P<m>{_ZH_MONTH})月(?:份|(?P<d>{_ZH_DAY})\s*[日号])?""",
        _month_zh,
    ),
    _rule(rf"(?<![0-9])(?P<y>{_YEAR})\s*年(?!以?前|以?后|之前|之后)", _year_number),
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
    clock = _Now(now.astimezone(tz), tz)
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


def _time_filter(match: re.Match[str], span: Span, clock: _Now) -> TimeFilter:
    (start, end), text, first, last = span, match.string, match.start(), match.end()
    since = _SINCE_BEFORE.search(text, 0, first)
    until_now = _UNTIL_NOW_AFTER.match(text, last)
    if since or until_now:
        end = clock.at
        first = since.start() if since else first
        last = until_now.end() if until_now else last
    return TimeFilter(start, end, text[first:last].strip(), vague=_normal(match.group()) in _VAGUE)
