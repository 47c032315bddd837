"""Resolution's use of claims, free of I/O: stored claims rebuild to the same claims, the unit's main claim,
the verdict over candidates newest first (a weak one ends one candidate at most, never on free text), a
hedged statement beside a firm one, and what a compound unit keeps when one of its claims ends."""

from __future__ import annotations

import json

import pytest

from app.claims import Claim, extract
from app.claims.stored import columns, contract_claim, load, load_all, main_claim
from app.resolve.claims import decide, hedged_over_firm, residual_text, residue


def no_frames(a: str, b: str) -> float | None:
    return None


def related_frames(a: str, b: str) -> float | None:
    """Frames the embedder finds related but not the same ("my budget is ⟨n⟩" ~ "it can go to ⟨n⟩")."""
    return 0.5


@pytest.mark.parametrize(
    "text",
    [
        "I live in Lisbon and I work at Contoso as a nurse.",
        "Releases moved from Tuesdays to Wednesdays.",
        "我想买一台笔记本电脑，预算是5000元。",
        "I don't have the cat anymore.",
    ],
)
def test_a_stored_claim_rebuilds_to_the_same_claim(text: str) -> None:
    claims = extract(text)
    assert claims
    stored = json.loads(json.dumps(columns(claims)["claims"]))  # through JSONB and back
    assert load_all(stored) == claims


def test_a_stored_claim_that_cannot_be_read_is_left_out() -> None:
    assert load({"subject": "user"}) is None
    assert load_all([{"value": "not a value", "subject": "user"}, "junk"]) == []  # type: ignore[list-item]


def test_the_main_claim_is_the_one_of_a_known_attribute() -> None:
    claims = extract("我想买一台笔记本电脑，预算是5000元。")
    main = main_claim(claims)
    assert main is not None
    assert main.head == "budget"
    assert columns(claims)["claim_attribute"] == main.attribute
    shown = contract_claim(columns(claims)["claims"])
    assert shown is not None
    assert set(shown) == {"subject", "attribute", "value", "value_type", "modality"}


def test_no_claim_is_shown_for_a_unit_stating_none() -> None:
    assert contract_claim([]) is None
    assert contract_claim(None) is None


def test_a_strong_verdict_on_an_older_candidate_wins_over_a_weak_one_on_a_newer() -> None:
    laptop = extract("My laptop budget is 5000.")
    raised = extract("My laptop budget is 8000 now.")
    other = extract("I can go to 300.")
    decision = decide(raised, [("newer", other), ("older", laptop)], no_frames)
    assert decision is not None
    assert (decision.candidate_id, decision.action) == ("older", "supersede")


def test_a_weak_verdict_ends_only_the_newest_candidate_it_applies_to() -> None:
    first = extract("My budget is 5000.")
    second = extract("My budget is 6000.")
    change = extract("If the specs can be upgraded, it can go to 8000.")
    decision = decide(change, [("newest", second), ("oldest", first)], related_frames)
    assert decision is not None
    assert decision.candidate_id == "newest"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # any verb done to what was spoken of, moving it to a value, is a change
        ("I take 20mg of the statin every night.", "The cardiologist nudged it up to 40mg."),
        # an error owned in one sentence makes the statement's other sentences the correction
        ("My gym fee is €45 a month.", "Scratch that figure. I was thinking of the old plan. It's €52."),
        # "instead" closing a clause: a replacement whose old value goes unsaid
        (
            "We're staying at the Hotel Miramar in Nice.",
            "We got a better rate, so we're at the Villa Rosa instead.",
        ),
        # an apology and an owned error before the value: neither ends anything nor narrows the value
        ("我穿41码的鞋。", "不好意思我记错了，是42码。"),
    ],
)
def test_a_change_said_by_its_construction_ends_the_value_it_replaces(old: str, new: str) -> None:
    decision = decide(extract(new), [("old", extract(old))], related_frames)
    assert decision is not None
    assert decision.action == "supersede"


def test_a_count_moved_by_a_verb_and_its_particle_is_the_count_it_was() -> None:
    # "out" in "scaled it out to" is the verb's particle, no attribute of its own
    old = extract("The staging cluster runs 4 replicas behind the proxy.")
    decision = decide(extract("Scaled it out to 8 replicas this morning."), [("old", old)], no_frames)
    assert decision is not None
    assert decision.action == "supersede"


def test_a_weak_verdict_ends_the_value_of_the_same_type_before_a_merely_compatible_one() -> None:
    olds = extract("We're a table of 6, dinner is at 7:30.")  # a count that could be an hour, and a time
    decision = decide(extract("Moved it to 8pm now."), [("old", olds)], related_frames)
    assert decision is not None
    assert [olds[i].value.text for i in decision.hit] == ["7:30"]


def test_a_weak_verdict_ends_the_free_value_nearer_in_kind() -> None:
    olds = extract("I can't stand fennel and I'm pescatarian.")

    def frames(a: str, b: str) -> float | None:  # the embedder: a diet is nearer a diet than a vegetable
        return 0.8 if {a, b} == {"pescatarian", "fully vegetarian"} else 0.5

    decision = decide(extract("I've gone fully vegetarian."), [("old", olds)], frames)
    assert decision is not None
    assert [olds[i].value.text for i in decision.hit] == ["pescatarian"]


def test_a_weak_verdict_never_rests_on_free_text() -> None:
    notifications = extract("我喜欢邮件通知，不要打电话。")
    assert decide(extract("如果配置能升级的话，可以到8000。"), [("x", notifications)], no_frames) is None


def test_near_miss_budgets_never_conflict() -> None:
    assert (
        decide(
            extract("My budget for the vacation is 8000."),
            [("x", extract("My budget for the laptop is 5000."))],
            no_frames,
        )
        is None
    )


@pytest.mark.parametrize(
    ("old", "new", "ends"),
    [
        ("We pay $49 a month for Zoom.", "We pay $12 a month for Slack.", False),  # two named things
        ("Our CI runners cost $300 on Hetzner.", "Our CI runners cost $450 on Hetzner now.", True),
        ("My manager is Priya.", "My manager is Tom.", True),  # the names are the values
        ("I work at Acme in Leeds.", "I work at Globex in York.", True),  # one employer, its place with it
        ("I live in Leeds near Roundhay Park.", "I live in York near Clifford Tower.", True),
    ],
)
def test_clauses_naming_different_things_beside_their_values_never_conflict(
    old: str, new: str, ends: bool
) -> None:
    assert (decide(extract(new), [("x", extract(old))], related_frames) is not None) is ends


def test_a_hedged_statement_never_ends_a_firm_one() -> None:
    firm = extract("My laptop budget is 5000.")
    hedged = extract("If prices drop I might go to 9000.")
    assert decide(hedged, [("x", firm)], no_frames) is None
    assert hedged_over_firm(hedged, firm)
    assert not hedged_over_firm(firm, hedged)


def test_a_retirement_retires() -> None:
    decision = decide(
        extract("I don't have the cat anymore."), [("x", extract("I have a cat named Tom."))], no_frames
    )
    assert decision is not None
    assert decision.action == "retire"


@pytest.mark.parametrize(
    ("compound", "change", "kept"),
    [
        ("I live in Lisbon and I work at Contoso as a nurse.", "I live in Oslo.", "Contoso"),
        ("我住在里斯本，在Contoso当护士。", "我住在奥斯陆。", "Contoso"),
        # a phrase after a comma giving a value of an attribute it names is a clause of its own
        (
            "The build farm runs 8 agents, with a 45s idle timeout.",
            "We scaled the build farm to 12 agents.",
            "45s",
        ),
    ],
)
def test_a_compound_unit_keeps_its_other_clause(compound: str, change: str, kept: str) -> None:
    olds = extract(compound)
    decision = decide(extract(change), [("x", olds)], no_frames)
    assert decision is not None
    left: list[Claim] = residue(olds, decision.hit)
    assert [c.value.text for c in left] == [kept]
    text = residual_text(left)
    assert kept in text
    assert "Lisbon" not in text
    assert "里斯本" not in text


@pytest.mark.parametrize(
    ("compound", "change"),
    [
        ("用户打算买台笔记本电脑，预算6000元。", "要是内存能加到32G，我愿意出到7500。"),
        ("I want to buy a laptop, my budget is 5000.", "If the specs can be upgraded, it can go to 8000."),
    ],
)
def test_a_clause_of_free_text_stays_when_the_value_beside_it_changes(compound: str, change: str) -> None:
    olds = extract(compound)
    decision = decide(extract(change), [("x", olds)], related_frames)
    assert decision is not None
    left = residue(olds, decision.hit)
    assert len(left) == 1
    assert not any(ch.isdigit() for ch in residual_text(left))  # the scene, never the old budget


@pytest.mark.parametrize(
    ("compound", "retirement", "kept"),
    [
        ("I rent a storage unit in Leith, £85 a month.", "I gave up the storage unit.", []),
        ("我办了一张健身卡，年费1800元。", "健身卡我已经退了。", []),
        ("我养了一只猫，我今年34岁。", "我不再养猫了。", ["34"]),  # the speaker's own age stays
        (
            "I have a cat called Pepper, she is 4, and I work at Acme.",
            "I don't have the cat anymore.",
            ["Acme"],
        ),
    ],
)
def test_a_retirement_takes_the_details_said_after_its_thing(
    compound: str, retirement: str, kept: list[str]
) -> None:
    olds = extract(compound)
    decision = decide(extract(retirement), [("x", olds)], no_frames)
    assert decision is not None
    assert decision.action == "retire"
    assert [c.value.text for c in residue(olds, decision.hit, retired=True)] == kept


def test_a_happening_is_never_replaced_by_another_without_naming_it() -> None:
    first = extract("The user visited museum number 1 in Rome and liked its paintings.")
    second = extract("The user visited museum number 2 in Rome and liked its paintings.")
    assert decide(second, [("x", first)], related_frames, frozenset({None, "x"})) is None
    # a correction that names the old value still ends it, a happening or not
    fixed = extract("Sorry, it was museum number 3, not museum number 1.")
    decision = decide(fixed, [("x", first)], related_frames, frozenset({None, "x"}))
    assert decision is not None
    assert decision.candidate_id == "x"


def _kinship(pairs: dict[tuple[str, str], float]) -> object:
    """An embedder's cosines for the named pairs (either order), 0.1 for any other."""
    return lambda a, b: pairs.get((a, b), pairs.get((b, a), 0.1))


def test_a_retirement_naming_nothing_said_ends_the_closest_thing_it_could_mean() -> None:
    supplement = extract("I take 1000 IU of vitamin D every evening.")
    tea = extract("I drink green tea every morning.")
    quit = extract("I've quit the supplement altogether.")
    vitamin = "i take ⟨number⟩ iu of vitamin d every evening"
    cosines = _kinship({("supplement", vitamin): 0.45, ("supplement", "green tea"): 0.2})
    decision = decide(quit, [("tea", tea), ("vitamin", supplement)], cosines)
    assert decision is not None
    assert (decision.candidate_id, decision.action) == ("vitamin", "retire")


@pytest.mark.parametrize("cosine", [0.25, 0.45])
def test_a_retirement_closest_to_nothing_clearly_ends_nothing(cosine: float) -> None:
    # under the floor, or no clear winner (two claims as close): nothing ends
    tea = extract("I drink green tea every morning.")
    coffee = extract("I drink a flat white every afternoon.")
    stopped = extract("I've quit the supplement.")
    cosines = _kinship({("supplement", "green tea"): cosine, ("supplement", "flat white"): cosine - 0.05})
    assert decide(stopped, [("coffee", coffee), ("tea", tea)], cosines) is None


def test_an_ending_said_with_its_successor_supersedes() -> None:
    old = extract("My manager is Dana and my team lead is Ravi.")
    decision = decide(extract("Ravi left, so my team lead is Chen now."), [("unit", old)], no_frames)
    assert decision is not None
    assert decision.action == "supersede"
    assert [old[i].value.text for i in decision.hit] == ["Ravi"]


def test_units_said_together_never_replace_each_other_unless_one_corrects() -> None:
    from uuid import uuid4

    from app.db.models import MemoryUnit
    from app.resolve.order import said_together

    session = uuid4()

    def unit(seqs: list[int], tag: str = "fact") -> MemoryUnit:
        return MemoryUnit(content="x", tags=[tag], session_id=session, source_seqs=seqs)

    assert said_together(unit([2]), unit([2]))  # "I moved to Lisbon and I work as a pharmacist"
    assert not said_together(unit([2]), unit([4]))
    assert not said_together(unit([2]), unit([2], "correction"))  # "It's 5. Sorry, 6."
    # two parts of one correction ("I said it wrong, it's the 20th; I mixed up the cards")
    assert said_together(unit([2], "correction"), unit([2], "correction"))


@pytest.mark.parametrize(
    ("old", "new", "residual"),
    [
        # one value of the clause changes: the clause stays, said with the new one
        ("My design review is on June 9 in room A301.", "The design review moved to room B115.", "B115"),
        (
            "我们组周会在周二，地点是3号会议室。",
            "周会改到周四了",
            None,
        ),  # a clause of one typed value ends whole
        # every value the clause says is replaced: nothing of it stays
        ("周会固定在周二下午三点", "周会挪到周四上午十点", None),
    ],
)
def test_a_clause_whose_one_value_changes_stays_with_the_new_one(
    old: str, new: str, residual: str | None
) -> None:
    olds, news = extract(old), extract(new)
    decision = decide(news, [("old", olds)], related_frames)
    assert decision is not None
    assert decision.action == "supersede", decision
    still = residue(olds, decision.hit, False, decision.kept, decision.replaced)
    said = [c.text for c in still]
    if residual is None:
        assert not any(c.value.text in new for c in still), said
    else:
        assert any(residual in t for t in said), said
        assert olds[0].text not in said, said
