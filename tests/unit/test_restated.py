"""Which episodes restate a superseded value (app/resolve/restated.py): they carry a number of the old
unit and none of the new one's; the dates the distiller resolved are no values."""

from __future__ import annotations

import pytest

from app.db.models import MemoryUnit
from app.resolve.restated import numbers, restates

OLD = MemoryUnit(content="The user wants a laptop, their budget is 5000.", tags=["constraint.budget"])
NEW = MemoryUnit(content="If upgraded, the user can go up to 8,000.", tags=["constraint.budget"])


@pytest.mark.parametrize(
    ("episode", "expected"),
    [
        ("For 5000, the assistant recommends the Lenovo IdeaPad 5.", True),
        ("5000元的话，助手推荐联想小新Pro 14。", True),
        ("Between 5000 and 8000 the assistant recommends the ThinkPad.", False),  # says the new value too
        ("The assistant recommends the ThinkPad for 8000.", False),
        ("The assistant recommends the ThinkPad.", False),  # no value at all
    ],
)
def test_an_episode_restates_the_old_value_only_with_its_number_and_without_the_new(
    episode: str, expected: bool
) -> None:
    assert restates(MemoryUnit(content=episode, tags=["episode"]), OLD, NEW) is expected


def test_resolved_dates_are_no_values() -> None:
    assert numbers("Due Friday (2026-12-04), the week of 2026-11-23, last year (2022), 3 kids") == {"3"}
    assert numbers("预算5,000元，明天（2026-12-01）") == {"5000"}
