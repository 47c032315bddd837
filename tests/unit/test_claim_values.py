"""A claim's value read whole: digits joined by a thousands separator or a time's colon stay one value,
a unit is a word of its own, a verb of change names the value it moves to, a negated ending is none."""

from __future__ import annotations

import pytest

from app.claims import extract, find_values


@pytest.mark.parametrize(
    ("text", "number"),
    [("My savings goal for this year is $8,000.", 8000.0), ("The deposit is €12,500, due Friday.", 12500.0)],
)
def test_a_thousands_separator_ends_no_clause(text: str, number: float) -> None:
    [claim, *_] = extract(text)
    assert claim.value.type == "amount"
    assert claim.value.number == number


def test_a_time_of_day_is_one_value_in_chinese() -> None:
    [claim] = extract("周会改到每周三上午9:30。")
    assert "9:30" in claim.text


def test_a_unit_never_runs_into_a_word() -> None:
    assert not [s for s in find_values("order 4471 should ship soon") if s.value.type == "quantity"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("After Tuesday's incident we lowered the gateway timeout to 1200 ms.", "1200 ms"),
        ("On Monday the team pushed the launch back to 14:00.", "14:00"),
        ("The landlord put the rent up to €1,240.", "€1,240"),
    ],
)
def test_a_verb_of_change_names_the_value_it_moves_to(text: str, value: str) -> None:
    assert extract(text)[0].value.text == value


def test_an_old_value_is_never_read_across_a_colon() -> None:
    [claim] = extract("Good news from the annual review: they raised my base pay to $101,500.")
    assert claim.old_value is None
    assert claim.value.text == "$101,500"
    [moved] = extract("Releases moved from Tuesdays to Wednesdays.")
    assert moved.old_value is not None
    assert moved.old_value.text == "Tuesdays"


@pytest.mark.parametrize(
    "text",
    [
        "He won't quit, whatever happens.",
        "She is not giving up.",
        "Don't let anything stop you.",
        "我不会放弃的。",
    ],
)
def test_a_negated_ending_is_no_retirement(text: str) -> None:
    assert all(c.modality != "retired" for c in extract(text))


@pytest.mark.parametrize(
    "text",
    ["I don't have the cat anymore.", "I no longer use it.", "I sold the car.", "我不再用微信了。"],
)
def test_an_ending_retires(text: str) -> None:
    assert [c.modality for c in extract(text)] == ["retired"]


@pytest.mark.parametrize("text", ["Can you move my dentist appointment to Friday?", "能把会议改到周五吗？"])
def test_a_question_asserts_nothing(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize("text", ["They put the fee up to $45.", "They knocked the price down to 300 euros."])
def test_a_phrasal_verb_of_change_is_a_change(text: str) -> None:
    assert extract(text)[0].change
