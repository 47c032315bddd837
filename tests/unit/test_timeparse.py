"""Time filters parsed from query text (app/query/timeparse.py)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from app.query.timeparse import TimeFilter, parse_time_filter

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


# (query, phrase, start, end) with NOW = Monday 2026-11-30 15:00 in Asia/Shanghai
ENGLISH = [
    ("what did I do today?", "today", "2026-11-30", "2026-12-01"),
    ("what did I eat tonight", "tonight", "2026-11-30", "2026-12-01"),
    ("notes from this morning", "this morning", "2026-11-30", "2026-12-01"),
    ("what did we discuss yesterday", "yesterday", "2026-11-29", "2026-11-30"),
    ("what did I watch last night", "last night", "2026-11-29", "2026-11-30"),
    ("the day before yesterday, where was I", "the day before yesterday", "2026-11-28", "2026-11-29"),
    ("what happened this week", "this week", "2026-11-30", "2026-12-07"),
    ("what did I work on last week", "last week", "2026-11-23", "2026-11-30"),
    ("what did I buy the week before last", "the week before last", "2026-11-16", "2026-11-23"),
    ("expenses this month", "this month", "2026-11-01", "2026-12-01"),
    ("what did I spend last month", "last month", "2026-10-01", "2026-11-01"),
    ("goals set this year", "this year", "2026-01-01", "2027-01-01"),
    ("trips I took last year", "last year", "2025-01-01", "2026-01-01"),
    ("what did I read in March", "in March", "2026-03-01", "2026-04-01"),
    ("meetings in May", "in May", "2026-05-01", "2026-06-01"),
    ("what happened in December", "in December", "2025-12-01", "2026-01-01"),  # December 2026 is ahead
    ("notes from November", "November", "2026-11-01", "2026-12-01"),
    ("what did I do in March 2025", "in March 2025", "2025-03-01", "2025-04-01"),
    ("anything from early March?", "early March", "2026-03-01", "2026-04-01"),
    ("what did I do last November", "last November", "2025-11-01", "2025-12-01"),
    ("what did I do on March 3", "March 3", "2026-03-03", "2026-03-04"),
    ("what did I say on March 3rd, 2025", "March 3rd, 2025", "2025-03-03", "2025-03-04"),
    ("what did I say on the 5th of December", "the 5th of December", "2025-12-05", "2025-12-06"),
    ("what did I order on December 1", "December 1", "2025-12-01", "2025-12-02"),  # tomorrow -> last year
    ("what did I buy on 2026-11-02?", "2026-11-02", "2026-11-02", "2026-11-03"),
    ("what did I say 3 days ago", "3 days ago", "2026-11-27", "2026-11-28"),
    ("a couple of days ago I mentioned a book", "a couple of days ago", "2026-11-28", "2026-11-29"),
    ("what did I do two weeks ago", "two weeks ago", "2026-11-16", "2026-11-23"),
    ("a month ago I set a goal", "a month ago", "2026-10-01", "2026-11-01"),
    ("what did I say in the last 3 days", "in the last 3 days", "2026-11-27T15:00", "2026-11-30T15:00"),
    ("over the past two weeks", "over the past two weeks", "2026-11-16T15:00", "2026-11-30T15:00"),
    ("anything in the past month?", "in the past month", "2026-10-30T15:00", "2026-11-30T15:00"),
    ("the last 6 months of workouts", "the last 6 months", "2026-05-30T15:00", "2026-11-30T15:00"),
    ("errors in the last 24 hours", "in the last 24 hours", "2026-11-29T15:00", "2026-11-30T15:00"),
    ("the past few days", "the past few days", "2026-11-27T15:00", "2026-11-30T15:00"),
    ("what have I been reading recently", "recently", "2026-11-23T15:00", "2026-11-30T15:00"),
    ("what did I do last weekend", "last weekend", "2026-11-28", "2026-11-30"),
    ("what did I cook over the weekend", "the weekend", "2026-11-28", "2026-11-30"),
    ("what did I do on Friday", "on Friday", "2026-11-27", "2026-11-28"),
    ("what did I do last Friday", "last Friday", "2026-11-27", "2026-11-28"),
    ("what did I do on Monday", "on Monday", "2026-11-23", "2026-11-24"),  # today is Monday: the one before
    ("this Monday's standup", "this Monday", "2026-11-30", "2026-12-01"),
    ("in 2025, where did I travel", "in 2025", "2025-01-01", "2026-01-01"),
    ("what changed since last week", "since last week", "2026-11-23", "2026-11-30T15:00"),
    ("what did I do yesterday and last week", "yesterday", "2026-11-29", "2026-11-30"),  # first wins
    ("the last week of March", "of March", "2026-03-01", "2026-04-01"),
    ("the last 3 days of this month", "this month", "2026-11-01", "2026-12-01"),
    ("in the last 3 days of work", "in the last 3 days", "2026-11-27T15:00", "2026-11-30T15:00"),
]

CHINESE = [
    ("我今天做了什么", "今天", "2026-11-30", "2026-12-01"),
    ("昨天我们聊了什么", "昨天", "2026-11-29", "2026-11-30"),
    ("昨晚吃了什么", "昨晚", "2026-11-29", "2026-11-30"),
    ("前天的会议", "前天", "2026-11-28", "2026-11-29"),
    ("大前天去哪了", "大前天", "2026-11-27", "2026-11-28"),
    ("本周的任务", "本周", "2026-11-30", "2026-12-07"),
    ("这个星期做了什么", "这个星期", "2026-11-30", "2026-12-07"),
    ("上周我做了什么", "上周", "2026-11-23", "2026-11-30"),
    ("上个星期的计划", "上个星期", "2026-11-23", "2026-11-30"),
    ("上礼拜见了谁", "上礼拜", "2026-11-23", "2026-11-30"),
    ("上上周的开销", "上上周", "2026-11-16", "2026-11-23"),
    ("本月花了多少钱", "本月", "2026-11-01", "2026-12-01"),
    ("这个月的目标", "这个月", "2026-11-01", "2026-12-01"),
    ("上个月的账单", "上个月", "2026-10-01", "2026-11-01"),
    ("今年读了哪些书", "今年", "2026-01-01", "2027-01-01"),
    ("去年去了哪里旅行", "去年", "2025-01-01", "2026-01-01"),
    ("三月份我在做什么", "三月份", "2026-03-01", "2026-04-01"),
    ("3月的计划", "3月", "2026-03-01", "2026-04-01"),
    ("12月的支出", "12月", "2025-12-01", "2026-01-01"),  # December 2026 is ahead
    ("去年三月的旅行", "去年三月", "2025-03-01", "2025-04-01"),
    ("2025年3月发生了什么", "2025年3月", "2025-03-01", "2025-04-01"),
    ("2025年的总结", "2025年", "2025-01-01", "2026-01-01"),
    ("3月5日我说了什么", "3月5日", "2026-03-05", "2026-03-06"),
    ("三月五号的会议", "三月五号", "2026-03-05", "2026-03-06"),
    ("十一月三号见了谁", "十一月三号", "2026-11-03", "2026-11-04"),
    ("三天前我说了什么", "三天前", "2026-11-27", "2026-11-28"),
    ("两周前的计划", "两周前", "2026-11-16", "2026-11-23"),
    ("一个月前的目标", "一个月前", "2026-10-01", "2026-11-01"),
    ("最近三天做了什么", "最近三天", "2026-11-27T15:00", "2026-11-30T15:00"),
    ("过去一周的记录", "过去一周", "2026-11-23T15:00", "2026-11-30T15:00"),
    ("近一周的开销", "近一周", "2026-11-23T15:00", "2026-11-30T15:00"),
    ("过去两个月", "过去两个月", "2026-09-30T15:00", "2026-11-30T15:00"),
    ("过去24小时的错误", "过去24小时", "2026-11-29T15:00", "2026-11-30T15:00"),
    ("我最近在读什么书", "最近", "2026-11-23T15:00", "2026-11-30T15:00"),
    ("上周五我们聊了什么", "上周五", "2026-11-27", "2026-11-28"),
    ("上个星期五的会", "上个星期五", "2026-11-27", "2026-11-28"),
    ("周五做了什么", "周五", "2026-11-27", "2026-11-28"),
    ("星期一开会了吗", "星期一", "2026-11-23", "2026-11-24"),  # today is Monday: the one before
    ("上周末去哪了", "上周末", "2026-11-28", "2026-11-30"),
    ("周末做了什么", "周末", "2026-11-28", "2026-11-30"),
    ("上周以来有什么变化", "上周以来", "2026-11-23", "2026-11-30T15:00"),
    ("我上周和昨天说了什么", "上周", "2026-11-23", "2026-11-30"),  # first wins
]

NO_TIME = [
    "may I ask what my budget is",
    "what is my budget?",
    "我的预算是多少？",
    "Second, what is the current status now?",
    "my account has 5000 points",
    "options 2 and 3 may work",
    "the team will march on",
    "what did June tell me?",
    "where is my sunday best suit",
    "what is my most recent address",
    "what did I learn in the past",
    "what are my plans for tomorrow",
    "what is on next Friday",
    "this weekend's plans",  # still ahead on a Monday
    "离我最近的医院是哪家",
    "我最近一次体检是什么时候",
    "以前天天跑步吗",
    "我一周三次去健身房吗",
    "下周五有什么安排",
    "下个周末去哪",
    "每周五开例会吗",
    "三个月的预算是多少",
    "本周三的会议",  # Wednesday is ahead; not "this week"
    "2025年以前的记录",
]


@pytest.mark.parametrize(("query", "phrase", "start", "end"), ENGLISH)
def test_english(query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, NOW, SHANGHAI), phrase, start, end)


@pytest.mark.parametrize(("query", "phrase", "start", "end"), CHINESE)
def test_chinese(query: str, phrase: str, start: str, end: str) -> None:
    check(parse_time_filter(query, NOW, SHANGHAI), phrase, start, end)


@pytest.mark.parametrize("query", NO_TIME)
def test_no_time_phrase(query: str) -> None:
    assert parse_time_filter(query, NOW, SHANGHAI) is None


# (query, phrase, start, end) asked on Saturday 2026-11-28
ON_SATURDAY = [
    ("last Friday", "last Friday", "2026-11-27", "2026-11-28"),
    ("Friday last week", "Friday last week", "2026-11-20", "2026-11-21"),
    ("on Saturday", "on Saturday", "2026-11-21", "2026-11-22"),
    ("last weekend", "last weekend", "2026-11-21", "2026-11-23"),
    ("over the weekend", "the weekend", "2026-11-28", "2026-11-30"),
    ("this weekend", "this weekend", "2026-11-28", "2026-11-30"),
    ("上周六", "上周六", "2026-11-21", "2026-11-22"),
    ("周末", "周末", "2026-11-28", "2026-11-30"),
]


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
