"""Corrections told over sentences (invented statements): a sentence that only owns an error states
nothing and makes the next one a correction; a clause denying the speaker's own earlier words ("not what I
said before", 不是我之前说的) says no more than that the clause before corrects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.sizes import only_owns_error
from app.distill.types import Turn

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def units(text: str) -> list[tuple[list[str], str]]:
    greeting = Turn(1, 1, "assistant", "Hi, what can I do for you?", None, T0)
    found = HeuristicDistiller().distill_turn(Turn(2, 2, "user", text, None, T0), T0, recent=[greeting])
    return [(list(u.tags), u.content) for u in found]


@pytest.mark.parametrize(
    ("sentence", "language", "only"),
    [
        ("Sorry, just realized I typed my shoe size wrong.", "en", True),
        ("Hold on, I misspoke earlier.", "en", True),
        ("我刚才说错了。", "zh", True),
        ("My bad, I forgot to call the plumber.", "en", False),  # owns an error and says what was done
        ("I got the date wrong, it's the 14th.", "en", False),  # the correction is in the sentence
        ("Sorry, I meant oat milk, not soy.", "en", False),
        ("Scratch that, it's oat milk I drink.", "en", False),
        ("我说错了，是周三", "zh", False),
    ],
)
def test_a_sentence_that_only_owns_an_error(sentence: str, language: str, only: bool) -> None:
    assert only_owns_error(sentence, language) is only


@pytest.mark.parametrize(
    "text",
    [
        "Sorry, just realized I typed my shoe size wrong. It's 44, not what I said before.",
        "Oops, I mixed that up. My locker is number 12.",
        "不好意思，我记错了。柜子是12号的，不是我之前说的。",
    ],
)
def test_the_sentence_after_an_owned_error_is_the_correction_alone(text: str) -> None:
    [(tags, content)] = units(text)
    assert "correction" in tags
    assert "12" in content or "44" in content
