"""Claims mechanisms of the eighteenth session, on invented statements: a side naming nothing the other
does not say is no other attribute, an additive Chinese word stands alone, a pronoun is a thing a verb is
said of, a relative is named beside the word, and a Chinese retirement names its kind past its adverbs."""

from __future__ import annotations

import pytest

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


def test_a_pronoun_is_the_thing_a_verb_is_said_of() -> None:
    # "it opens" is said of the pool as "the pool opens" is, not of the speaker
    assert "supersede" in _actions("The pool at my gym opens at 7am.", "Actually it opens at 6:30 now.")
    # the speaker and a thing, one verb: two attributes still
    assert _actions("I weigh 70 kg.", "My backpack weighs 9 kg.") == {"keep"}


def test_a_relative_named_beside_the_word_is_one_person() -> None:
    old, new = "My sister Nadia lives in Lyon.", "Nadia just moved over to Marseille."
    assert "supersede" in _actions(old, new)
    # another person of the same name is not said beside the word
    assert _actions("My sister lives in Lyon.", "Nadia just moved over to Marseille.") == {"keep"}


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ("我们家有辆二手的思域", "不过车上周已经卖掉了", "retire"),  # 有辆: counted without its numeral
        ("我们在郊区有套小公寓", "其实房子去年就卖了", "retire"),  # 套 counts homes only
        ("我们家有辆二手的思域", "不过车位上周已经退了", "keep"),  # 车位: another thing of the kind
        ("我养了只英短", "反正狗已经送人了", "keep"),  # 只 counts dogs and cats: a clause must name which
    ],
)
def test_a_chinese_retirement_names_its_kind_past_its_adverbs(old: str, new: str, action: str) -> None:
    actions = _actions(old, new, lang="zh")
    assert (action in actions) if action != "keep" else actions <= {"keep"}, actions


def test_a_side_naming_nothing_the_other_does_not_say_is_one_attribute() -> None:
    old = "For the conference I've got an aisle seat booked."
    assert "supersede" in _actions(old, "Switched the seat to a window.", similarity=0.6)
    # narrowed by a noun the other does not say: two budgets
    assert _actions("My budget for the phone is $700.", "I raised my headphone budget to $200.") == {"keep"}


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


def test_a_dose_in_micrograms_changes() -> None:
    assert "supersede" in _actions("我每天吃50微克的优甲乐", "剂量加到75微克了", lang="zh")


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ("我买菜一般都在楼下菜市场", "菜我平时都在网上买", "supersede"),
        ("我主力机是华为Mate 40", "我平时用的手机是小米13", "supersede"),
        ("我平时在城东办公室上班", "这周临时在城西办公室", "keep"),  # for a while only: an exception
        ("我平时用微信付款", "房租我一般都用支付宝转", "keep"),  # nothing of their narrowing words in common
    ],
)
def test_a_chinese_habitual_choice_said_again_replaces_the_last(old: str, new: str, action: str) -> None:
    actions = _actions(old, new, lang="zh")
    assert (action in actions) if action != "keep" else actions <= {"keep"}, actions


@pytest.mark.parametrize(
    ("old", "new", "lang", "action"),
    [
        (
            "The dryer we're getting is a Bosch, 9 kg.",
            "The dryer we're getting is a Miele, 9 kg.",
            "en",
            "supersede",
        ),
        ("要买的冰箱是西门子的500升对开门。", "要买的冰箱是美的的500升对开门。", "zh", "supersede"),
        ("I run 5 km every Monday.", "I swim 5 km every Monday.", "en", "keep"),  # a verb is no name
    ],
)
def test_a_clause_said_again_with_another_name_replaces_it(
    old: str, new: str, lang: str, action: str
) -> None:
    actions = _actions(old, new, lang=lang)
    assert (action in actions) if action != "keep" else actions <= {"keep"}, actions
