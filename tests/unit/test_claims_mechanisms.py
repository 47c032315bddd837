"""Claims mechanisms of the eighteenth session, on invented statements: a side naming nothing the other
does not say is no other attribute; an additive Chinese word stands alone; a pronoun is a thing a verb is
said of; a relative is named beside the word; a Chinese retirement names its kind past its adverbs; a
Chinese habitual choice said again replaces the last; a clause said again with one name swapped replaces
it; identifiers and small units are typed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.claims import conflicts, extract, find_values


def _actions(old: str, new: str, lang: str = "en", similarity: float = 0.5) -> set[str]:
    return {
        conflicts(o, n, frame_similarity=similarity).action
        for o in extract(old, lang=lang)
        for n in extract(new, lang=lang)
    }


def test_the_additive_word_stands_alone_in_chinese() -> None:
    assert not extract("还款日改到每月20号了", lang="zh")[0].additive  # 还款: to repay, no "also"
    assert not extract("也许下周再说", lang="zh")[0].additive
    assert extract("我还有一辆自行车", lang="zh")[0].additive
    assert extract("我们也在用飞书", lang="zh")[0].additive


DECIDED = yaml.safe_load((Path(__file__).parent / "claims_mechanisms.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", DECIDED, ids=[c["case"] for c in DECIDED])
def test_what_a_new_statement_does_to_an_old_one(case: dict[str, str]) -> None:
    actions = _actions(case["old"], case["new"], lang=case["lang"])
    action = case["action"]
    assert (action in actions) if action != "keep" else actions <= {"keep"}, actions


def test_a_side_naming_nothing_the_other_does_not_say_is_one_attribute() -> None:
    old = "For the conference I've got an aisle seat booked."
    assert "supersede" in _actions(old, "Switched the seat to a window.", similarity=0.6)


@pytest.mark.parametrize(
    ("text", "kind", "said"),
    [
        ("The booking reference is QX-20931.", "id", "QX-20931"),  # a full stop ends it, no decimal
        ("医生把剂量加到100微克了", "quantity", "100微克"),
        ("she takes 250 mcg a day", "quantity", "250 mcg"),
        ("给宝宝冲120毫升", "quantity", "120毫升"),
    ],
)
def test_identifiers_and_small_units_are_typed(text: str, kind: str, said: str) -> None:
    assert [(s.value.type, s.value.text) for s in find_values(text)] == [(kind, said)]
