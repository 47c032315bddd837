"""Issue 32 in the heuristic distiller: a unit per clause (by structure, in both languages), no unit that
opens with a marker, filler, hedge or role label, kinds decided by what a clause is, and the parts of
one turn linked by what they share. Phrasings here are invented for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.distill.heuristic.clauses import split_clauses
from app.distill.heuristic.distiller import HeuristicDistiller
from app.distill.heuristic.kinds import clause_kind
from app.distill.types import Candidate, Turn

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
DISTILLER = HeuristicDistiller()


def units(text: str, role: str = "user") -> list[Candidate]:
    return DISTILLER.distill_turn(Turn(1, 1, role, text, None, T0), T0)


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        ("I'm vegetarian and allergic to nuts.", ["I'm vegetarian", "I'm allergic to nuts."]),
        (
            "I'm vegan, and my train to Porto leaves on May 3.",
            ["I'm vegan", "My train to Porto leaves on May 3."],
        ),
        ("My cat is 4, but my dog is 9.", ["My cat is 4", "My dog is 9."]),
        (
            "We use Postgres 16; the replica lags by an hour.",
            ["We use Postgres 16", "The replica lags by an hour."],
        ),
        ("我是素食者，另外我下周三要去西安出差。", ["我是素食者", "我下周三要去西安出差。"]),
        ("我女儿对花生过敏，而且她不喝牛奶。", ["我女儿对花生过敏", "她不喝牛奶。"]),
        ("我喜欢看纪录片，不爱看综艺。", ["我喜欢看纪录片", "我不爱看综艺。"]),
        # a leading value with words of its own, then a predicate of its own
        ("每月最多80块，别给我开任何增值业务。", ["每月最多80块", "别给我开任何增值业务。"]),
        # a relative clause stays with the thing it is said of
        (
            "I use Notion, which syncs across my devices, and my laptop is a ThinkPad.",
            ["I use Notion, which syncs across my devices", "My laptop is a ThinkPad."],
        ),
        # a negated imperative is a clause of its own, and no question
        (
            "Archive the old tickets but do not delete them.",
            ["Archive the old tickets", "Do not delete them."],
        ),
        ("Rotate the keys and never email them.", ["Rotate the keys", "Never email them."]),
        # a base verb after "and" is the subject's second predicate, never an imperative
        (
            "I run on Mondays and do spin classes on Fridays.",
            ["I run on Mondays", "I do spin classes on Fridays."],
        ),
        # a carried predicate stating a value of its own
        (
            "My niece is 7 and sings in the Riverside choir.",
            ["My niece is 7", "My niece sings in the Riverside choir."],
        ),
        # a part leaving out the verb before it: the verb said again
        (
            "My aunt lives in Cork, my uncle in Galway.",
            ["My aunt lives in Cork", "My uncle lives in Galway."],
        ),
        (
            "Design files go in Figma, invoices in Xero.",
            ["Design files go in Figma", "Invoices go in Xero."],
        ),
        (
            "I take iron in the morning, plus a zinc tablet at lunch.",
            ["I take iron in the morning", "I take a zinc tablet at lunch."],
        ),
        # a consequence is a claim of its own
        (
            "I'm gluten intolerant, which is why I bake my own bread.",
            ["I'm gluten intolerant", "I bake my own bread."],
        ),
    ],
)
def test_clauses_with_their_own_predicate_are_cut_and_share_their_subject(
    sentence: str, clauses: list[str]
) -> None:
    assert [c.text for c in split_clauses(sentence)] == clauses


@pytest.mark.parametrize(
    "sentence",
    [
        "My kids are 6 and 9.",  # "and" joins no predicate
        "If the room is free, I can pay 200 euros.",  # a condition stays with what it conditions
        "I bought a kettle and it leaks.",  # "it" points back: cut off it says nothing
        "退款金额389元，已原路退回。",  # a part without a predicate stays with its clause
        "如果下周有空的话，我想去趟杭州。",
        "年底要是有奖金，会换成55寸的。",  # a condition after a time that opens it
        "物业费上个月调了，调到每平3块。",  # the result of a change, said after it
        "我家养了一只兔子，叫团子。",  # a name given after what it names
        "I ordered a new monitor, a Dell U2724.",  # the same thing named again, not a second object
        "My wife uses Linux at work and a Mac at home.",  # an object, not a subject and its place
    ],
)
def test_parts_that_lean_on_each_other_stay_one_clause(sentence: str) -> None:
    clauses = split_clauses(sentence)
    assert len(clauses) == 1 or "金额" in clauses[0].text


@pytest.mark.parametrize(
    ("text", "opening"),
    [
        ("Hmm, actually my brother's name is Tariq.", ("Hmm", "Actually", "actually")),
        ("Um, so, basically I work night shifts at the airport.", ("Um", "So", "Basically")),
        ("Well, I think my flat is in Leith.", ("Well", "I think")),
        ("哦对了，我哥哥叫王磊。", ("哦", "对了")),
        ("呃，那个，我住在南京。", ("呃", "那个")),
        ("Small update: my train now leaves at 7:10.", ("Small update", "small update")),
        ("Fun fact: I have lived in Bilbao for ten years.", ("Fun fact", "fun fact")),
        # any few words before a colon and a clause of its own (never a label and its value)
        ("While I have you: my flat is in Leith.", ("While", "while")),
        ("还有个事：我下周三要去杭州出差。", ("还有个事",)),
    ],
)
def test_no_unit_opens_with_a_marker_filler_or_hedge(text: str, opening: tuple[str, ...]) -> None:
    made = units(text)
    assert made
    for unit in made:
        body = unit.content.removeprefix("The user says ").removeprefix("用户说")
        assert not body.startswith(opening), unit.content


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("The hotel has to be near the harbour.", "user"),
        ("考试定在9月3号，所以时间很紧。", "user"),
        ("The patch fixes the login loop in version 2.4.", "assistant"),
    ],
)
def test_a_unit_names_its_speaker_as_a_subject_never_as_a_label(text: str, role: str) -> None:
    for unit in units(text, role):
        assert not unit.content.startswith(("The user:", "The assistant:", "用户：", "助手：")), unit.content


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Sorry, I meant 7 seats, not 5.", "7 seats"),
        ("我更正一下，预算是9000。", "预算是9000"),
        ("Correction: my flight number is LX-318.", "LX-318"),
    ],
)
def test_a_correction_is_a_tag_and_the_claim_reads_as_the_corrected_fact(text: str, value: str) -> None:
    [unit] = units(text)
    assert "correction" in unit.tags
    assert value in unit.content
    for wording in ("Sorry", "meant", "更正", "Correction"):
        assert wording not in unit.content, unit.content


def test_the_parts_of_one_turn_keep_the_value_that_links_them() -> None:
    """A complaint and its order number, cut apart: both carry the order id, so a question about the
    complaint brings the number along."""
    made = units("The blender I ordered arrived with a cracked jug, and the order number is KT-20931.")
    assert len(made) == 2
    assert all("KT-20931" in {e.name for e in u.entities} for u in made)
    made = units("我上个月买的电水壶漏水了，订单号是DH-55120。")
    assert len(made) == 2
    assert all("DH-55120" in {e.name for e in u.entities} for u in made)


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        ("Please keep your replies brief.", "user", "preference"),  # how to be served: format
        ("Please only reach me by text message.", "user", "preference"),  # channel
        ("回复请简短一些。", "user", "preference"),
        ("The delivery address is still to be confirmed.", "user", "task_state"),  # a step still to do
        ("收货地址还需要您确认。", "assistant", "task_state"),
        ("Could you move my appointment to Friday?", "user", "task_state"),  # a request: a step to do
        ("We run Debian 12 on every server.", "user", "fact"),  # a lasting state
        ("我们公司用的是MySQL 8.0。", "user", "fact"),
        ("Your refund of 45 EUR has been approved.", "assistant", "task_state"),  # kept, with its role
        ("Version 3.1 has a known bug: exports drop the last row.", "assistant", "fact"),
        ("Your claim CL-20931 has been approved.", "assistant", "task_state"),  # a step done, an id in it
        ("护照复印件已经交好了。", "user", "task_state"),  # a resultative: done, whoever opens the clause
        ("tickets.reassign: TK-4410 moved to the network queue", "tool", "task_state"),  # a call that writes
        ("tickets.search: TK-4410 open, network queue", "tool", "fact"),  # a call that reads
        ("工单变更：TK-4410 转到网络组", "tool", "task_state"),
        # a request after its topic, or told to the listener with a suggestion's 吧
        ("飞机餐帮我备注一下。", "user", "task_state"),
        ("你先把测试修好吧。", "user", "task_state"),
    ],
)
def test_the_kind_is_what_the_clause_is(text: str, role: str, kind: str) -> None:
    made = units(text, role)
    assert made, "nothing kept"
    assert made[0].tags[0].split(".")[0] == kind, [(u.tags, u.content) for u in made]
    if role == "assistant":
        assert made[0].content.startswith("The assistant") or made[0].content.startswith("助手")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Do not restart the database.", "constraint"),
        ("Don't merge the release branch.", "constraint"),
        ("Never phone me at work.", "preference"),  # how to be served
    ],
)
def test_a_prohibition_told_an_assistant_is_a_limit(text: str, kind: str) -> None:
    assert clause_kind(text, "en", "user", stated=True) == kind
    # between people it is encouragement ("don't give up!"), no limit of the speaker's
    assert clause_kind("Don't give up on the novel!", "en", "user") != "constraint"


def test_a_chinese_wish_after_its_topic_is_a_preference() -> None:
    assert clause_kind("座位尽量靠窗。", "zh", "user", stated=True) == "preference"


def test_chinese_hui_is_the_future_only_with_a_time_ahead() -> None:
    assert clause_kind("我会说西班牙语。", "zh", "user", stated=True) == "fact"  # what one can do
    assert clause_kind("包裹后天会送到。", "zh", "assistant", stated=True) == "task_state"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I see an osteopath.", True),  # a speaker's verb and the thing it takes, small talk's verb or not
        ("We got a kitten.", True),
        ("I take a beta blocker at night.", True),
        ("Thanks a lot.", False),
        ("I got it.", False),
    ],
)
def test_a_speakers_verb_and_its_thing_say_enough(text: str, kept: bool) -> None:
    service = [Turn(1, 1, "assistant", "How can I help?", None, T0), Turn(2, 2, "user", text, None, T0)]
    made = DISTILLER.distill_turn(service[1], T0, recent=service[:1])
    assert bool(made) is kept, [u.content for u in made]


def test_a_space_between_chinese_words_is_a_pause_typed_for_a_comma() -> None:
    """Chat apps' Chinese often leaves the commas out: the space cuts the clauses and frees the opening."""
    made = units("嗯 我下周二去体检 前一天晚上不能吃东西")
    assert [u.content for u in made] == ["用户下周二（2026-06-09）去体检", "用户说前一天晚上不能吃东西"]
    # so is an ellipsis; a hum typed without one is no part of the claim
    assert [u.content for u in units("嗯我想想…就要蓝色的吧")] == ["用户说就要蓝色的吧。"]
