"""What was told once (an episode, a life event) is true of its moment: a later statement ends it only by
naming its value, however much that statement speaks of change; a life event that announces a change
still ends an older lasting fact."""

from __future__ import annotations

from app.claims import extract
from app.resolve.claims import decide


def related_frames(a: str, b: str) -> float | None:
    return 0.5


def test_an_old_happening_is_not_ended_by_a_change_word_alone() -> None:
    told = extract("The user's pottery class was on Friday.")
    later = extract("The user changed the book club to Sunday.")
    assert decide(later, [("x", told)], related_frames, frozenset({"x"})) is None


def test_an_old_happening_is_ended_by_a_statement_naming_its_value() -> None:
    told = extract("The user's pottery class was on Friday.")
    later = extract("The user moved the pottery class from Friday to Sunday.")
    decision = decide(later, [("x", told)], related_frames, frozenset({"x"}))
    assert decision is not None
    assert decision.candidate_id == "x"


def test_a_life_event_announcing_a_change_ends_a_lasting_fact() -> None:
    lasting = extract("I live in Paris.")
    event = extract("I moved to Lyon last weekend.")
    decision = decide(event, [("x", lasting)], related_frames, frozenset({None}))
    assert decision is not None
    assert decision.candidate_id == "x"
