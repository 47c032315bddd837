"""Mechanisms of the thirteenth session (invented statements): a relation's value must be of the type
its slot holds (words are no budget), a verb of change is one in every form ("bumping", "pushing"), where a
span starts and where it ends are two attributes, a name opening a sentence may be a thing, not a person,
whichever claim it opens, a taste said as what suits the speaker puts its value first, days of the week said
together are one set, endings and changes said in other words are retirements and changes, and from one
moment to another is a span unless a verb changes it."""

from __future__ import annotations

import pytest

from app.claims import conflicts, extract


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Putting my budget together for the move.", "en"),
        ("I'm working on the budget spreadsheet tonight.", "en"),
        ("我在做家庭预算", "zh"),
        ("这周末整理一下装修预算表", "zh"),
    ],
)
def test_words_fill_no_budget(text: str, lang: str) -> None:
    assert all(c.head != "budget" for c in extract(text, lang=lang))


@pytest.mark.parametrize(
    ("text", "lang"),
    [("My budget for the bike is $900.", "en"), ("买车的预算是15万", "zh"), ("预算3000以内", "zh")],
)
def test_an_amount_fills_a_budget(text: str, lang: str) -> None:
    assert [c.head for c in extract(text, lang=lang)] == ["budget"]


def test_an_activity_of_budgeting_is_not_the_budget_a_new_amount_replaces() -> None:
    [activity] = extract("我在做家庭预算", lang="zh")
    [payment] = extract("现在月供变成5200了", lang="zh")
    assert conflicts(activity, payment).action == "keep"


@pytest.mark.parametrize(
    "new",
    [
        "They're bumping me to $2,320 starting with the next lease.",
        "The landlord is pushing it to $2,320 from next month.",
        "They're lowering it to $2,100 from the spring.",
    ],
)
def test_a_verb_of_change_in_its_ing_form_changes_the_value(new: str) -> None:
    [old] = extract("My rent is $2,150 a month.")
    [claim] = extract(new)
    assert claim.change
    # frames alike enough for a change word to tie them (the resolver's embedder gives about this)
    assert conflicts(old, claim, frame_similarity=0.55).action == "supersede"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The gym opens at 6.", "The gym closes at 10."),
        ("The meeting starts at 9.", "The meeting ends at 11."),
        ("Our flight departs at 7:40.", "Our flight lands at 11:20."),
    ],
)
def test_where_a_span_starts_and_where_it_ends_are_two_attributes(old: str, new: str) -> None:
    # (the embedder scores such frames as near as one attribute reworded)
    [before], [after] = extract(old), extract(new)
    assert conflicts(before, after, frame_similarity=0.92).action == "keep"


def test_a_name_opening_a_sentence_is_the_thing_the_other_claim_is_narrowed_by() -> None:
    # "Standup" opens the first sentence as if it named someone; the second says it of the speaker's
    [old], [new] = extract("Standup starts at 9:15."), extract("Standup now starts at 9:45.")
    assert conflicts(old, new, frame_similarity=0.95).action == "supersede"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("A window seat suits me.", "window seat"),
        ("Light theme on all my devices suits me these days.", "Light theme on all my devices"),
        ("Mornings work best for me.", "Mornings"),
        ("Oat milk is my go-to.", "Oat milk"),
    ],
)
def test_an_evaluation_relative_to_the_speaker_states_the_taste_it_puts_first(text: str, value: str) -> None:
    [claim] = extract(text)
    assert (claim.subject, claim.value.type, claim.value.text) == ("user", "text", value)


def test_two_tastes_said_alike_are_two_tastes_unless_a_change_ties_them() -> None:
    # the frame "⟨text⟩ suits me" names no attribute: another taste may suit too
    [seats], [flights] = extract("Window seats suit me."), extract("Morning flights suit me.")
    assert conflicts(seats, flights, frame_similarity=1.0).action == "keep"
    [window] = extract("A window seat suits me.")
    [aisle] = extract("An aisle seat suits me better these days.")
    assert conflicts(window, aisle, frame_similarity=0.95).action == "supersede"


def test_a_distilled_unit_states_the_taste_as_the_speaker_said_it() -> None:
    # the distiller writes the speaker as "the user" / "them"
    [claim] = extract("Light theme on all the user's devices suits them these days.")
    assert claim.value.text == "Light theme on all the user's devices"


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Deploys go out Tuesdays and Thursdays.", "1|3"),
        ("Deploys go out Thursdays, Tuesdays.", "1|3"),
        ("I swim on Mondays, Wednesdays and Fridays.", "0|2|4"),
        ("我们周二和周四发版", "1|3"),
        ("我们周二、四发版", "1|3"),
    ],
)
def test_days_of_the_week_said_together_are_one_set(text: str, days: str) -> None:
    [claim] = extract(text)
    assert (claim.value.type, claim.value.key) == ("weekday", days)


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ("Deploys go out Tuesdays and Thursdays.", "Deploys are Mondays and Wednesdays now.", "supersede"),
        ("Deploys go out Tuesdays and Thursdays.", "Deploys now go out Thursdays and Tuesdays.", "keep"),
        ("Deploys go out Tuesdays and Thursdays.", "Deploys go out on Tuesdays now.", "supersede"),
    ],
)
def test_a_set_of_days_changes_when_its_days_do(old: str, new: str, action: str) -> None:
    [before], [after] = extract(old), extract(new)
    assert conflicts(before, after, frame_similarity=0.8).action == action


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("I'm off the blood thinners now.", "en"),
        ("I let the domain expire.", "en"),
        ("We've sunset the legacy API.", "en"),
        ("I returned the headphones.", "en"),
        ("The book club fizzled out.", "en"),
        ("We parted ways with the agency.", "en"),
        ("I've given away the piano.", "en"),
        ("我们把钉钉换掉了。", "zh"),
        ("测试集群已经下掉了。", "zh"),
        ("仓库的租约终止了。", "zh"),
        ("耳机我退货了。", "zh"),
        ("读书会散了。", "zh"),
    ],
)
def test_an_ending_said_in_other_words_is_a_retirement(text: str, lang: str) -> None:
    # the class of ending words completed on phrasings written for this test (each was read as a state)
    assert any(c.modality == "retired" for c in extract(text, lang=lang))


@pytest.mark.parametrize("text", ["I returned from Lisbon on Sunday.", "We watched the sunset from a pier."])
def test_a_word_of_ending_in_another_sense_ends_nothing(text: str) -> None:
    assert all(c.modality != "retired" for c in extract(text))


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("From next month the fee goes up to 30 euros.", "en"),
        ("The deadline slipped to the 14th.", "en"),
        ("We downsized to a two-bed flat.", "en"),
        ("以后每周五交周报。", "zh"),
        ("健身房下周起6点开门。", "zh"),
        ("配额减半到500。", "zh"),
        ("下个月起我向李娜汇报。", "zh"),
    ],
)
def test_a_change_said_in_other_words_is_a_change(text: str, lang: str) -> None:
    # the class of change words completed on phrasings written for this test (each was read as a state)
    assert any(c.change for c in extract(text, lang=lang))


@pytest.mark.parametrize(
    "text",
    [
        "我们一起去吃饭，人均200。",
        "我们一起租的房子，月租5000。",
        "从明天起我不喝咖啡",
    ],
)
def test_a_start_said_with_qi_changes_only_after_a_time(text: str) -> None:
    # 起 after a day or month starts a new state (下周起); in 一起 it starts nothing
    assert any(c.change for c in extract(text, lang="zh")) == text.startswith("从明天起")


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ("I work from Monday to Friday.", None),
        ("Standup is from 9:30 to 9:45.", None),
        ("The sale runs from June 1 to June 15.", None),
        ("Releases moved from Tuesdays to Wednesdays.", "Tuesdays"),
        ("The meeting got pushed from 2pm to 4pm.", "2pm"),
        ("We switched from Jira to Linear.", "Jira"),
    ],
)
def test_from_one_moment_to_another_is_a_span_unless_a_verb_changes_it(text: str, old: str | None) -> None:
    [claim] = extract(text)
    assert (claim.old_value.text if claim.old_value else None) == old
    assert claim.change == (old is not None)
