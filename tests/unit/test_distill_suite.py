"""The labelled distillation suite (bench/suites/distill/, issue 32) has the shape its report relies
on, and the scorer of `python -m bench.distill_quality` scores hand-made unit lists as defined. Today's
distiller's figures are measured by the program, not asserted here."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bench.distill_quality.markers import unclean
from bench.distill_quality.score import Tally, Unit, score_conversation
from bench.distill_quality.suite import Conversation, SuiteError, half, load, parse_conversation

SUITE = load()


def test_the_suite_is_large_enough_and_in_both_languages_about_equally() -> None:
    turns = Counter({lang: sum(len(c.turns) for c in SUITE if c.lang == lang) for lang in ("en", "zh")})
    assert sum(turns.values()) >= 300
    assert min(turns.values()) / max(turns.values()) >= 0.9, turns


def test_the_suite_has_seven_kinds_of_conversation_in_each_language() -> None:
    for lang in ("en", "zh"):
        kinds = {c.kind for c in SUITE if c.lang == lang}
        assert {"support", "coding", "assistant", "sales", "travel", "health", "itops"} <= kinds, kinds


def test_the_labels_cover_what_the_report_measures() -> None:
    turns = [t for c in SUITE for t in c.turns]
    claims = [claim for t in turns for claim in t.claims]
    assert len({c.id for c in SUITE}) == len(SUITE)
    assert sum(t.noise for t in turns) >= 60
    assert sum(t.compound for t in turns) >= 60
    assert sum(t.role == "tool" and not t.noise for t in turns) >= 20
    assert sum(t.role == "assistant" and not t.noise for t in turns) >= 20
    assert sum(claim.link is not None for claim in claims) >= 6
    assert sum(claim.date is not None for claim in claims) >= 15
    assert {claim.base for claim in claims} == {
        "fact",
        "preference",
        "constraint",
        "task_state",
        "correction",
        "episode",
    }


def test_the_split_is_stable_and_roughly_balanced() -> None:
    assert half("en-support-headphones") == half("en-support-headphones")
    for lang in ("en", "zh"):
        by_half = Counter()
        for c in SUITE:
            if c.lang == lang:
                by_half[c.half] += len(c.turns)
        total = sum(by_half.values())
        assert min(by_half["dev"], by_half["holdout"]) / total >= 0.35, (lang, by_half)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"noise": True}, "a noise turn has no claims"),
        ({"claims": [{"kind": "opinion", "must": ["x"]}]}, "unknown kind"),
        ({"claims": [{"kind": "fact", "must": []}]}, "needs `must`"),
        ({"compound": True}, "compound"),
        ({"role": "narrator"}, "role"),
    ],
)
def test_a_broken_label_is_refused(change: dict[str, Any], message: str) -> None:
    turn = {"role": "user", "text": "My budget is 900.", "noise": False}
    turn["claims"] = [{"kind": "constraint.budget", "must": ["900"]}]
    raw = {"id": "en-x", "kind": "sales", "lang": "en", "date": "2026-03-11T09:00:00+00:00"}
    with pytest.raises(SuiteError, match=message):
        parse_conversation({**raw, "turns": [{**turn, **change}]})


def conversation(*turns: dict[str, Any]) -> Conversation:
    return parse_conversation(
        {
            "id": "en-test",
            "kind": "support",
            "lang": "en",
            "date": "2026-03-11T09:00:00+00:00",
            "turns": list(turns),
        }
    )


COMPLAINT = {
    "role": "user",
    "text": "I want to complain about a late delivery, my order number is QX-501.",
    "noise": False,
    "compound": True,
    "claims": [
        {"kind": "fact.event", "must": ["late delivery"], "link": "QX-501"},
        {"kind": "fact.id", "must": ["QX-501"], "link": "QX-501"},
    ],
}
GREETING = {"role": "user", "text": "Hello!", "noise": True}
SHIPPED = {
    "role": "tool",
    "text": "orders.get: QX-501 shipped",
    "noise": False,
    "claims": [{"kind": "task_state", "must": ["shipped"]}],
}


def unit(content: str, tags: tuple[str, ...], seqs: tuple[int, ...]) -> Unit:
    return Unit(content, tags, seqs)


def rates(tally: Tally) -> dict[str, tuple[int, int]]:
    return {m: (hit, total) for m, (hit, total) in tally.counts.items()}


def test_the_scorer_rewards_split_linked_clean_units_of_the_right_kind() -> None:
    conv = conversation(GREETING, COMPLAINT, SHIPPED)
    units = [
        unit("The user complains about a late delivery of order QX-501.", ("fact.event",), (2,)),
        unit("The user's order number is QX-501.", ("fact.id",), (2,)),
        unit("Order QX-501 has shipped.", ("task_state",), (3,)),
    ]
    tally, failures = score_conversation(conv, units)
    counts = rates(tally)
    assert counts["noise_precision"] == (1, 1)
    assert counts["noise_recall"] == (1, 1)
    assert counts["atomic"] == (1, 1)
    assert counts["link_kept"] == (1, 1)
    assert counts["clean"] == (3, 3)
    assert counts["kind"] == (3, 3)
    assert counts["subtag"] == (2, 2)
    assert counts["kept_assistant_tool"] == (1, 1)
    assert failures == []


def test_the_scorer_faults_a_merged_unclean_unit_a_lost_link_and_a_noise_unit() -> None:
    conv = conversation(GREETING, COMPLAINT, SHIPPED)
    merged = [
        unit("The user: Hello!", ("episode",), (1,)),
        unit("Hmm, the user complains about a late delivery, order QX-501.", ("episode",), (2,)),
    ]
    tally, failures = score_conversation(conv, merged)
    counts = rates(tally)
    assert counts["noise_recall"] == (0, 1)  # the greeting left a unit
    assert counts["noise_precision"] == (0, 1)  # the tool turn left none
    assert counts["atomic"] == (0, 1)  # one unit holds both claims
    assert counts["clean"] == (0, 2)
    assert counts["kind"] == (0, 3)  # both claims found, as episodes; the tool's not found
    assert counts["kept_assistant_tool"] == (0, 1)
    assert {f.seq for f in failures} == {1, 2, 3}
    split_but_unlinked = [
        unit("The user complains about a late delivery.", ("fact.event",), (1,)),
        unit("The user's order number is QX-501.", ("fact.id",), (1,)),
    ]
    tally, _ = score_conversation(conversation(COMPLAINT), split_but_unlinked)
    assert rates(tally)["atomic"] == (1, 1)
    assert rates(tally)["link_kept"] == (0, 1)


def test_a_correction_and_a_resolved_date_are_checked_on_the_unit() -> None:
    turn = {
        "role": "user",
        "text": "Sorry, I meant Thursday the 12th.",
        "noise": False,
        "claims": [{"kind": "correction", "must": ["Thursday"], "date": "2026-03-12"}],
    }
    right = [unit("The meeting is on Thursday (2026-03-12).", ("constraint.time", "correction"), (1,))]
    wrong = [unit("The meeting is on Thursday (2025-03-12).", ("constraint.time",), (1,))]
    assert rates(score_conversation(conversation(turn), right)[0])["kind"] == (1, 1)
    assert rates(score_conversation(conversation(turn), right)[0])["dates"] == (1, 1)
    assert rates(score_conversation(conversation(turn), wrong)[0])["kind"] == (0, 1)
    assert rates(score_conversation(conversation(turn), wrong)[0])["dates"] == (0, 1)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("The user's sister is called Priya.", None),
        ("用户的妹妹叫小雨。", None),
        ("用户的额度是5000元。", None),
        ("Hmm, actually the user's sister is called Priya.", "starts with 'Hmm'"),
        ("哦对了，用户妹妹叫小雨。", "starts with '哦对了'"),
        ("The user: Our company uses MySQL 8.0.", "role prefix"),
        ("用户：之前的说法，实际预算是6000。", "role prefix"),
        (
            "Let the user correct what the user said earlier: the budget is 6000.",
            "starts with 'Let the user correct'",
        ),
        ("The user, um, lives in Porto.", "starts with 'um'"),
        ("The user's budget is 6000, you know, for the laptop.", "leftover 'you know,'"),
        ("And the user always wants an aisle seat.", "starts with 'And'"),
    ],
)
def test_clean_reads_the_opening_and_the_leftovers(content: str, reason: str | None) -> None:
    assert unclean(content) == reason


def test_clean_but_role_forgives_only_the_prefix() -> None:
    assert unclean("The user: Our company uses MySQL 8.0.", forgive_role=True) is None
    assert unclean("用户：嗯，公司用MySQL。", forgive_role=True) == "starts with '嗯'"


def test_the_holdout_never_prints_its_failing_turns() -> None:
    from bench.distill_quality.run import parse

    with pytest.raises(SystemExit):
        parse(["--split", "holdout", "--show-failures"])
    assert parse(["--split", "all", "--show-failures"]).show_failures
