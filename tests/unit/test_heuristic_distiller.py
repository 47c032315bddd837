"""The heuristic distiller, table-driven: `distill_cases.yaml` holds the utterances and what each one must
become (its format is described at the top of that file). Here: the checks of that table, the seed
conversation as one context in each language, and the helpers underneath (first person → speaker,
relative dates)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.distill.dates import resolve_dates
from app.distill.heuristic.distiller import HeuristicDistiller, first_person_to_speaker
from app.distill.types import Candidate, DistillContext, Turn
from app.text import has_cjk

TABLE = yaml.safe_load(Path(__file__).with_name("distill_cases.yaml").read_text(encoding="utf-8"))
EVENT_TIME = datetime.fromisoformat(TABLE["event_time"])
BANDS: dict[str, tuple[float, float]] = {name: (lo, hi) for name, (lo, hi) in TABLE["bands"].items()}
CASES: list[dict[str, Any]] = TABLE["cases"]

CASE_KEYS = {"id", "text", "role", "speaker", "expected"}
UNIT_KEYS = {
    "tags",
    "confidence",
    "importance",
    "entities",
    "content_contains",
    "content_excludes",
    "relations",
}
DEFAULT_SPEAKER = {("en", "user"): "The user", ("en", "assistant"): "The assistant", ("zh", "user"): "用户"}
DEFAULT_SPEAKER[("zh", "assistant")] = "助手"
ASSISTANT_TAGS = {"task_state", "fact.id", "episode"}
# "I", "my", "me" (any case but "I") and 我 (not 我们) must all have become the speaker
FIRST_PERSON = {
    "en": re.compile(r"(?<![\w'])(?:I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself)\b"),
    "zh": re.compile(r"我(?!们)"),
}

DISTILLER = HeuristicDistiller()


def language(case: dict[str, Any]) -> str:
    return str(case["id"]).split("-", 1)[0]


def turn(
    content: str, *, seq: int = 1, role: str = "user", speaker: str | None = None, at: datetime = EVENT_TIME
) -> Turn:
    return Turn(seq=seq, event_id=1000 + seq, role=role, content=content, speaker=speaker, occurred_at=at)


def describe(units: list[Candidate]) -> str:
    return "\n".join(
        f"  {u.tags} confidence={u.confidence} importance={u.importance} {u.content!r}"
        f" entities={[(e.name, e.type) for e in u.entities]}"
        f" relations={[(r.subject, r.relation, r.object) for r in u.relations]}"
        for u in units
    )


def band(spec: str | list[float]) -> tuple[float, float]:
    return BANDS[spec] if isinstance(spec, str) else (spec[0], spec[1])


# --- the table ---------------------------------------------------------------------------------


def test_the_table_covers_both_languages_and_is_well_formed() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "case ids are unique"
    counts = Counter(language(case) for case in CASES)
    assert counts["en"] >= 60
    assert counts["zh"] >= 40
    for case in CASES:
        assert set(case) <= CASE_KEYS, case["id"]
        assert language(case) == ("zh" if has_cjk(case["text"]) else "en"), case["id"]
        expected = case["expected"]
        if isinstance(expected, dict):
            assert expected == {"dropped": True}, case["id"]
            continue
        for unit in expected:
            assert set(unit) <= UNIT_KEYS, case["id"]
            assert {"tags", "confidence"} <= set(unit), case["id"]
            band(unit["confidence"])  # a known band or [lo, hi]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    role = case.get("role", "user")
    units = DISTILLER.distill_turn(turn(case["text"], role=role, speaker=case.get("speaker")), EVENT_TIME)
    expected = case["expected"]
    if isinstance(expected, dict):
        assert units == [], f"expected nothing, got:\n{describe(units)}"
        return
    assert [u.tags for u in units] == [e["tags"] for e in expected], f"got:\n{describe(units)}"
    speaker = case.get("speaker") or DEFAULT_SPEAKER[(language(case), role)]
    for unit, want in zip(units, expected, strict=True):
        got = describe([unit])
        lo, hi = band(want["confidence"])
        assert lo <= unit.confidence <= hi, f"confidence not in {want['confidence']}:\n{got}"
        if "importance" in want:
            lo, hi = band(want["importance"])
            assert lo <= unit.importance <= hi, f"importance not in {want['importance']}:\n{got}"
        entities = {(e.name, e.type) for e in unit.entities}
        for entity in want.get("entities", []):
            assert (str(entity["name"]), entity["type"]) in entities, f"missing entity {entity}:\n{got}"
        for text in want.get("content_contains", []):
            assert text in unit.content, f"content lacks {text!r}:\n{got}"
        for text in want.get("content_excludes", []):
            assert text not in unit.content, f"content has {text!r}:\n{got}"
        if "relations" in want:
            if not want["relations"]:
                assert unit.relations == [], f"expected no relation:\n{got}"
            for relation in want["relations"]:
                assert any(
                    all(getattr(r, key) == str(value) for key, value in relation.items())
                    for r in unit.relations
                ), f"missing relation {relation}:\n{got}"
        # what holds for every unit
        assert unit.source_seqs == [1]
        assert speaker.lower() in unit.content.lower(), f"the unit does not say whose it is:\n{got}"
        assert not FIRST_PERSON[language(case)].search(unit.content), f"first person left:\n{got}"
        if role == "assistant":
            assert set(unit.tags) <= ASSISTANT_TAGS, f"a user-only rule applied to the assistant:\n{got}"


# --- the seed conversation, as the service hands it over ----------------------------------------

SEED = {
    "en": (
        "my budget is 5000",
        "if the configuration can be upgraded I can go to 8000",
        "can the price we discussed be negotiated?",
    ),
    "zh": ("我的预算是5000", "如果配置能升级的话，我可以加到8000", "我们之前谈的价格能再便宜一点吗？"),
}


def amounts(unit: Candidate) -> set[str]:
    return {e.name for e in unit.entities if e.type == "amount"}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_seed_conversation(lang: str) -> None:
    turns = [
        turn(text, seq=seq, at=EVENT_TIME + timedelta(minutes=seq)) for seq, text in enumerate(SEED[lang], 1)
    ]
    result = await HeuristicDistiller().distill(DistillContext("bank", "session", turns, UTC))

    by_seq = {seq: [u for u in result.candidates if u.source_seqs == [seq]] for seq in (1, 2, 3)}
    assert sum(map(len, by_seq.values())) == len(result.candidates)
    [budget], [raised], question = by_seq[1], by_seq[2], by_seq[3]
    # 1: the budget; 2: a budget too, but conditional, so less certain
    assert budget.tags == ["constraint.budget"]
    assert "5000" in amounts(budget)
    assert raised.tags == ["constraint.budget"]
    assert "8000" in amounts(raised)
    assert raised.confidence < budget.confidence
    assert BANDS["hedged"][0] <= raised.confidence <= BANDS["hedged"][1]
    # 3: a question about the price states no new budget
    assert [u.tags for u in question] == [["episode"]]
    assert not any("constraint.budget" in u.tags for u in question)


async def test_dates_resolve_in_the_context_timezone() -> None:
    late_evening_utc = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)  # already 1 December in Shanghai
    context = DistillContext(
        "bank",
        "session",
        [turn("I need the contract signed by tomorrow.", at=late_evening_utc)],
        timezone(timedelta(hours=8)),
    )
    [unit] = (await HeuristicDistiller().distill(context)).candidates
    assert unit.tags == ["constraint.time"]
    assert "by tomorrow (2026-12-02)" in unit.content


# --- first person → speaker ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "speaker", "named", "expected"),
    [
        ("I prefer my tea hot", "Alice", True, "Alice prefers their tea hot"),
        ("I prefer my tea hot", "The user", False, "The user prefers their tea hot"),
        ("I really like jazz", "Alice", True, "Alice really likes jazz"),
        (
            "I'm allergic to nuts and I've told the waiter",
            "Bob",
            True,
            "Bob is allergic to nuts and Bob has told the waiter",
        ),
        ("I'd rather fly, I'll book it", "Bob", True, "Bob would rather fly, Bob will book it"),
        ("I do not like it", "The user", False, "The user does not like it"),
        ("I can't eat gluten", "The user", False, "The user can't eat gluten"),
        ("I went there yesterday", "Caroline", True, "Caroline went there yesterday"),
        ("My wife and I have two kids", "Bob", True, "Bob's wife and Bob have two kids"),
        ("I like tea, and I drink it daily", "Bob", True, "Bob likes tea, and Bob drinks it daily"),
        ("Call me at 5, the book is mine", "The user", False, "Call the user at 5, the book is theirs"),
        ("我喜欢喝茶", "张伟", True, "张伟喜欢喝茶"),
        ("我们和我的朋友", "用户", False, "我们和用户的朋友"),
    ],
)
def test_first_person_to_speaker(text: str, speaker: str, named: bool, expected: str) -> None:
    assert first_person_to_speaker(text, speaker, named) == expected


# --- relative dates -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rewritten", "resolved"),
    [
        ("See you tomorrow.", "tomorrow (2026-12-01)", "2026-12-01"),
        ("Send it by Friday.", "by Friday (2026-12-04)", "2026-12-04"),
        ("Let's talk next week.", "next week (the week of 2026-12-07)", "the week of 2026-12-07"),
        ("I will pay in 3 days.", "in 3 days (2026-12-03)", "2026-12-03"),
        ("Reply within 3 days.", "within 3 days (2026-12-03)", "2026-12-03"),
        ("I paid 3 days ago.", "3 days ago (2026-11-27)", "2026-11-27"),
        ("I saw her last Tuesday.", "last Tuesday (2026-11-24)", "2026-11-24"),
        # a bare weekday: the coming one, or the last one when the sentence is in the past tense
        ("The party is on Saturday.", "Saturday (2026-12-05)", "2026-12-05"),
        ("The party was on Saturday.", "Saturday (2026-11-28)", "2026-11-28"),
        ("It has to be delivered by Friday.", "Friday (2026-12-04)", "2026-12-04"),
        ("明天见", "明天（2026-12-01）", "2026-12-01"),
        ("下周五之前交", "下周五（2026-12-11）", "2026-12-11"),
        ("三天前我付过钱", "三天前（2026-11-27）", "2026-11-27"),
        ("三天内答复", "三天内（2026-12-03）", "2026-12-03"),
        ("12月5日开会", "12月5日（2026-12-05）", "2026-12-05"),
        ("今晚吃火锅", "今晚（2026-11-30）", "2026-11-30"),
        ("上周二去看了牙医", "上周二（2026-11-24）", "2026-11-24"),
        ("周六去爬山", "周六（2026-12-05）", "2026-12-05"),
        ("我周六去过了", "周六（2026-11-28）", "2026-11-28"),
    ],
)
def test_resolve_dates(text: str, rewritten: str, resolved: str) -> None:
    content, found = resolve_dates(text, EVENT_TIME)
    assert rewritten in content
    assert [d.text for d in found] == [resolved]


def test_resolve_dates_leaves_text_without_dates_alone() -> None:
    assert resolve_dates("My budget is 5000.", EVENT_TIME) == ("My budget is 5000.", [])
    assert resolve_dates("我对花生过敏", EVENT_TIME) == ("我对花生过敏", [])
