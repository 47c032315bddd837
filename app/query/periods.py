"""What a time phrase of a query means: calendar periods (the day, week, weekend, month or year around a
date, computed in the query's time zone by calendar arithmetic) and the resolvers that turn a matched
phrase into one. The phrases themselves are matched in `timeparse`."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from app.text import (
    MONTHS_EN,
    NUMBERS_EN,
    WEEKDAYS_EN,
    WEEKDAYS_ZH,
    ZH_WEEK_OFFSETS,
    ZH_YEAR_OFFSETS,
    zh_number,
)

Span = tuple[datetime, datetime]

RECENT = timedelta(days=7)  # "recently", "lately", 最近
FEW = 3  # "the past few days", 过去几天


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
class Clock:
    """Now, as the query's time zone sees it: the clock every phrase is resolved against."""

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


Resolver = Callable[[re.Match[str], Clock], Span | None]


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


def normal(text: str) -> str:
    return " ".join(text.lower().split())


def _number(text: str) -> int:
    text = normal(text)
    return NUMBERS_EN.get(text) or _FEW.get(text) or zh_number(text)


def _unit(text: str) -> str:
    return _UNITS[text.lower().removeprefix("个").removesuffix("s")]


def _year(text: str | None) -> int | None:
    return int(text) if text else None


# --- resolvers -----------------------------------------------------------------------------------


def relative_period(unit: str, shift: int) -> Resolver:
    """The period `shift` units from the current one: ("week", -1) is last week."""
    step = "week" if unit == "weekend" else unit
    return lambda _m, now: now.period(unit, _shift(now.today, step, shift))


def latest_weekend(_m: re.Match[str], now: Clock) -> Span:
    return now.period("weekend", _shift(now.today, "week", 0 if now.today.weekday() >= 5 else -1))


def recent(_m: re.Match[str], now: Clock) -> Span:
    return now.at - RECENT, now.at


def ago(m: re.Match[str], now: Clock) -> Span | None:
    n, unit = _number(m["n"]), _unit(m["unit"])
    return now.period(unit, _shift(now.today, unit, -n)) if 1 <= n <= 99 else None


def window(m: re.Match[str], now: Clock) -> Span | None:
    n, unit = _number(m["n"]) if m["n"] else 1, _unit(m["unit"])
    return (now.back(unit, n), now.at) if 1 <= n <= 999 else None


def weekday_en(m: re.Match[str], now: Clock) -> Span:
    if m["wk"]:  # Friday last week, Monday this week
        week: int | None = -1 if m["wk"].lower() == "last" else 0
    else:  # this Friday; on/last Friday is the latest before today
        week = 0 if (m["q"] or "").lower() == "this" else None
    return now.period("day", now.weekday(WEEKDAYS_EN[m["wd"].lower()], week))


def weekday_zh(m: re.Match[str], now: Clock) -> Span:
    week = ZH_WEEK_OFFSETS[m["wk"]] if m["wk"] else None
    return now.period("day", now.weekday(WEEKDAYS_ZH[m["wd"]], week))


_MONTH_CONTEXT_BEFORE = re.compile(r"\b(?:since|from|until)\s+$", re.I)


def month_en(m: re.Match[str], now: Clock) -> Span | None:
    name, qualifier, year = m["mon"].lower(), normal(m["q"] or ""), _year(m["y"])
    if not (
        name in _BARE_MONTHS or qualifier or year or _MONTH_CONTEXT_BEFORE.search(m.string, 0, m.start())
    ):
        return None  # "may I ask", "they march"
    if qualifier == "this" and year is None:
        year = now.today.year
    return now.in_month(MONTHS_EN[name], year, before_this_month=qualifier == "last")


def date_en(m: re.Match[str], now: Clock) -> Span | None:
    return now.on_date(MONTHS_EN[m["mon"].lower()], int(m["d"]), _year(m["y"]))


def day_first_date_en(m: re.Match[str], now: Clock) -> Span | None:
    if m["mon"].lower() not in _BARE_MONTHS and not (m["sfx"] or m["of"] or m["y"]):
        return None  # "rooms 4 and 6 may be free"
    return date_en(m, now)


def iso_date(m: re.Match[str], now: Clock) -> Span | None:
    month = int(m["m"])
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        return now.on_date(month, int(m["d"]), int(m["y"]))
    return now.in_month(month, int(m["y"]))


def year_number(m: re.Match[str], now: Clock) -> Span:
    return now.period("year", date(int(m["y"]), 1, 1))


def month_zh(m: re.Match[str], now: Clock) -> Span | None:
    year = _year(m["y"]) or (now.today.year + ZH_YEAR_OFFSETS[m["ry"]] if m["ry"] else None)
    month = zh_number(m["m"])
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        return now.on_date(month, zh_number(m["d"]), year)
    return now.in_month(month, year)
