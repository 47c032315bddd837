"""A unit says something on its own (issue 16, "self-contained"): a mention cut out of a chatty turn
("I'm lucky to have my husband and kids;", "I love how it's both …") stays with the rest of its turn,
a guess about the other ("That must have been awesome") is no requirement, the question an answer
quotes is not said twice, and a long turn is cut into chunks of about the same length. Claims that
stand alone (a budget, an allergy, an id) still do, in both languages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.person import first_person_to_speaker
from app.distill.types import Candidate, DistillContext, Turn

T0 = datetime(2026, 11, 30, 10, tzinfo=UTC)
DISTILLER = HeuristicDistiller()


def said(text: str, speaker: str | None = None, role: str = "user") -> list[Candidate]:
    turn = Turn(1, 101, role, text, speaker, T0)
    return DISTILLER.distill_turn(turn, T0)


async def dialogue(lines: list[tuple[str, str]]) -> list[Candidate]:
    turns = [
        Turn(seq, 100 + seq, "user", text, speaker, T0 + timedelta(seconds=5 * seq))
        for seq, (speaker, text) in enumerate(lines, 1)
    ]
    return (await DISTILLER.distill(DistillContext("bank", "session", turns, UTC))).candidates


# A mention (or a claim that points back at the turn) with more said around it: one unit, all of it.
IN_CONTEXT = [
    (
        "Thanks, Caroline! I'm lucky to have my husband and kids; they keep me motivated. "
        "We spent Sunday at the lake, swimming and grilling.",
        "Melanie",
        ["husband and kids", "lake"],
    ),
    (
        "Thanks, Caroline! It has really helped me out. I love how it's both a creative outlet and a "
        "form of therapy.",
        "Melanie",
        ["helped", "creative outlet"],
    ),
    (
        "Yeah, I made this bowl in my class. It took some work, but I'm pretty proud of it.",
        "Melanie",
        ["bowl", "proud"],
    ),
    ("我和我老婆上周去了杭州。那边的西湖真的很美，我们拍了很多照片。", "李娜", ["老婆", "西湖"]),
]


@pytest.mark.parametrize(("text", "speaker", "kept"), IN_CONTEXT)
def test_a_mention_stays_with_the_turn_that_says_more(text: str, speaker: str, kept: list[str]) -> None:
    [unit] = said(text, speaker)
    assert unit.tags[0] in ("episode", "fact.event"), unit
    for words in kept:
        assert words in unit.content


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("My sister lives in Boston.", "fact.family"),  # said on its own, the mention tags the turn
        ("I made this bowl in my class.", "fact.education"),
        ("我爸爸是医生。", "fact.family"),
    ],
)
def test_a_mention_said_on_its_own_is_tagged(text: str, tag: str) -> None:
    [unit] = said(text)
    assert unit.tags == [tag]


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        (
            "I want a new laptop for school. My budget is 5000 and I really need it soon.",
            ["constraint.budget"],
        ),
        ("We had a lovely dinner with friends. I'm allergic to peanuts, by the way.", ["constraint.diet"]),
        ("我想配一台新电脑。我对花生过敏。", ["constraint.diet"]),
    ],
)
def test_a_claim_of_its_own_still_stands_alone(text: str, tags: list[str]) -> None:
    units = said(text)
    assert tags in [u.tags for u in units]
    assert len(units) == 2


@pytest.mark.parametrize(
    "text",
    [
        "That must have been awesome.",
        "You must be so proud of them!",
        "Must have been traumatizing for you guys.",
        "Wow, that must've been breathtaking!",
    ],
)
def test_a_guess_about_the_other_is_no_requirement(text: str) -> None:
    assert all(not u.tags[0].startswith("constraint") for u in said(text, "Caroline"))


def test_a_requirement_is_still_one() -> None:
    [unit] = said("The hotel must be near the airport.")
    assert unit.tags[0].startswith("constraint")


async def test_the_question_an_answer_quotes_is_not_said_twice() -> None:
    units = await dialogue(
        [
            ("Caroline", "I finished a new painting of the lake last week. Which race are you training for?"),
            ("Melanie", "The Boston marathon in April, my first one."),
        ]
    )
    [asker] = [u for u in units if u.source_seqs == [1]]
    [answer] = [u for u in units if u.source_seqs == [1, 2]]
    assert "painting" in asker.content
    assert "Which race" not in asker.content
    assert "Which race are you training for?" in answer.content


def test_a_long_turn_is_cut_into_chunks_of_about_the_same_length() -> None:
    sentences = [f"On day {n} we walked along the river to the old mill and back again." for n in range(1, 9)]
    units = said(" ".join(sentences), "Ana")
    lengths = [len(u.content) for u in units]
    assert len(units) >= 2
    assert max(lengths) - min(lengths) < 100  # no one-sentence remainder
    assert sum(u.content.count("old mill") for u in units) == 8  # nothing lost, nothing said twice


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I truly felt the power of it.", "Maria truly felt the power of it."),
        ("I finally took a break.", "Maria finally took a break."),
        ("I reply fast.", "Maria replies fast."),
    ],
)
def test_an_adverb_after_i_is_not_inflected(text: str, expected: str) -> None:
    assert first_person_to_speaker(text, "Maria", True) == expected
