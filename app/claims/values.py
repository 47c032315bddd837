"""Typed values found in a clause: money, quantities with units, dates, weekdays, times of day, versions,
bare numbers, so that "55ms" and "250ms", Tuesday and Wednesday, 5000 and 8000元 compare as values."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from app.claims.counts import counted, units_agree
from app.claims.lexicon import AFTER_A_DAY_EN
from app.claims.model import Value
from app.claims.moments import date_key, minutes, weekdays
from app.text import MONTHS_EN, WEEKDAYS_EN, zh_number

# English number words ("two approvals", "three weeks"): "one" is left out, it is mostly a pronoun
NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    )
    if w != "_"
} | {"twenty": 20.0, "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "ninety": 90.0}
_NUM = r"(?:\d+(?:[.,]\d+)*|(?-i:\b(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")\b))"
_NUMERALS = "零一二两三四五六七八九十百千"
_ZH_NUM = rf"[0-9{_NUMERALS}]+"
# ...opening with a numeral, never mid-number nor with 千 or 百 (千万 is "don't", 几千 says no number)
_ZH_LEAD_NUM = rf"(?<![0-9{_NUMERALS}万几])[0-9零一二两三四五六七八九十]" + _ZH_NUM.replace("+", "*")
# currency word -> ISO-ish code; a value without one compares with any currency
_CURRENCY = {
    "$": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "usd": "USD",
    "bucks": "USD",
    "美元": "USD",
    "€": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "eur": "EUR",
    "欧元": "EUR",
    "£": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "gbp": "GBP",
    "quid": "GBP",
    "英镑": "GBP",
    "¥": "CNY",
    "元": "CNY",
    "块": "CNY",
    "块钱": "CNY",
    "rmb": "CNY",
    "yuan": "CNY",
    "cny": "CNY",
}
CLASSIFIERS_ZH = "台辆张间晚夜位名人件本份套条只家双盒箱袋支节门顿趟"
# unit word -> (dimension, factor to the dimension's base unit); the words of time first, in seconds
_TIME_UNITS = (
    ("ms millisecond milliseconds 毫秒", 0.001),
    ("s sec secs second seconds 秒", 1),
    ("min mins minute minutes 分钟", 60),
    ("h hr hrs hour hours 小时 个小时", 3600),
    ("day days 天", 86400),
    ("week weeks 个星期", 604800),
    ("month months 个月", 2592000),
    ("year years", 31536000),
)
_UNITS = {
    **{w: ("time", factor) for words, factor in _TIME_UNITS for w in words.split()},
    "kg": ("mass", 1000),
    "kilo": ("mass", 1000),
    "kilos": ("mass", 1000),
    "公斤": ("mass", 1000),
    "斤": ("mass", 500),
    "grams": ("mass", 1),
    "克": ("mass", 1),
    "mg": ("mass", 0.001),
    "毫克": ("mass", 0.001),
    "mcg": ("mass", 1e-6),
    "µg": ("mass", 1e-6),
    "微克": ("mass", 1e-6),
    "ml": ("volume", 1),
    "毫升": ("volume", 1),
    "lb": ("mass", 453.6),
    "lbs": ("mass", 453.6),
    "gb": ("data", 1),
    "g": ("data", 1),
    "tb": ("data", 1024),
    "mb": ("data", 1 / 1024),
    "%": ("percent", 1),
    "percent": ("percent", 1),
    "per cent": ("percent", 1),
    "times": ("count", 1),
    "次": ("count", 1),
    "杯": ("count", 1),
    "瓶": ("count", 1),
    "颗": ("count", 1),
    "粒": ("count", 1),
    "周": ("time", 604800),
    "个": ("count", 1),
    "片": ("count", 1),
    # Chinese classifiers (a closed class): a numeral before one counts things ("住三晚", "两台电脑")
    **{c: (f"count:{c}", 1) for c in CLASSIFIERS_ZH},
    "km": ("length", 1000),
    "公里": ("length", 1000),
    "miles": ("length", 1609),
    "m": ("length", 1),
    "米": ("length", 1),
    "cm": ("length", 0.01),
    "厘米": ("length", 0.01),
}
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_CUR_ALT = "|".join(
    sorted((re.escape(c) for c in _CURRENCY if c.isalpha() or len(c) > 1), key=len, reverse=True)
)
_MONTH_ALT = "|".join(sorted(MONTHS_EN, key=len, reverse=True))
_WEEKDAY_ALT = "|".join(WEEKDAYS_EN)
_DAY_JOIN = r"(?:\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+)"  # between the days of one set
_MONTHS_CAPITALISED = "|".join(
    sorted((m.capitalize() for m in MONTHS_EN if len(m) > 3), key=len, reverse=True)
)
_MULT = {
    "k": 1e3,
    "K": 1e3,
    "千": 1e3,
    "万": 1e4,
    "w": 1e4,
    "W": 1e4,
    "百": 100,
    "亿": 1e8,
    "thousand": 1e3,
    "million": 1e6,
    "m": 1e6,
}

_STREET = (
    r"(?:Road|Rd|Street|St|Lane|Ln|Avenue|Ave|Drive|Close|Court|Ct|Place|Pl|Boulevard|Blvd|Crescent|"
    r"Terrace|Square|Sq|Gardens|Grove|Row|Walk|Way|Parkway|Highway|Hwy)"
)
# One alternation, most specific first; each pattern names its kind.
# an ordinal before a lower-case word but these counts a noun ("the 7th floor"), not a day of a month
_OF_A_NOUN = rf"\s+(?!(?:{'|'.join(sorted(AFTER_A_DAY_EN))})\b)[a-z]"
_PATTERNS = [
    # a street address: a number and a street's name (18 Elm Road), 望京街18号 (号 is no day here)
    (
        "address",
        rf"(?<![\w.])\d{{1,5}}[A-Za-z]?,?\s+(?-i:(?:[A-Z][a-z]+\s+){{1,3}}){_STREET}\b\.?"
        r"|(?:(?![的是在到住了和与从])[\u4e00-\u9fff]){1,6}(?:路|街|大道|大街|巷|胡同|弄)\d{1,5}号(?:院|楼)?"
        # a building and its floor or room, after the estate's name (A座5楼, 星河大厦18楼, 3号楼1202室)
        r"|(?:(?:(?![的是在到住了和与从])[\u4e00-\u9fff]){1,6}(?:大厦|大楼|花园|小区|广场|中心|公寓|苑|园))?"
        rf"(?:(?:(?<![A-Za-z])[A-Z]|{_ZH_NUM})(?:座|栋|幢|号楼)(?:{_ZH_NUM}(?:楼|层))?(?:\d{{3,4}}室?)?"
        rf"|(?<![\dA-Za-z]){_ZH_NUM}(?:楼|层)(?![下上梯道房盘市]))",
    ),
    # an identifier or a contact: an email, a phone number, letters joined to digits (ORD-12345, A3307)
    (
        "id",
        # an e-mail's parts are Latin (\w would take the Chinese before it: 邮箱是wang@…)
        r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]{1,64}@[A-Za-z0-9-]+\.[A-Za-z0-9.-]+|(?<![\d.])(?:\+\d{1,3}[\s-]?)?\d{3,4}-\d{4}(?:-\d{2,4})?(?!\d)|"
        # a phone number in groups: +44 20 7946 0958, (020) 7946 0958, 07911 123456, 020 7946 0958
        r"(?<![\d.])(?:\+\d{1,3}(?:[\s-]\d{2,5}){2,4}|\(\d{2,5}\)\s?\d{3,4}[\s-]?\d{3,4}|0\d{3,4}\s\d{5,7}"
        r"|0\d{2,4}[\s-]\d{3,4}[\s-]\d{4}|\d{3}[\s.]\d{3}[\s.]\d{4})(?!\.?\d)|"
        r"(?<![\d.])1\d{10}(?!\d)|(?<![A-Za-z0-9.-])[A-Za-z]{1,8}-?\d{3,}(?!\d|\.\d)|"
        # a code of words and a number joined by hyphens: a region, a host, a node (eu-west-3, db-prod-02)
        r"(?<![A-Za-z0-9_.-])[A-Za-z]{1,10}(?:-[A-Za-z]{1,10})*-\d{1,4}[a-z]?(?![\w-]|\.\w)|"
        r"(?-i:(?<![\w-])\d{1,4}[A-Z]\b)",  # a seat, a room, a gate: 14C, 4B (not 5G of Orchard-5G)
    ),
    ("time", r"\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\b\d{1,2}\s?[ap]\.?m\b\.?"),
    ("time", rf"(?:早上|上午|中午|下午|晚上|凌晨|傍晚)?{_ZH_NUM}点(?:半|{_ZH_NUM}分?)?"),
    (
        "date",
        rf"\b(?:{_MONTH_ALT})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+of\s+"
        rf"(?:{_MONTH_ALT})\b|\b(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b(?!{_OF_A_NOUN})",
    ),
    # a day said without 号 after its month (十月十五, 农历十月初八)
    (
        "date",
        rf"(?:{_ZH_NUM}月)?{_ZH_NUM}[号日](?![本院楼线床位门室栋座])|{_ZH_NUM}月(?:初[一二三四五六七八九十]|[一二三]?十[一二三四五六七八九]?"
        rf"|[一二三四五六七八九](?![十百千万]))(?![个天年月周点分])|{_ZH_NUM}月(?:份|底|初)?",
    ),
    # a day of the week, or several said as one set ("Tuesdays and Thursdays", "Mondays, Fridays")
    ("weekday", rf"\b(?:{_WEEKDAY_ALT})s?\b(?:{_DAY_JOIN}(?:{_WEEKDAY_ALT})s?\b)*"),
    # a month alone, capitalised ("due in March"; "may" is mostly a verb)
    ("date", rf"(?-i:\b(?:{_MONTHS_CAPITALISED})\b)"),
    ("weekday", r"(?:周|星期|礼拜)[一二三四五六日天](?:[和、跟及]\s*(?:周|星期|礼拜)?[一二三四五六日天])*"),
    (
        "version",
        # never a share ("at 4.2%")
        r"\bv\d+(?:\.\d+)*(?![\d.])|(?<=[A-Za-z] )\d+\.\d+(?:\.\d+)*(?!\.?\d|\s?(?:%|per\s?cent))"
        r"|(?<=[A-Za-z])\d+\.\d+(?!\.?\d|\s?(?:%|per\s?cent))",
    ),
    (
        "size",
        r"(?<![A-Za-z])(?:X{0,3}[SML]|XXL|XL)(?:码|号)|(?<![\d.])\d{2}(?:\.5)?码|\bsize\s+(?:X{0,3}[SML]|XXL|XL|\d+)\b",
    ),
    ("amount", rf"[$€£¥]\s?{_NUM}(?:\s?(?:k|K|thousand|million)\b)?"),
    ("amount", rf"{_NUM}\s?(?:k|K|thousand|million|千|万|w|W|百)?\s?(?:{_CUR_ALT})(?![A-Za-z])"),
    # an amount in Chinese numerals ("三千块", "两千五百元")
    ("amount", rf"{_ZH_LEAD_NUM}\s?(?:{_CUR_ALT})(?![A-Za-z])"),
    ("quantity", rf"(?<![0-9A-Za-z.]){_NUM}\s?(?:{_UNIT_ALT})(?![A-Za-z])"),
    # a Latin unit never runs into a word ("4471 should" holds no seconds), nor a number out of one (K8s)
    # ...of digits or of numerals, never both ("3000一个月" is 3000 a month, not 3000 months)
    ("quantity", rf"(?<![A-Za-z0-9{_NUMERALS}])(?:\d+|[{_NUMERALS}]+)\s?(?:{_UNIT_ALT})(?![A-Za-z])"),
    ("number", rf"{_NUM}\s?(?:万|千|k\b|K\b)|(?<![0-9A-Za-z.]){_NUM}(?!\.?\d|[0-9A-Za-z])|{_ZH_LEAD_NUM}万"),
    # an ordinal of a noun ("the 7th floor", "2nd grade"): a number of its order, no day of a month
    ("number", r"\b(?:the\s+)?\d{1,3}(?:st|nd|rd|th)\b"),
    # a magnitude in Chinese numerals ("七千", "两千五"): a numeral before 百 or 千, never 千万 ("don't")
    ("number", rf"{_ZH_LEAD_NUM}[百千][零一二两三四五六七八九十]*"),
]
_FINDER = re.compile("|".join(f"(?P<{kind}{i}>{p})" for i, (kind, p) in enumerate(_PATTERNS)), re.IGNORECASE)
# no value is written with more than this many numerals in a row; longer runs (a 400-digit number, a pasted
# hash) are masked before matching, so the finder stays linear: every unbounded repeat in it is a numeral
_OVERLONG_RUN = re.compile(r"[0-9零一二两三四五六七八九十百千万.,:]{33,}")
_MASK = "\ue000"
_LEADING_NUM = re.compile(rf"{_NUM}|{_ZH_NUM}", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    value: Value
    start: int
    end: int


def _number(text: str) -> float | None:
    """The value's number; None when it has none or none a float holds (a 400-digit run)."""
    number = _reading(text)
    return number if number is not None and math.isfinite(number) else None


def _reading(text: str) -> float | None:
    match = _LEADING_NUM.search(text)
    if match is None:
        return None
    raw = match.group(0)
    if raw.lower() in NUMBER_WORDS:
        number = NUMBER_WORDS[raw.lower()]
    elif raw[0].isdigit():
        number = float(raw.replace(",", "")) if raw.count(".") <= 1 else float(raw.split(".")[0])
    else:
        number = float(_zh_big(raw))
    rest = text[match.end() :].strip().lower()
    for word, factor in _MULT.items():
        if rest.startswith(word.lower()) and not (word == "m" and rest.startswith(("mg", "ms", "min"))):
            if word in ("m",) and not rest.startswith("m "):
                continue
            if len(word) == 1 and word.isascii() and rest[1:2].isalpha():
                continue  # "2 weeks" is no 2w (20,000), "5 kg" no 5k
            return number * factor
    return number


def _zh_big(text: str) -> int:
    """A Chinese numeral that may hold 百 and 千 (三千五 → 3500: one numeral after the last mark counts in
    the next place down; 两千零五 → 2005), else zh_number's reading."""
    if "千" in text or "百" in text:
        total, part, last = 0, text, 1
        for mark, factor in (("千", 1000), ("百", 100)):
            if mark in part:
                head, _, part = part.partition(mark)
                total += (zh_number(head) if head else 1) * factor
                last = factor
        if len(part) == 1 and part != "零":
            total += zh_number(part) * last // 10
        elif part:
            total += zh_number(part.lstrip("零"))
        return total
    return zh_number(text) if all(c in "零一二两三四五六七八九十0123456789" for c in text) else 0


def _typed(kind: str, text: str) -> Value:
    low = text.lower().strip()
    if kind == "amount":
        code = next((c for w, c in sorted(_CURRENCY.items(), key=lambda i: -len(i[0])) if w in low), "")
        return Value("amount", text, _number(text), code, "")
    if kind == "quantity":
        unit = max((u for u in _UNITS if low.endswith(u)), key=len, default="")
        dim, factor = _UNITS.get(unit, ("", 1.0))
        number = _number(text)
        return Value("quantity", text, None if number is None else number * factor, dim)
    if kind == "weekday":
        days = sorted(set(weekdays(low)))
        if len(days) > 1:  # a set of days: the same set in any order, its number none
            return Value("weekday", text, None, "", "|".join(map(str, days)))
        return Value("weekday", text, float(days[0]), "", str(days[0]))
    if kind == "date":
        return Value("date", text, None, "", date_key(low))
    if kind == "time":
        return Value("time", text, minutes(low), "", "")
    if kind == "size":
        return Value("text", text, None, "size", re.sub(r"码|号|size|\s", "", low))
    if kind == "id":  # a contact's kind is its unit: a phone number never replaces an email address
        low = low.rstrip(".")
        phone = len(re.sub(r"\D", "", low)) >= 7 and re.fullmatch(r"[\d\s+().-]+", low) is not None
        unit = "email" if "@" in low else "phone" if phone else ""
        return Value("id", text.rstrip("."), None, unit, re.sub(r"[\s-]", "", low))
    if kind == "address":
        return Value("name", text.rstrip("."), None, "", re.sub(r"[\s,.]", "", low))
    if kind == "version":
        return Value("version", text, None, "", low.lstrip("v"))
    return Value("number", text, _number(text), "", "")


def find_values(text: str) -> list[Span]:
    """Every typed value of `text`, left to right, none overlapping."""
    spans: list[Span] = []
    masked = _OVERLONG_RUN.sub(lambda m: _MASK * len(m.group(0)), text)
    for match in _FINDER.finditer(masked):
        kind = (match.lastgroup or "text").rstrip("0123456789")
        raw = match.group(0).strip()
        if not raw:
            continue
        value = counted(_typed(kind, raw), masked[match.end() : match.end() + 24])
        spans.append(Span(value, match.start(), match.end()))
    return spans


_COMPATIBLE = {
    frozenset({"amount", "number"}),
    frozenset({"quantity", "number"}),
    frozenset({"date", "weekday"}),
    frozenset({"name", "text"}),
    frozenset({"text", "number"}),
    frozenset({"text", "quantity"}),
    frozenset({"text", "version"}),
    frozenset({"version", "name"}),
}


def compatible(a: Value, b: Value) -> bool:
    """Whether two values can be values of one attribute: the same type (and the same dimension or
    currency when both say one), a bare number beside an amount or quantity, or an hour said bare
    beside a time of day ("pushed the standup to 10")."""
    if a.type == b.type:
        return units_agree(a.unit, b.unit)
    if {a.type, b.type} == {"time", "number"}:
        hour = (a if a.type == "number" else b).number
        return hour is not None and hour.is_integer() and 0 < hour <= 24
    return frozenset({a.type, b.type}) in _COMPATIBLE


def same(a: Value, b: Value) -> bool:
    """Whether two values are the same value (55ms and 0.055 s; Tuesdays and Tuesday; 杭州 in 杭州西湖区)."""
    if {a.type, b.type} == {"time", "number"} and a.number is not None and b.number is not None:
        minutes, hour = (a.number, b.number) if a.type == "time" else (b.number, a.number)
        return abs(minutes - hour * 60) < 1e-9 or abs(minutes - (hour + 12) * 60) < 1e-9  # 10 ~ 10:00
    if a.number is not None and b.number is not None and a.type not in ("date", "version"):
        return abs(a.number - b.number) < 1e-9 and (not a.unit or not b.unit or a.unit == b.unit)
    if a.key and b.key:
        return a.key == b.key
    x, y = fold(a.text), fold(b.text)
    if x.isascii() and y.isascii():  # whole words: "therapist" is no part of "physiotherapist"
        x, y = (f" {fold(v.text, keep_space=True)} " for v in (a, b))
    return bool(x.strip() and y.strip()) and (
        x == y or (min(len(x.strip()), len(y.strip())) >= 2 and (x in y or y in x))
    )


# The nouns that name a value's own measure, no thing it is of ("the dose", "the price", 剂量, 时间): a clause
# narrowed by them alone says no more than its value does (English as stems, Chinese as jieba words)
_MEASURE_NOUNS = {
    "amount": frozenset("price cost fee charg amount 价格 价钱 费用 金额 钱 价".split()),
    "mass": frozenset("dose dosag amount 剂量 用量 量".split()),
    "volume": frozenset("dose dosag amount 剂量 用量 量".split()),
    "time": frozenset("time 时间 点".split()),
    "date": frozenset("date day 日期 日子 时间".split()),
    "weekday": frozenset("day 日子 时间".split()),
}


def measure_nouns(value: Value) -> frozenset[str]:
    """The nouns naming `value`'s measure (`_MEASURE_NOUNS`), by its type or its quantity's dimension."""
    return _MEASURE_NOUNS.get(value.unit if value.type == "quantity" else value.type, frozenset())


def free(value: Value) -> bool:
    """Whether a value is free text: no type, no unit (a clothing size is text with a unit)."""
    return value.type == "text" and not value.unit


def fold(text: str, keep_space: bool = False) -> str:
    """Lower case without punctuation (and without spaces unless `keep_space`), a plural s dropped."""
    if keep_space:
        return re.sub(r"[^\w\s]+|_", "", text.lower())
    return re.sub(r"[\s\W_]+", "", text.lower()).removesuffix("s")
