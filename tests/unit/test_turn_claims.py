"""A user turn's claims read once, whole, and given to the units the heuristic distiller cuts from it
(app/distill/heuristic/turn_claims.py), and a claim holding an attribute carried from the clause before it
compared as that attribute; a budget narrowed by the thing named before it (invented statements)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from app.claims import conflicts, extract
from app.claims.stored import load_all
from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.turn_claims import claims_from_turn
from app.distill.taxonomy import bank_taxonomy
from app.distill.types import Candidate, DistillContext, Turn
from app.schemas.banks import BankConfig

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def distilled(*said: str) -> list[Candidate]:
    """The units of a conversation of user turns, each answered by the assistant."""
    texts = [t for s in said for t in (s, "Noted.")]
    turns = [
        Turn(i + 1, i + 1, "user" if i % 2 == 0 else "assistant", t, None, T0 + timedelta(minutes=i), {})
        for i, t in enumerate(texts)
    ]
    context = DistillContext("b", "s", turns, UTC, [], bank_taxonomy(BankConfig().tags))
    return asyncio.run(HeuristicDistiller().distill(context)).candidates


def test_a_clause_unit_carries_the_attribute_its_turn_says_before_it() -> None:
    turn = "My gym membership went up, it's 55 euros a month now."
    [own] = extract("it's 55 euros a month now.")
    assert own.attribute == ""  # read alone, the clause names no attribute
    clause = "it's 55 euros a month now."
    [carried] = load_all(claims_from_turn(turn, clause, "It's 55 euros a month now.", ["fact"]))
    assert carried.attribute == "gym_membership"
    assert carried.value.text == "55 euros"


def test_a_unit_that_brings_words_from_other_turns_reads_its_own_text() -> None:
    # a correction the distiller rewrote with the fact it corrects ("savings goal" is said in another turn)
    turn = "Scratch that, $6,000 is the real number."
    rewritten = "The user's savings goal for this year is $6,000."
    assert claims_from_turn(turn, "$6,000 is the real number.", rewritten, ["correction"]) is None
    # the speaker's name and the distiller's date notes are no words from elsewhere
    said = "I moved the dentist to Friday."
    assert claims_from_turn(said, said, "The user moved the dentist to Friday (2026-12-04).", ["fact"])


def test_the_distiller_gives_each_unit_of_a_user_turn_the_claims_of_its_clause() -> None:
    units = distilled("My phone plan is 25 euros a month.", "My gym membership went up, it's 55 euros now.")
    by_value = {c.value.text: c for u in units if u.claims for c in load_all(u.claims)}
    assert by_value["55 euros"].attribute == "gym_membership"  # its clause names no membership itself
    for unit in units:
        assert unit.claims is None or all(c.value.text in unit.content for c in load_all(unit.claims))
    # an assistant's turn is read from its units' text when resolution takes them
    assert all(u.claims is None for u in units if "Noted" in u.content)


def test_a_carried_attribute_is_the_attribute_it_was_carried_from() -> None:
    [old] = extract("My gym membership is 40 euros a month.")
    [phone] = extract("My phone plan is 25 euros a month.")
    [new] = load_all(
        claims_from_turn(
            "My gym membership went up, it's 55 euros a month now.",
            "it's 55 euros a month now.",
            "It's 55 euros a month now.",
            ["fact"],
        )
    )
    verdict = conflicts(old, new, frame_similarity=0.6)
    assert (verdict.action, verdict.strong) == ("supersede", True)
    assert not conflicts(phone, new, frame_similarity=0.6).strong  # another thing: a weak tie at most
    # a clause that says its own nouns is compared as before: "annual leave" and "volunteering leave"
    [annual] = extract("I get 18 days of annual leave this year.")
    [volunteering] = extract("There are 5 days of paid volunteering leave I can take.")
    assert conflicts(annual, volunteering, frame_similarity=0.6).action == "keep"


def test_a_budget_is_narrowed_by_the_thing_named_before_it_and_not_by_a_word_for_money() -> None:
    # the thing bought, named (a product, 扫地机), narrows the budget said after it; not the verb buying it
    assert [c.attribute for c in extract("想买台扫地机，预算2000以内。")][-1] == "budget.扫地机"
    [_, budget] = extract("I want to buy a MacBook, my budget is 2000.")
    assert budget.attribute == "budget.macbook"
    # money is the budget's own word: "钱的话可以提到4500了" tagged a budget is the budget
    [raised] = extract("钱的话可以提到4500了。", tags=("constraint.budget",))
    assert raised.attribute == "budget"


def test_a_word_for_a_kind_of_relative_names_the_one_said_before() -> None:
    [school] = extract("我女儿在阳光小学上二年级。")
    [moved] = extract("孩子这学期转学了，换成了离家近的育英小学。")[-1:]
    assert (school.subject, moved.subject) == ("女儿", "孩子")
    assert conflicts(school, moved, frame_similarity=0.9).reason != "another subject"
    [sister] = extract("My sister's school is Hillcrest.")
    [kid] = extract("My kid's school is Oakridge now.")
    assert conflicts(sister, kid, frame_similarity=0.9).reason == "another subject"


def test_a_turn_longer_than_a_conversational_one_is_read_unit_by_unit() -> None:
    """A pasted document is not read whole (its cost grows with its length): its units read their own text."""
    from app.distill.heuristic.turn_claims import READ_WHOLE_CHARS, claims_from_turn

    clause = "My budget is 5000."
    turn = clause + " " + "The weather was fine that day. " * (READ_WHOLE_CHARS // 30)
    assert claims_from_turn(clause, clause, "The user's budget is 5000.", ["constraint.budget"]) is not None
    assert claims_from_turn(turn, clause, "The user's budget is 5000.", ["constraint.budget"]) is None
