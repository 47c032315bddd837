"""A day of the week naming a thing it recurs on ("the Saturday job", 周六那个兼职) is a label, not a date
to resolve; a day said as when something happens still is."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.distill.dates import resolve_dates

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(
    "text",
    [
        "I quit the Saturday job.",
        "My Tuesday class moved online.",
        "周六那个兼职我已经辞了",
        "周二的课不上了",
    ],
)
def test_a_day_naming_a_thing_is_no_date(text: str) -> None:
    assert resolve_dates(text, T0)[0] == text


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("I met her on Tuesday.", "2026-12-01"),
        ("周六我去了公园", "2026-11-28"),
        ("We meet Friday morning.", "2026-12-04"),
    ],
)
def test_a_day_said_as_when_is_resolved(text: str, note: str) -> None:
    assert note in resolve_dates(text, T0)[0]
