"""A sentence that only gives a value is read as the earlier sentence it gives a new value to (by the
value's kind), and as a correction when the turn owns up to an error; anything else is left as said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.ellipsis import elliptic_value, made_whole
from app.distill.types import Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sentence", "earlier", "turn", "expected"),
    [
        (
            "2:45.",
            ["My dentist appointment is at 2:15 on Monday."],
            "Sorry, typo. 2:45.",
            "Correction: My dentist appointment is at 2:45 on Monday.",
        ),
        (
            "Up to 66 kg since the holidays!",
            ["I'm 170 cm tall and weigh 64 kg."],
            "Up to 66 kg since the holidays!",
            "I'm 170 cm tall and weigh 66 kg.",
        ),
        (
            "€900 is the actual figure.",
            ["The deposit for the flat is €1,200.", "Can you remind me to pay it?"],
            "Hmm, I got that wrong. €900 is the actual figure.",
            "Correction: The deposit for the flat is €900.",
        ),
        (
            "No, size 9.",
            ["Order the hiking boots in size 8, please."],
            "No, size 9.",
            "Correction: Order the hiking boots in size 9, please.",
        ),
        ("是9点。", ["我每天8点上班。"], "不对，是9点。", "更正：我每天9点上班。"),
    ],
)
def test_a_value_alone_gives_its_antecedent_a_new_value(
    sentence: str, earlier: list[str], turn: str, expected: str
) -> None:
    assert made_whole(sentence, earlier, turn) == expected


@pytest.mark.parametrize(
    ("sentence", "earlier"),
    [
        ("7:30.", ["The flight leaves at 9:10 and the train at 11:40."]),  # which of two is not said
        ("The gym opens at 6:00.", ["My yoga class is at 7:00."]),  # a statement of its own
        ("12.", ["We need 10 chairs."]),  # a bare number could be of anything
        ("3 kg.", ["The desk is 140 cm wide."]),  # no earlier value of its kind
        ("Size 9 in Paris.", ["My shoe size is 8."]),  # more than a value
        ("4:30.", ["Is the meeting at 3:30?"]),  # a question sets no value
        ("5 kg.", []),
        ("It's 555-0199.", ["My husband's number is 555-0123."]),  # a number may be someone else's
    ],
)
def test_anything_else_is_left_as_said(sentence: str, earlier: list[str]) -> None:
    assert made_whole(sentence, earlier, sentence) is None


def test_a_statement_holding_more_than_its_value_is_not_elliptic() -> None:
    assert elliptic_value("I swim 2 km.") is None
    assert elliptic_value("Actually, it's 4:30 now.") is not None


async def test_the_distiller_stores_the_correction_whole() -> None:
    turns = [
        Turn(1, 1, "user", "My piano lesson is at 4:15 on Wednesdays.", None, AT, {}),
        Turn(2, 2, "assistant", "Noted.", None, AT, {}),
        Turn(3, 3, "user", "Oops, typo. 5:15. It has always been after school.", None, AT, {}),
    ]
    units = []
    for index, turn in enumerate(turns):
        units += HeuristicDistiller().distill_turn(turn, AT, recent=turns[:index])
    corrected = [u for u in units if 3 in u.source_seqs and "5:15" in u.content]
    assert [u.content for u in corrected] == ["The user's piano lesson is at 5:15 on Wednesdays."]
    assert "correction" in corrected[0].tags
