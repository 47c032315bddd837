"""A tool's result that is a record ("order 1042 | shipped | ETA Friday", "status=open; owner=ops") is
distilled field by field, a unit each; prose and long listings from a tool are read as any other turn."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.sizes import record_fields
from app.distill.types import Turn

T0 = datetime(2026, 11, 30, 10, tzinfo=UTC)


def _units(text: str) -> list[str]:
    asked = Turn(1, 101, "user", "my parcel still hasn't arrived, can you check?", None, T0)
    tool = Turn(2, 102, "tool", text, None, T0)
    return [c.content for c in HeuristicDistiller().distill_turn(tool, T0, recent=[asked])]


@pytest.mark.parametrize(
    ("record", "fields"),
    [
        ("parcel PX-7781 | status: held at depot | carrier: Parcelink | ETA 2026-12-03", 4),
        ("ticket=INC-5521; priority=P2; owner=netops", 3),
        ("包裹 PX-7781 | 状态：滞留 | 当前位置：南京转运中心", 3),
    ],
)
def test_a_record_is_distilled_field_by_field(record: str, fields: int) -> None:
    units = _units(record)
    assert len(units) == fields, units
    for field in record_fields(record):
        value = field.split("=")[-1].split("：")[-1].lower()
        assert sum(value in u.lower() for u in units) == 1, (field, units)


def test_prose_and_long_listings_are_no_record() -> None:
    assert record_fields("The parcel is held at the depot because the address label is torn.") == ()
    assert record_fields(" | ".join(f"row {i}: ok" for i in range(20))) == ()  # a listing, not a record
    assert record_fields("one field only") == ()
