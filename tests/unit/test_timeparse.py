"""Time filters parsed from query text (app/query/timeparse.py); the tables of phrases and the windows
they must give are in `timeparse_cases.yaml`."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from app.query.timeparse import TimeFilter, parse_time_filter
from app.query.topic import has_topic

SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")
NOW = datetime(2026, 11, 30, 15, 0, tzinfo=SHANGHAI)  # a Monday
SATURDAY = datetime(2026, 11, 28, 10, 0, tzinfo=SHANGHAI)
FEBRUARY = datetime(2026, 2, 10, 9, 0, tzinfo=SHANGHAI)
JANUARY = datetime(2026, 1, 15, 9, 0, tzinfo=SHANGHAI)


def at(text: str, tz: ZoneInfo = SHANGHAI) -> datetime:
    """'2026-11-23' is local midnight, '2026-11-23T15:00' a local time."""
    return datetime.fromisoformat(text).replace(tzinfo=tz)


def check(result: TimeFilter | None, phrase: str, start: str, end: str, tz: ZoneInfo = SHANGHAI) -> None:
    assert result is not None
    assert (result.phrase, result.start, result.end) == (phrase, at(start, tz), at(end, tz))
    assert result.start.tzinfo is tz
    assert result.end.tzinfo is tz


CASES = yaml.safe_load(Path(__file__).with_name("timeparse_cases.yaml").read_text(encoding="utf-8"))
ENGLISH, CHINESE, NO_TIME, ON_SATURDAY = (CASES[k] for k in ("english", "chinese", "no_time", "on_saturday"))


@pytest.mark.parametrize(("query", "phrase", "start", "end"), ENGLISH)
def test_english(query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, NOW, SHANGHAI), phrase, start, end)


@pytest.mark.parametrize(("query", "phrase", "start", "end"), CHINESE)
def test_chinese(query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, NOW, SHANGHAI), phrase, start, end)


@pytest.mark.parametrize("query", NO_TIME)
def test_no_time_phrase(query: str) -> None:
    assert parse_time_filter(query, NOW, SHANGHAI) is None


@pytest.mark.parametrize(("query", "phrase", "start", "end"), ON_SATURDAY)
def test_weekdays_and_weekends_asked_on_saturday(query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, SATURDAY, SHANGHAI), phrase, start, end)


@pytest.mark.parametrize(
    ("now", "query", "phrase", "start", "end"),
    [
        (FEBRUARY, "what did I do in March", "in March", "2025-03-01", "2025-04-01"),
        (FEBRUARY, "三月的计划", "三月", "2025-03-01", "2025-04-01"),
        (FEBRUARY, "on March 3", "March 3", "2025-03-03", "2025-03-04"),
        (JANUARY, "last month", "last month", "2025-12-01", "2026-01-01"),
        (JANUARY, "上个月", "上个月", "2025-12-01", "2026-01-01"),
        (JANUARY, "last week", "last week", "2026-01-05", "2026-01-12"),
    ],
)
def test_year_boundaries(now: datetime, query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, now, SHANGHAI), phrase, start, end)


def test_calendar_in_the_query_time_zone() -> None:
    now = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)  # 2026-11-30 21:30 in New York
    check(
        parse_time_filter("what did I do today", now, NEW_YORK), "today", "2026-11-30", "2026-12-01", NEW_YORK
    )
    check(parse_time_filter("yesterday", now, NEW_YORK), "yesterday", "2026-11-29", "2026-11-30", NEW_YORK)
    check(parse_time_filter("this month", now, NEW_YORK), "this month", "2026-11-01", "2026-12-01", NEW_YORK)
    # the same instant is already December 1 in Shanghai
    check(parse_time_filter("today", now, SHANGHAI), "today", "2026-12-01", "2026-12-02")


def test_week_across_daylight_saving_change() -> None:
    result = parse_time_filter("last week", datetime(2026, 11, 4, 12, tzinfo=NEW_YORK), NEW_YORK)
    check(result, "last week", "2026-10-26", "2026-11-02", NEW_YORK)
    assert result is not None
    assert (result.start.isoformat(), result.end.isoformat()) == (
        "2026-10-26T00:00:00-04:00",
        "2026-11-02T00:00:00-05:00",
    )


@pytest.mark.parametrize(
    ("query", "vague"),
    [
        ("what have I been reading recently", True),
        ("anything new lately?", True),
        ("我最近在读什么书", True),
        ("这段时间怎么样", True),
        ("what happened last week", False),
        ("最近三天做了什么", False),
    ],
)
def test_recently_is_a_vague_window(query: str, vague: bool) -> None:
    result = parse_time_filter(query, NOW, SHANGHAI)
    assert result is not None
    assert result.vague is vague


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        parse_time_filter("today", datetime(2026, 11, 30, 15), SHANGHAI)


def test_no_time_phrase_is_fast() -> None:
    queries = ["what is my budget?", "我的预算是多少？", "may I ask what my budget is"]
    started = time.perf_counter()
    for _ in range(300):
        for query in queries:
            parse_time_filter(query, NOW, SHANGHAI)
    per_query = (time.perf_counter() - started) / 900
    assert per_query < 1e-3  # measured: 1-30 µs


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("What is the weather like on Mars tonight?", True),
        ("Tell me about black holes from this week.", True),
        ("What did I say about my budget yesterday?", True),
        ("今晚火星上的天气怎么样？", True),
        ("上周我们聊过光合作用吗？", True),
        ("What did we talk about yesterday?", False),
        ("Anything from last week?", False),
        ("What happened in the past 3 days?", False),
        ("我昨天说了什么？", False),
        ("上周发生了什么？", False),
        ("我们过去三天聊了什么？", False),
    ],
)
def test_a_time_phrase_is_no_topic(query: str, topic: bool) -> None:
    found = parse_time_filter(query, NOW, SHANGHAI)
    assert found is not None
    assert has_topic(query, found.phrase) is topic
    assert has_topic(query, None)  # the time phrase itself is a word outside the closed class


@pytest.mark.parametrize(
    ("query", "yearless"),
    [
        ("What did I do in June?", True),
        ("Where was I on March 3?", True),
        ("我六月做了什么？", True),
        ("What did I do in June 2025?", False),
        ("What did I do this June?", False),
        ("我去年六月做了什么？", False),
        ("2025年6月我在哪？", False),
        ("What did I do last week?", False),
    ],
)
def test_a_month_or_date_without_its_year_says_so(query: str, yearless: bool) -> None:
    found = parse_time_filter(query, NOW, SHANGHAI)
    assert found is not None
    assert found.yearless is yearless
