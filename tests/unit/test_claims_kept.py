"""Mechanisms of the fourteenth session (invented statements): a clause saying its thing is unchanged keeps
what it names whatever its sibling clauses change, and one moment said again with another part (its hour,
its day) is a change of that part."""

from __future__ import annotations

import pytest

from app.claims import conflicts, extract, find_values
from app.claims.kept import kept_apart
from app.resolve.claims import decide, residue


def related_frames(a: str, b: str) -> float | None:
    return 0.5


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Production is unchanged.", "en"),
        ("Her email hasn't changed.", "en"),
        ("Same dentist as before.", "en"),
        ("The Friday slot stays as it was.", "en"),
        ("酒店不变。", "zh"),
        ("游泳课照旧。", "zh"),
        ("车贷还是老样子。", "zh"),
    ],
)
def test_saying_a_thing_is_unchanged_replaces_nothing(text: str, lang: str) -> None:
    [kept] = extract(text, lang=lang)
    assert kept.unchanged
    assert kept.qualifier
    [old] = extract("My plan is the basic one at $20.", lang="en")
    assert conflicts(old, kept, frame_similarity=0.9).action == "keep"


def test_a_clause_is_cut_before_what_it_says_is_unchanged() -> None:
    assert kept_apart("给我换成大众途观了，酒店那边不变", True) == ["给我换成大众途观了", "酒店那边不变"]
    assert kept_apart("酒店那边不变", True) == ["酒店那边不变"]


@pytest.mark.parametrize(
    ("old", "new", "ended", "kept"),
    [
        (
            "Our staging database runs Postgres 13 and production runs Postgres 15.",
            "Staging was upgraded to Postgres 16 last night; production is unchanged.",
            "13",
            "15",
        ),
        ("孩子周二上钢琴课，周四上游泳课。", "钢琴课改到周三了，游泳课照旧。", "周二", "周四"),
        (
            "房贷每月还6800，车贷每月还2100。",
            "房贷利率降了，现在每月还6300，车贷还是老样子。",
            "6800",
            "2100",
        ),
        (
            "I work from the office on Mondays and from home on Fridays.",
            "Office day moved to Wednesdays. Fridays at home stay as they were.",
            "Monday",
            "Friday",
        ),
    ],
)
def test_what_a_statement_says_is_unchanged_stays_true_beside_what_it_changes(
    old: str, new: str, ended: str, kept: str
) -> None:
    olds = extract(old)
    decision = decide(extract(new), [("old", olds)], related_frames)
    assert decision is not None
    assert decision.action == "supersede"
    assert all(ended in olds[i].text for i in decision.hit)
    still = residue(olds, decision.hit, False, decision.kept)
    assert any(kept in c.text for c in still)


def test_a_generic_word_of_what_is_unchanged_keeps_no_other_thing() -> None:
    # "起床时间没变" names the wake-up time: the bedtime beside it is what changed
    olds = extract("我一般晚上11点上床，早上7点起床。")
    decision = decide(extract("我现在调成10点半上床了，起床时间没变。"), [("old", olds)], related_frames)
    assert decision is not None
    assert [olds[i].value.text for i in decision.hit] == ["晚上11点"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("每周例会定在周二下午三点", "例会改到周二下午四点半了"),
        ("The review is on Friday at 2pm.", "The review moved to Friday at 4pm."),
    ],
)
def test_one_moment_said_again_with_another_hour_changes_its_hour(old: str, new: str) -> None:
    [before], [after] = extract(old), extract(new)
    assert before.value.text == after.value.text  # the day is the main value of both
    assert conflicts(before, after, frame_similarity=0.9).action == "supersede"


def test_one_moment_said_again_whole_is_the_same_value() -> None:
    [before], [again] = extract("例会在周二下午三点"), extract("例会还是周二下午三点")
    assert conflicts(before, again, frame_similarity=0.9).action == "keep"


@pytest.mark.parametrize("interjection", ["Ha", "Welp", "Yeah", "Hmm"])
def test_an_interjection_alone_is_no_value(interjection: str) -> None:
    claims = extract(f"{interjection}, we'll need them, the district changed her pickup to 7:05.")
    assert [c.value.text for c in claims] == ["7:05"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我们还留着一个测试用的Redis集群，叫redis-legacy。", "那个测试集群昨天下线了"),
        ("We keep a staging box, called hx-stage-2.", "We decommissioned the staging box."),
        # what a relative clause says of it, and what the one taken on does
        ("We have a gardener, Tomas, who comes every other Monday.", "We let Tomas go."),
        ("我们请了个钟点工，每周四来打扫。", "钟点工我们辞了。"),
    ],
)
def test_a_retired_thing_takes_its_name_with_it(old: str, new: str) -> None:
    olds = extract(old)
    decision = decide(extract(new), [("old", olds)], related_frames)
    assert decision is not None
    assert decision.action == "retire"
    assert residue(olds, decision.hit, True, decision.kept) == []


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        ("那正好，国庆那几天的目的地最后改成大理了，就打算去骑这个。", "大理"),
        ("We moved the offsite to Porto, and I might fly in a day early.", "Porto"),
    ],
)
def test_a_clause_changing_a_value_says_it_firmly_beside_a_hedged_one(text: str, changed: str) -> None:
    claims = {c.value.text: c.modality for c in extract(text)}
    assert claims[changed] == "firm"
    assert "hedged" in claims.values()


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        (
            "Our CI runs on GitHub Actions with a 30-minute job timeout.",
            "We raised the job timeout to 45 minutes.",
            "GitHub Actions",
        ),
        (
            "My contract is 32 hours a week at 85 euros an hour.",
            "From May I'm billing 95 euros an hour.",
            "32",
        ),
    ],
)
def test_a_second_value_said_with_its_own_noun_changes_alone(old: str, new: str, kept: str) -> None:
    olds = extract(old)
    decision = decide(extract(new), [("old", olds)], related_frames)
    assert decision is not None
    assert decision.action == "supersede"
    assert any(kept in c.text for c in residue(olds, decision.hit, False, decision.kept))


@pytest.mark.parametrize(
    "text", ["My one-on-one with Karen is at 3:30 on Thursdays.", "Our train to Leeds departs at 07:40."]
)
def test_a_value_after_the_verb_is_no_second_value(text: str) -> None:
    assert len(extract(text)) == 1


def test_a_chinese_retirement_ends_the_topic_said_before_the_speaker() -> None:
    [old] = extract("我每个月定投500块指数基金。")
    [ended] = extract("定投我已经停了")
    assert "定投" in ended.qualifier
    assert conflicts(old, ended).action == "retire"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("My desk is on the 7th floor.", "number"),
        ("She is in 2nd grade.", "number"),
        ("The meeting is on the 7th.", "date"),
        ("The flight moved from the 2nd to the 4th.", "date"),
    ],
)
def test_an_ordinal_of_a_noun_is_a_number_and_of_a_month_a_date(text: str, kind: str) -> None:
    assert {v.value.type for v in find_values(text)} == {kind}


def test_a_named_person_getting_moved_is_no_change_of_the_speaker() -> None:
    [mine], [theirs] = (
        extract("My desk is on the 7th floor."),
        extract("Jonas got moved up to the 11th floor."),
    )
    assert theirs.subject == "jonas"
    assert conflicts(mine, theirs, frame_similarity=0.9).action == "keep"


def test_a_noun_after_a_possessive_names_the_attribute() -> None:
    [claim] = extract("The user's mentor in the rotation program is Priyanka Rao.")
    assert "mentor" in claim.qualifier


@pytest.mark.parametrize(
    "text", ["We shut the old build box down on Friday.", "We phased the v1 API out last month."]
)
def test_a_phrasal_verb_of_ending_around_its_object_retires(text: str) -> None:
    assert [c.modality for c in extract(text)] == ["retired"]


def test_a_successor_said_by_its_anaphor_replaces_what_ended_beside_it() -> None:
    olds = extract("I have violin lessons on Monday evenings with a teacher named Ines.")
    assert [c.value.text for c in olds] == ["Monday", "Ines"]
    decision = decide(
        extract("My teacher moved away, so I got a new one called Pavel."), [("old", olds)], related_frames
    )
    assert decision is not None
    assert decision.action == "supersede"
    assert [c.value.text for c in residue(olds, decision.hit, False, decision.kept)] == ["Monday"]


def test_a_value_said_in_other_words_with_a_word_of_time_may_replace_one_of_its_type() -> None:
    [old], [new] = extract("I swim laps on Saturdays."), extract("Swimming is on Sundays these days.")
    assert conflicts(old, new, frame_similarity=0.6).action == "supersede"
    # a cleft alone ("排的是…") is no word of time: another project's date stays
    [other], [later] = extract("支付项目的上线时间定在6月15号"), extract("对账系统那边排的是7月1号上线")
    assert conflicts(other, later, frame_similarity=0.8).action == "keep"


def test_a_retirement_naming_a_day_and_a_thing_ends_the_claim_holding_both() -> None:
    job = extract("我每周六上午在少年宫兼职教书法")
    slot = extract("周六上午给我空出来")
    decision = decide(extract("周六那个兼职我已经辞了"), [("slot", slot), ("job", job)], related_frames)
    assert decision is not None
    assert (decision.candidate_id, decision.action) == ("job", "retire")


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ("My mum's mobile is 07700 900123.", "Mum got a new phone, the number is 07700 900456.", "supersede"),
        ("我的手机号是13812345678", "我换号了，新号码是13987654321", "supersede"),
        ("My phone number is 07700 900123.", "My email is kim@example.org.", "keep"),  # another kind
        ("My work phone is 020 7946 0958.", "My home phone is 020 7946 0111.", "keep"),  # narrowed apart
    ],
)
def test_a_contact_is_typed_by_its_kind(old: str, new: str, action: str) -> None:
    before, after = extract(old)[-1], extract(new)[-1]
    assert {before.value.unit, after.value.unit} <= {"phone", "email"}
    assert conflicts(before, after, frame_similarity=0.5).action == action


def test_a_value_of_its_own_unit_changes_the_one_said_beside_another() -> None:
    olds = extract("I ordered the rain jacket in olive, size M, last week.")
    plan = extract("Remind me in 25 days maybe.")
    fixed = extract("Wait, I told you medium but it's actually size L.")
    decision = decide(fixed, [("plan", plan), ("order", olds)], related_frames)
    assert decision is not None
    assert decision.candidate_id == "order"
    assert decision.action == "supersede"
