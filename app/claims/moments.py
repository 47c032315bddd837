"""The comparable keys of a moment: a date's month and day, a time of day's minutes, the days of the week
a weekday value names."""

from __future__ import annotations

import re

from app.text import MONTHS_EN, WEEKDAYS_EN, WEEKDAYS_ZH, zh_number

_ZH_NUM = r"[0-9零一二两三四五六七八九十百千]+"


def date_key(low: str) -> str:
    """A date's month and day ("5-19"; 0 for what it leaves unsaid)."""
    month = next((m for name, m in MONTHS_EN.items() if re.search(rf"\b{name}\b", low)), 0)
    zh = re.match(rf"(?:({_ZH_NUM})月)?(?:初?({_ZH_NUM})[号日]?)?", low)
    if zh and (zh.group(1) or zh.group(2)):
        month = zh_number(zh.group(1)) if zh.group(1) else 0
        day = zh_number(zh.group(2)) if zh.group(2) else 0
        return f"{month}-{day}"
    digits = re.search(r"\d{1,2}", low)
    return f"{month}-{int(digits.group(0)) if digits else 0}"


def minutes(low: str) -> float | None:
    """A time of day in minutes after midnight (pm and 下午 after noon); None when it says no hour."""
    colon = re.search(r"(\d{1,2}):(\d{2})", low)
    if colon:
        hour, minute = int(colon.group(1)), int(colon.group(2))
    else:
        zh = re.search(rf"({_ZH_NUM})点(半|({_ZH_NUM})分?)?", low)
        en = re.search(r"(\d{1,2})\s?[ap]", low)
        if zh:
            hour = zh_number(zh.group(1))
            minute = 30 if zh.group(2) == "半" else (zh_number(zh.group(3)) if zh.group(3) else 0)
        elif en:
            hour, minute = int(en.group(1)), 0
        else:
            return None
    if ("pm" in low.replace(".", "") or low.startswith(("下午", "晚上", "傍晚"))) and hour < 12:
        hour += 12
    return float(hour * 60 + minute)


def weekdays(low: str) -> list[int]:
    """The days of the week a weekday value names, in order (Monday 0)."""
    if low[:1].isascii():
        names = re.findall(r"[a-z]+", low)
        return [i for word in names for name, i in WEEKDAYS_EN.items() if word.startswith(name)]
    return [WEEKDAYS_ZH[ch] for ch in re.findall(r"(?<=[周期拜和、跟及])\s*([一二三四五六日天])", low)] or [
        WEEKDAYS_ZH[low[-1]]
    ]
