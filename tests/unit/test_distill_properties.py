"""Properties of the heuristic distiller on any text (issue 29): a turn of up to 32,000 characters in any
script — long digit runs, repeated ids, bidi and zero-width characters, mixed CJK and Latin, emoji — never
raises, and each example ends within the profile's deadline (tests/conftest.py: `make test` runs 10,000
examples a property). What comes out is bounded: a unit's content fits a unit, an entity's name a name,
and no invisible character is left in either."""

from __future__ import annotations

import unicodedata
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.distill.heuristic import clean
from app.distill.heuristic.clauses import split_clauses
from app.distill.heuristic.context import slot_value
from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.entities import find_entities
from app.distill.heuristic.person import first_person_to_speaker
from app.distill.heuristic.slots import SLOTS, Slot
from app.distill.heuristic.statement import as_first_person, statement_graph
from app.distill.types import Candidate, Turn
from app.entities.types import NAME_MAX_CHARS
from app.text import split_sentences, strip_invisible
from tests.factories import context

T = TypeVar("T")
MAX_CHARS = 32_000
AT = datetime(2026, 11, 30, 10, tzinfo=UTC)
DISTILLER = HeuristicDistiller()
INVISIBLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e"

# What hostile turns are made of: words the rules look for, numbers, ids, contacts, names, CJK, emoji and
# invisible characters; pieces are joined in any order, some repeated into long runs.
FRAGMENTS = [
    *"I my My we budget is am live work at in by and , . ! ? ; : ' - ( ) $ € 元 @ + \n".split(" "),
    " ",
    "\n",
    *"9 12345 5000 8,000 1.5k 2026-12-04 ORD-12345 ORD- TCK-1 a@b.cn +1 555 0100 Friday tomorrow".split(),
    *"Lisbon Contoso Ana Lopez Inc University nurse teal vegan prefer love need deadline".split(),
    *"我 的 预算 是 在 北京 工作 喜欢 不超过 以内 三 十 万 块 明天 下周五 电话 张伟 腾讯 ，。".split(),
    "😀",
    "👩\u200d💻",
    "❤️",
    "🏽",
    "🇵🇹",
    *INVISIBLE,
    "\u0645\u0631\u062d\u0628\u0627",  # Arabic (right to left)
    "\u05e9\u05dc\u05d5\u05dd",  # Hebrew
    "\x1b[31m",
    "\t",
]
# Long runs: what used to fail (a 400-digit amount, a 600-letter name, ids repeated 1,500 times) or take
# quadratic time. One in a few thousand pieces is one, so a few examples in a thousand are long and
# 10,000 examples a property stay cheap; the rest are short.
LONG = [
    "9" * 400,
    "1" * 280,
    "C" + "o" * 600,
    "ORD-" + "12345-" * 1500,
    "9" * MAX_CHARS,
    "1 " * 16_000,
    "三" * 8_000,
    "我的预算是" * 2_000,
    "\u202e\u2066" * 4_000,
    "Ab " * 10_000,
    "a@" * 8_000,
]
MEDIUM = [text * 40 for text in ("9", "1,", "ORD-12345 ", "\u202e", "\u200b", "我", "😀", "Ab ", ", and ")]
PIECES = [*FRAGMENTS * 100, *MEDIUM * 20]
PIECES[len(PIECES) // 2 : len(PIECES) // 2] = LONG  # in the middle: no boundary a strategy favours
PIECES += [""] * (len(PIECES) // 4)  # a text of fewer pieces
# A few pieces around a run of any characters of any script (a fixed shape: each draw costs, and
# `make test` draws 10,000 examples a property).
piece = st.sampled_from(PIECES)
texts = st.tuples(piece, piece, st.text(max_size=6), piece, piece).map(
    lambda parts: "".join(parts)[:MAX_CHARS]
)
roles = st.sampled_from(["user", "user", "assistant", "tool", "system"])
speakers = st.none() | st.sampled_from(["Alice", "张伟", "Ana Lopez"]) | st.text(min_size=1, max_size=300)
tags = st.sampled_from([[], ["fact"], ["constraint.budget"], ["fact.contact"], ["episode"]])


def done(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that awaits nothing (the heuristic distiller's), without a loop."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value  # type: ignore[no-any-return]
    raise AssertionError("the heuristic distiller awaited something")


def visible(text: str) -> bool:
    return not any(unicodedata.category(c) == "Cf" and c != "\u200d" for c in text)


def assert_bounded(candidate: Candidate) -> None:
    assert 0 < len(candidate.content) <= 4000
    assert visible(candidate.content), ascii(candidate.content[:80])
    for entity in candidate.entities:
        assert 0 < len(entity.name) <= NAME_MAX_CHARS
    for relation in candidate.relations:
        assert 0 < len(relation.subject) <= NAME_MAX_CHARS
        assert 0 < len(relation.object) <= NAME_MAX_CHARS


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Load jieba's dictionary and the lemma tables first: an example's deadline is for the rules."""
    statement_graph("Carl works at Acme.", ["fact"])
    statement_graph("张伟在腾讯工作。", ["fact"])
    done(DISTILLER.distill(context(Turn(1, 1, "user", "我的预算是5000。I live in Lisbon.", None, AT))))


@given(st.lists(st.tuples(texts, roles, speakers), min_size=1, max_size=2))
def test_the_heuristic_distiller_distils_any_turns(said: list[tuple[str, str, str | None]]) -> None:
    turns = [
        Turn(seq=i, event_id=i, role=role, content=text, speaker=speaker, occurred_at=AT)
        for i, (text, role, speaker) in enumerate(said, start=1)
    ]
    result = done(DISTILLER.distill(context(*turns)))
    for candidate in result.candidates:
        assert_bounded(candidate)
        assert set(candidate.source_seqs) <= {t.seq for t in turns}
    episode = done(DISTILLER.task(context(*turns), 1)).episode
    assert episode is None or len(episode.summary) <= 2000


@given(texts, tags)
@example("'(NIL\x1b[31m" + "9" * 31_990, ["fact"])  # found by CI: a long run of digits took minutes
def test_the_statement_graph_of_any_text_is_bounded(text: str, tagged: list[str]) -> None:
    entities, relations = statement_graph(text, tagged or ["fact"])
    assert all(0 < len(e.name) <= NAME_MAX_CHARS for e in entities)
    assert all(len(r.subject) <= NAME_MAX_CHARS and len(r.object) <= NAME_MAX_CHARS for r in relations)
    _said, subject = as_first_person(text)
    assert subject is None or len(subject) <= len(text)


@given(texts, st.sampled_from(["en", "zh"]), tags, st.sampled_from(SLOTS))
def test_any_text_cleans_and_parses(text: str, language: str, tagged: list[str], slot: Slot) -> None:
    """Invisible characters go and nothing else does; entities are names; claims and slots parse."""
    out = strip_invisible(text)
    assert visible(out)
    assert strip_invisible(out) == out
    shown = [c for c in text if unicodedata.category(c) not in ("Cf", "Cc") or c in "\t\n"]
    assert [c for c in out if c != "\u200d"] == shown
    for entity in find_entities(text, language, tagged):
        assert 0 < len(entity.name) <= NAME_MAX_CHARS
        assert entity.name in text
    for sentence in split_sentences(text)[:20]:
        claims = [c.text for c in split_clauses(sentence)]
        assert claims
        assert all(claims)
        for claim in claims[:5]:
            value = slot_value(claim, language, slot, AT)
            assert value is None or value.strip()
            clean.strip_wrapping(claim)
            clean.is_small_talk(claim)
            first_person_to_speaker(claim, "The user", named=False)


def test_a_turn_starting_with_bidi_overrides_becomes_a_unit_without_them() -> None:
    turn = Turn(
        seq=1,
        event_id=1,
        role="user",
        content="\u202e\u2066" * 200 + "My budget is 5000.",
        speaker=None,
        occurred_at=AT,
    )
    [unit] = done(DISTILLER.distill(context(turn))).candidates
    assert unit.content == "The user's budget is 5000."


def test_a_joiner_inside_an_emoji_sequence_stays() -> None:
    assert strip_invisible("I am a 👩\u200d💻 and\u200d here") == "I am a 👩\u200d💻 and here"
