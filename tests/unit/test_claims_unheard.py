"""Mechanisms found on the twelfth session's unheard cases (invented statements, other words): a person's
own relation is narrowed by no scene, a building and its floor are one value, a question still asserts
what it says first, a number naming a thing is no value, a lower-case word after a capital's full stop
opens a sentence, and a Chinese retirement by its negated verb alone stops what that verb did."""

from __future__ import annotations

import pytest

from app.claims import conflicts, extract, find_values
from app.text import split_sentences


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Notes for the quarterly planning doc, my manager is Ines Okoro.", "en"),
        ("There was a reorg announced this morning. I report to Ines Okoro from Monday.", "en"),
        ("周报的格式先放一边，我的直属领导是孙悦。", "zh"),
    ],
)
def test_a_persons_own_relation_takes_no_scene(text: str, lang: str) -> None:
    [claim] = [c for c in extract(text, lang=lang) if c.head == "manager"]
    assert claim.attribute == "manager"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("我的工位在C座7楼靠窗。", "C座7楼"),
        ("地址是翠湖花园3号楼1502室", "翠湖花园3号楼1502室"),
        ("会议室在12层", "12层"),
    ],
)
def test_a_building_and_its_floor_are_one_value(text: str, value: str) -> None:
    assert value in [s.value.text for s in find_values(text)]


def test_a_question_asserts_what_it_says_before_it_asks() -> None:
    [claim] = extract("Anyway, 12% of every paycheck goes into the 401(k), is that enough at my age?")
    assert claim.value.text == "12%"  # (and "401(k)" names a plan: no number)
    [zh] = extract("我现在两只眼睛都是550度了，镜片是不是得换厚一点的？", lang="zh")
    assert zh.value.number == 550
    assert extract("Can you move the dentist to Friday, or is that too late?") == []
    assert extract("If I take the Pro plan, would it be 30 a month?") == []


def test_a_capitals_full_stop_before_a_lower_case_word_ends_a_sentence() -> None:
    assert split_sentences("It's actually size M. that's why it pinches") == [
        "It's actually size M.",
        "that's why it pinches",
    ]
    assert split_sentences("I met J. Smith at the gym.") == ["I met J. Smith at the gym."]


def test_a_chinese_retirement_by_its_negated_verb_stops_what_the_verb_did() -> None:
    [old] = extract("我每天睡前喝一杯热牛奶", lang="zh")
    new = extract("医生说没必要，我已经不喝了", lang="zh")[-1]
    verdict = conflicts(old, new)
    assert (verdict.action, verdict.strong) == ("retire", False)
    [other] = extract("我每天早上吃一个苹果", lang="zh")
    assert conflicts(other, new).action == "keep"
