"""A claim's value read whole: digits joined by a thousands separator or a time's colon stay one value,
a unit is a word of its own, a verb of change names the value it moves to, a negated ending is none."""

from __future__ import annotations

import pytest

from app.claims import compatible, conflicts, extract, find_values, same
from tests.factories import best_seconds


@pytest.mark.parametrize(
    ("text", "number"),
    [("My savings goal for this year is $8,000.", 8000.0), ("The deposit is €12,500, due Friday.", 12500.0)],
)
def test_a_thousands_separator_ends_no_clause(text: str, number: float) -> None:
    [claim, *_] = extract(text)
    assert claim.value.type == "amount"
    assert claim.value.number == number


def test_a_time_of_day_is_one_value_in_chinese() -> None:
    [claim] = extract("周会改到每周三上午9:30。")
    assert "9:30" in claim.text


def test_a_unit_never_runs_into_a_word() -> None:
    assert not [s for s in find_values("order 4471 should ship soon") if s.value.type == "quantity"]
    # a Chinese unit's number is digits or numerals, never both: "3000一个月" is 3000 a month
    assert [(s.value.type, s.value.text) for s in find_values("房租3000一个月")] == [("number", "3000")]
    # 号 before a building, a line or a bed numbers it: no day of a month
    assert not [s for s in find_values("是81号院，坐5号线") if s.value.type == "date"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("After Tuesday's incident we lowered the gateway timeout to 1200 ms.", "1200 ms"),
        ("On Monday the team pushed the launch back to 14:00.", "14:00"),
        ("The landlord put the rent up to €1,240.", "€1,240"),
    ],
)
def test_a_verb_of_change_names_the_value_it_moves_to(text: str, value: str) -> None:
    assert extract(text)[0].value.text == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("From June it's 42 pounds a month.", "42 pounds"), ("从一月开始每月68元。", "68元")],
)
def test_when_a_value_takes_effect_is_no_value(text: str, value: str) -> None:
    assert extract(text)[0].value.text == value


def test_a_latin_name_joined_by_a_hyphen_is_one_value_in_chinese_too() -> None:
    # (a Chinese character before it is no letter of it: the name starts where the Latin does)
    assert [(s.value.type, s.value.text) for s in find_values("访客网络叫Harbor-2B")] == [("id", "Harbor-2B")]
    assert extract("后来改名了，现在叫Lantern-Net。")[-1].value.text == "Lantern-Net"


def test_a_price_in_chinese_numerals_is_no_model_number() -> None:
    assert extract("围巾三百五。")[0].value.type == "number"  # 荣耀90 is a model, 围巾三百五 a price


def test_an_old_value_is_never_read_across_a_colon() -> None:
    [claim] = extract("Good news from the annual review: they raised my base pay to $101,500.")
    assert claim.old_value is None
    assert claim.value.text == "$101,500"
    [moved] = extract("Releases moved from Tuesdays to Wednesdays.")
    assert moved.old_value is not None
    assert moved.old_value.text == "Tuesdays"


@pytest.mark.parametrize(
    "text",
    [
        "He won't quit, whatever happens.",
        "She is not giving up.",
        "Don't let anything stop you.",
        "We won't let the nanny go.",
        "我不会放弃的。",
        "The lease has eight months left.",  # a count before "left": what remains
        "There are only a few tickets left.",
    ],
)
def test_a_negated_ending_is_no_retirement(text: str) -> None:
    assert all(c.modality != "retired" for c in extract(text))


@pytest.mark.parametrize(
    "text",
    [
        "I don't have the cat anymore.",
        "I no longer use it.",
        "I sold the car.",
        "We let the gardener go in May.",
        "I paid off the student loan.",
        "I made the final payment on the van.",
        "我不再用微信了。",
        "She stepped down from the board last month.",
        "带新人的活儿我已经卸任了。",
        "My brother left the band in 2019.",
        # giving a thing up: sold, given away
        "我把旧自行车卖了。",
        "那台旧电脑已经送人了。",
        "We gave the puppy away.",
        # lost, stolen, passed on to someone
        "Our old van got stolen.",
        "钱包弄丢了。",
        "旧手机卖给同事了。",
    ],
)
def test_an_ending_retires(text: str) -> None:
    assert [c.modality for c in extract(text)] == ["retired"]


@pytest.mark.parametrize("text", ["Can you move my dentist appointment to Friday?", "能把会议改到周五吗？"])
def test_a_question_asserts_nothing(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize("text", ["They put the fee up to $45.", "They knocked the price down to 300 euros."])
def test_a_phrasal_verb_of_change_is_a_change(text: str) -> None:
    assert extract(text)[0].change


@pytest.mark.parametrize("run", ["9", "三", "1.", "a1", "9月", "-1", "123 ", "月十"])
@pytest.mark.parametrize("prefix", ["", ".", "31m", "下午"])
def test_finding_values_grows_linearly_with_the_text(prefix: str, run: str) -> None:
    """A hostile turn (a 400-digit number, a pasted hash) costs in proportion to its length: ten times the
    text at most ~10 times the time (a quadratic finder took 100 times, minutes on 32,000 characters)."""
    short, long = prefix + run * (2_000 // len(run)), prefix + run * (20_000 // len(run))
    assert best_seconds(find_values, long) < 30 * best_seconds(find_values, short) + 0.05


def test_an_overlong_run_of_numerals_is_no_value() -> None:
    assert find_values("9" * 400) == []
    assert [s.value.text for s in find_values("9" * 400 + " and 12 kg")] == ["12 kg"]


def test_an_hour_said_bare_is_a_time_of_day() -> None:
    [old] = extract("The standup is at 9:30.")
    [new] = extract("We pushed the standup to 10.")
    assert conflicts(old, new).action == "supersede"
    [ten] = extract("The standup is at 10:00.")
    assert same(ten.value, new.value)
    assert not compatible(old.value, extract("The standup has 40 people.")[0].value)


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Her mobile is 07911 123456.", "id", "07911 123456"),
        ("Her work number is +44 20 7946 0958.", "id", "+44 20 7946 0958"),
        ("The office line is 555 123 4567.", "id", "555 123 4567"),
        ("The loan is at 4.2% APR.", "quantity", "4.2%"),
        ("我的生日是农历十月初八。", "date", "十月初八"),
        ("她是十月十五的生日。", "date", "十月十五"),
    ],
)
def test_a_value_is_read_whole_with_its_type(text: str, kind: str, value: str) -> None:
    [claim] = extract(text)
    assert (claim.value.type, claim.value.text) == (kind, value)


def test_a_spaced_list_of_numbers_is_no_phone_number() -> None:
    assert [s.value.type for s in find_values("It costs 2 300 000 in 2026 11 23.")] == ["number"] * 6


@pytest.mark.parametrize(
    ("text", "model"), [("我用的平板是iPad 10。", "iPad 10"), ("上周换了荣耀90。", "荣耀90")]
)
def test_a_model_number_is_its_products_version(text: str, model: str) -> None:
    [claim] = extract(text)
    assert (claim.value.type, claim.value.text) == ("version", model)


def test_a_bracketed_value_is_an_aside_when_a_name_stands_outside() -> None:
    [claim] = extract("His coach next spring (2027-03) is Ms Adeyemi.")
    assert claim.value.text == "Ms Adeyemi"
    assert [c.value.text for c in extract("Rent is $900 (since 2024).")] == ["$900"]


def test_an_email_beside_chinese_is_its_latin_part_alone() -> None:
    claims = extract("我的手机号是13812345678，邮箱是wang@example.com。")
    assert [(c.attribute, c.value.text) for c in claims] == [
        ("手机号", "13812345678"),
        ("邮箱", "wang@example.com"),
    ]


def test_a_code_of_words_and_a_number_is_one_identifier() -> None:
    (value,) = [s.value for s in find_values("the primary lives in eu-west-3 now")]
    assert (value.type, value.text) == ("id", "eu-west-3")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My yoga class is on Tuesday evenings.", "Going forward yoga is on Thursday evenings."),
        ("The team sync is on Mondays.", "Anna swapped the team sync to Wednesdays."),
        ("Bins go out on Sunday night.", "The council shifted bin collection to Monday."),
        ("The primary database lives in eu-west-1.", "The primary got relocated to eu-central-1 last night."),
        ("周例会在周一上午。", "周例会挪到周三上午了。"),
    ],
)
def test_a_word_of_change_outside_the_old_list_ties_a_value_of_the_same_type(old: str, new: str) -> None:
    # frames as close as the local embedder finds such pairs (0.7-0.9): the change word decides
    verdicts = [conflicts(o, n, frame_similarity=0.7).action for o in extract(old) for n in extract(new)]
    assert "supersede" in verdicts


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("My delivery address is 5 Harbour Lane.", "5 Harbour Lane"),
        ("I live at 221B Baker Street, London.", "221B Baker Street"),
        ("我的快递地址是建国路5号。", "建国路5号"),
        ("不对，是望京街18号。", "望京街18号"),
    ],
)
def test_a_street_address_is_one_name(text: str, value: str) -> None:
    assert [(s.value.type, s.value.text) for s in find_values(text)] == [("name", value)]


def test_an_address_corrected_supersedes_the_old_one() -> None:
    old = extract("My delivery address is 5 Harbour Lane.")
    new = extract("Sorry, I meant 18 Elm Road.", tags=["correction"])
    assert [conflicts(o, n, frame_similarity=0.4).action for o in old for n in new] == ["supersede"]


def test_free_text_is_the_same_value_by_whole_words() -> None:
    from app.claims.model import Value

    assert not same(Value("text", "therapist"), Value("text", "physiotherapist"))
    assert same(Value("text", "dark mode"), Value("text", "Dark Mode."))
    assert same(Value("name", "杭州"), Value("name", "杭州西湖区"))


@pytest.mark.parametrize(
    ("old", "new"),
    [("The team has 8 engineers.", "The team has 2 designers."), ("团队有8个后端。", "团队有2个测试。")],
)
def test_counts_of_two_things_are_two_attributes(old: str, new: str) -> None:
    assert all(
        conflicts(o, n, frame_similarity=0.95).action == "keep" for o in extract(old) for n in extract(new)
    )


def test_a_count_of_one_thing_changes() -> None:
    old, new = extract("The team has 8 engineers."), extract("The team now has 11 engineers.")
    assert [conflicts(o, n, frame_similarity=0.9).action for o in old for n in new] == ["supersede"]


@pytest.mark.parametrize(
    ("text", "kind", "number"),
    [
        ("预算七千左右。", "number", 7000),  # a magnitude in Chinese numerals
        ("两千五就行。", "number", 2500),  # one numeral after the last mark counts a place down
        ("两千零五。", "number", 2005),
        ("三百五。", "number", 350),
        ("三千块。", "amount", 3000),
        ("一千二百元。", "amount", 1200),
    ],
)
def test_an_amount_in_chinese_numerals_is_a_value(text: str, kind: str, number: float) -> None:
    [span] = find_values(text)
    assert (span.value.type, span.value.number) == (kind, number)


@pytest.mark.parametrize("text", ["千万别用那个。", "花了几千块。", "百分之五十。"])
def test_chinese_words_made_of_numerals_are_no_value(text: str) -> None:
    assert find_values(text) == []


def test_starting_at_a_company_is_a_change_of_employer() -> None:
    [old], [new] = extract("I work at Acme as a designer."), extract("I started at Globex this week.")
    assert (new.attribute, new.value.text) == ("employer", "Globex")
    assert conflicts(old, new).action == "supersede"
    assert extract("I started at 9am.")[0].attribute == ""  # a time is no employer


@pytest.mark.parametrize(
    ("text", "value"),
    [("我现在一天只喝一杯奶茶。", "一杯"), ("我一周游泳3公里。", "3公里"), ("请假一天，周五回来。", "一天")],
)
def test_a_period_before_the_amount_it_is_the_rate_of_is_no_value(text: str, value: str) -> None:
    assert extract(text)[0].value.text == value  # "a day" is the rate; alone, a day is the value


def test_a_number_inside_a_name_is_no_quantity() -> None:
    assert find_values("We run K8s in production.") == []
    assert [s.value.text for s in find_values("超时是30s")] == ["30s"]


def test_two_verbs_jieba_guessed_a_name_are_no_name() -> None:
    assert [c.value.type for c in extract("最近更爱喝美式。")] == ["text"]
    assert [c.value.type for c in extract("我的领导是王明。")] == ["name"]
