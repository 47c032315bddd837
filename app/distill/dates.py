"""Relative dates in a turn ("next Friday", "in 3 days", "明天", "下周五") resolved against the time
the turn was said. Phrases are found with small per-language patterns and resolved by dateparser;
the Chinese weekday forms dateparser does not know ("下周五") are computed here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache
from typing import Any

from app.text import (
    MONTH_NAMES_EN,
    WEEKDAYS_EN,
    WEEKDAYS_ZH,
    ZH_NUMERAL,
    ZH_RELATIVE_DAYS,
    ZH_WEEK_OFFSETS,
    zh_number,
)

_WEEKDAYS_EN = "|".join(WEEKDAYS_EN)
_MONTHS_EN = "|".join(m for m in MONTH_NAMES_EN if m != "may")  # "may" has its own place below
_NUM_EN = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few"
_UNIT_EN = r"days?|weeks?|months?|years?"

EN_PATTERN = re.compile(
    rf"""\b(?:
        the\ day\ after\ tomorrow|the\ day\ before\ yesterday|tomorrow|yesterday|today|tonight
      | (?:next|last|this|coming)\ (?:week|month|year|weekend|{_WEEKDAYS_EN})
      | (?:in|within)\ (?:{_NUM_EN})\ (?:{_UNIT_EN})
      | (?:{_NUM_EN})\ (?:{_UNIT_EN})\ ago
      | (?:{_WEEKDAYS_EN})
      | (?:{_MONTHS_EN}|may)\ \d{{1,2}}(?:st|nd|rd|th)?
      | (?<=in\ )(?:{_MONTHS_EN}|May)
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)

_ZH_NUM = rf"(?<![0-9零一二两三四五六七八九十]){ZH_NUMERAL}"  # from where a run starts: linear on long runs

ZH_PATTERN = re.compile(
    rf"""(?:
        (?P<day>大后天|大前天|今天|明天|后天|昨天|前天|今晚|明晚|今早|明早|昨晚)
      | (?P<wk>[上下这本])个?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])?
      | [上下这本]个?月 | [去今明]年
      | {_ZH_NUM}(?:天|周|个星期|个月|年)(?:前|后|以后|之后|以前|内|之内)
      | (?:周|星期|礼拜)(?P<bare>[一二三四五六日天])
      | (?P<m>\d{{1,2}})月(?P<d>\d{{1,2}})[日号]
    )""",
    re.VERBOSE,
)

# Past tense in the sentence: a bare "Friday" or "March" then means the last one, not the next.
# A participle after "be" is not past: "it needs to be signed by Monday".
_PAST_EN = re.compile(
    r"\b(?:was|were|went|did|had|met|saw|ago|last|yesterday|came|got|took|made|left|bought|sent|told|said|"
    r"gave|found|broke|fell|ran|paid|lost|drove|flew|wrote|spoke|ate|began|brought|thought|felt|kept|sold|"
    r"spent|won|quit|cut|shut|hurt|split|(?<!\b(?:be|is) )(?<!\bare )\w{2,}(?<!e)ed)\b",
    re.I,
)
# (过 of going over, 过来/过去/过年, and 了 of 为了/除了/了解 are no past)
_PAST_ZH = re.compile(r"(?<![为除])了(?!解)|(?<![不超经])过(?![去来年节生])|昨|前天|上(?:周|个|星期|礼拜)")
# A plan or a deadline in the date's own clause: the date is ahead ("should arrive Thursday" in a turn
# that also says "shipped"; "by November 28"; "周六要去")
# A change moves a value to a day ahead ("moved to Tuesday", "改到周五了"), whatever tense says it.
_FUTURE_EN = re.compile(
    r"\b(?:will|'ll|going to|plan(?:ning)?|by|before|until|due|should|next|upcoming|booked for|scheduled for|"
    r"arrives?|leaves?|starts?|departs?|(?:moved|pushed|changed|switched|shifted|rescheduled|postponed|"
    r"bumped|delayed|rebooked)\s+(?:\w+\s+){0,3}?(?:to|for|until))\b",
    re.I,
)
_FUTURE_ZH = re.compile(
    r"要|将|会|打算|计划|准备|之前|以前|截止|预计|安排|[改挪调换延推][到成在]|推迟|延后|改期|"
    # an appointment made for the day (约了周五, 订好了周六的票): the 了 is the booking's, the day ahead
    r"(?:约|预约|订|定)(?:好)?了"
)
# A time of day said after a day ("Friday mornings", "周二下午两点"): the date's note follows the whole
# phrase, which stays one value ("周二（…）下午两点" would cut it in two).
_TIME_AFTER_EN = re.compile(
    r"(?:\s+(?:morning|afternoon|evening|night)s?)?"
    r"(?:\s+(?:at\s+\d{1,2}(?::\d{2})?|\d{1,2}:\d{2}|\d{1,2}(?=\s?(?:[ap]m\b|[ap]\.m\.)))"
    r"(?:\s?(?:[ap]m\b|[ap]\.m\.))?(?![\d:]))?",
    re.I,
)
_TIME_AFTER_ZH = re.compile(
    r"(?:早上|上午|中午|下午|晚上|凌晨|傍晚)?(?:[零一二两三四五六七八九十\d]{1,3}点(?:半|[零一二三四五六七八九十\d]{1,3}分?)?)?"
)
_CLAUSE_EDGE = re.compile(r"[,;，；。!?！？]|\s(?:and|but)\s")


def _around(text: str, start: int, end: int) -> str:
    """The clause a date phrase sits in: from the separator before it to the one after."""
    before = [m.end() for m in _CLAUSE_EDGE.finditer(text, 0, start)]
    after = _CLAUSE_EDGE.search(text, end)
    return text[before[-1] if before else 0 : after.start() if after else len(text)]


# A month and day a few days gone is still this year's in a plan ("考试在12月1号" said on 12-03 is late
# news, not next year's exam); further back it is next year's.
_MONTH_DAY_GRACE = 7


@dataclass(frozen=True)
class ResolvedDate:
    phrase: str
    start: int
    end: int
    value: date
    text: str  # how the resolved date is written: 2026-12-04, the week of 2026-12-07, 2026-12, 2027


@cache
def _parser(language: str, prefer: str) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=[language],
        settings={"PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False},
    )


def _format(value: datetime, period: str, language: str = "en") -> tuple[date, str]:
    """The date and how a unit writes it, in the phrase's language (no English inside a Chinese unit)."""
    day = value.date()
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        week = f"{monday.isoformat()}那一周" if language == "zh" else f"the week of {monday.isoformat()}"
        return monday, week
    if period == "month":
        return day.replace(day=1), f"{day:%Y-%m}"
    if period == "year":
        return day.replace(month=1, day=1), f"{day:%Y}"
    return day, day.isoformat()


def _zh_weekday(anchor: date, week_offset: int, weekday: int) -> date:
    monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=week_offset)
    return monday + timedelta(days=weekday)


def _resolve_zh(match: re.Match[str], anchor: datetime, prefer: str) -> tuple[date, str] | None:
    if match.group("day"):
        day = anchor.date() + timedelta(days=ZH_RELATIVE_DAYS[match.group("day")])
        return day, day.isoformat()
    if match.group("wk") and match.group("wd"):
        day = _zh_weekday(anchor.date(), ZH_WEEK_OFFSETS[match.group("wk")], WEEKDAYS_ZH[match.group("wd")])
        return day, day.isoformat()
    if match.group("bare"):
        day = _zh_weekday(anchor.date(), 0, WEEKDAYS_ZH[match.group("bare")])
        if prefer == "future" and day < anchor.date():
            day += timedelta(weeks=1)
        elif prefer == "past" and day > anchor.date():
            day -= timedelta(weeks=1)
        return day, day.isoformat()
    if match.group("m"):
        try:
            day = date(anchor.year, int(match.group("m")), int(match.group("d")))
            if prefer == "future" and day < anchor.date() - timedelta(days=_MONTH_DAY_GRACE):
                day = day.replace(year=day.year + 1)  # "11月3号" said in December: next year's
        except ValueError:
            return None
        return day, day.isoformat()
    phrase = re.sub(_ZH_NUM, lambda m: str(zh_number(m.group())), match.group())
    phrase = re.sub(r"之?内$", "后", phrase)  # 三天内: by three days from now
    return _parse(phrase, "zh", anchor, prefer)


def _parse(phrase: str, language: str, anchor: datetime, prefer: str) -> tuple[date, str] | None:
    parser = _parser(language, prefer)
    parser._settings.RELATIVE_BASE = anchor.replace(tzinfo=None)
    data = parser.get_date_data(phrase)
    if data.date_obj is None:
        return None
    return _format(data.date_obj, data.period or "day", language)


# what makes a day a recurrence, before its phrase (English) or opening it (Chinese)
_RECURRING = re.compile(r"\b(?:every|each)(?:\s+(?:other|second|third|single))?\s+$|每(?:个|逢)?$", re.I)


_YEAR_AFTER = re.compile(r",?\s+(?:19|20)\d{2}\b")
# A day naming a thing it recurs on ("the Saturday job", "my Tuesday class", 周六那个兼职, 周二的课): a
# label, no date
_LABEL_BEFORE_EN = re.compile(r"\b(?:the|my|our|his|her|their|your)\s+$", re.I)
_LABEL_AFTER_EN = re.compile(r"\s+(?!(?:after|before|of|morning|afternoon|evening|night)\b)[a-z][\w-]*")
_LABEL_AFTER_ZH = re.compile(r"(?:那个|那份|那节|那场|这个|的)(?=[\u4e00-\u9fff])")


def _label(text: str, match: re.Match[str], zh: bool) -> bool:
    if zh:
        return bool(match.groupdict().get("bare")) and _LABEL_AFTER_ZH.match(text, match.end()) is not None
    day = match.group().lower() in WEEKDAYS_EN
    before = text[max(0, match.start() - 8) : match.start()]
    return (
        day
        and _LABEL_BEFORE_EN.search(before) is not None
        and _LABEL_AFTER_EN.match(text, match.end()) is not None
    )


def find_dates(text: str, anchor: datetime, plan: bool = False) -> list[ResolvedDate]:
    """Relative date phrases in `text` with the dates they mean when said at `anchor` (local time). A
    bare "Friday" or "3月5号" is the next one in a plan or a deadline (`plan`, or a future word in its
    clause), the last one in a clause in the past tense."""
    found: list[ResolvedDate] = []
    for pattern, language, past, future in (
        (EN_PATTERN, "en", _PAST_EN, _FUTURE_EN),
        (ZH_PATTERN, "zh", _PAST_ZH, _FUTURE_ZH),
    ):
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 16) : match.start()]
            if _RECURRING.search(before) or match.group().startswith("每"):
                continue  # "every Thursday", "每周四": a recurrence is no date
            if _YEAR_AFTER.match(text, match.end()):
                continue  # "in June 2028", "March 3, 2027": its year said, the date needs no reading
            if _label(text, match, language == "zh"):
                continue
            clause = _around(text, match.start(), match.end())
            if future.search(clause):
                prefer = "future"
            elif past.search(clause):
                prefer = "past"
            else:
                prefer = "future" if plan or not past.search(text) else "past"
            resolved = (
                _resolve_zh(match, anchor, prefer)
                if language == "zh"
                else _parse(re.sub(r"^within\b", "in", match.group(), flags=re.I), language, anchor, prefer)
            )
            if resolved is not None:
                found.append(ResolvedDate(match.group(), match.start(), match.end(), *resolved))
    return found


def resolve_dates(text: str, anchor: datetime, plan: bool = False) -> tuple[str, list[ResolvedDate]]:
    """`text` with each relative date followed by the date it means: "by Monday (2026-11-16)". `plan`:
    the text is a step to do or a limit (see `find_dates`)."""
    found = find_dates(text, anchor, plan)
    out, last = [], 0
    for item in sorted(found, key=lambda r: r.start):
        if item.start < last or item.text == item.phrase:
            continue
        zh = re.match(ZH_PATTERN, item.phrase) is not None
        note = f"（{item.text}）" if zh else f" ({item.text})"
        after = (_TIME_AFTER_ZH if zh else _TIME_AFTER_EN).match(text, item.end)
        end = after.end() if after else item.end
        out += [text[last:end], note]
        last = end
    out.append(text[last:])
    return "".join(out), found
