"""The evolution suite (bench/suites/evolution, measured by `python -m bench.truth`): its shape, the
integrity of every case, the dev/holdout split, the checker, and a small fixed sample of dev cases run
through the real stack in both modes. The quality figures are the benchmark's to report; nothing here
asserts today's supersede recall."""

from __future__ import annotations

import collections
from typing import Any

import httpx

from bench.truth.check import check
from bench.truth.report import figures, summarise, table
from bench.truth.runner import run_all
from bench.truth.suite import MODES, Case, Write, holds, load, problems, split_of

# One dev case of each family: a change with a turn in between, a conversational correction, a partial
# update, a near miss, a hedged statement, an additive fact; both languages.
SAMPLE = [
    "shop-zh-gap-laptop-budget",
    "ops-en-correct-oncall",
    "travel-en-partial-trip",
    "shop-en-near-monitor-budget",
    "fin-zh-hedged",
    "work-zh-additive",
]


def test_the_suite_has_the_shape_the_issue_asks_for() -> None:
    cases = load()
    langs = collections.Counter(c.lang for c in cases)
    assert len(cases) >= 150
    assert set(langs) == {"en", "zh"}
    assert abs(langs["en"] - langs["zh"]) <= len(cases) * 0.1
    assert len({c.domain for c in cases}) >= 8
    assert sum(c.negative for c in cases) >= 0.4 * len(cases)
    assert len({c.id for c in cases}) == len(cases)
    for lang in ("en", "zh"):
        kinds = {c.kind for c in cases if c.lang == lang}
        assert {"change", "restatement", "correction", "retirement", "partial"} <= kinds
        assert {"near_miss", "other_subject", "hedged", "additive"} <= kinds
    assert all(any(len(c.turns) > 3 for c in cases if c.lang == lang) for lang in ("en", "zh"))


def test_every_case_can_measure_what_it_claims() -> None:
    cases = load()
    assert all(c.question and (c.current or c.keep or c.kind == "retirement") for c in cases)
    assert {c.id: problems(c) for c in cases if problems(c)} == {}


def test_the_split_is_stable_and_roughly_balanced() -> None:
    cases = load()
    assert split_of("life-en-change-move") == split_of("life-en-change-move")
    for lang in ("en", "zh"):
        mine = [c for c in cases if c.lang == lang]
        dev = sum(c.split == "dev" for c in mine)
        assert 0.35 * len(mine) <= dev <= 0.65 * len(mine), (lang, dev, len(mine))
    halves = {c.split for c in cases if c.negative} & {c.split for c in cases if not c.negative}
    assert halves == {"dev", "holdout"}


def test_a_case_with_a_flawed_value_is_reported() -> None:
    flawed = Case(
        id="x",
        lang="en",
        domain="finance",
        kind="near_miss",
        turns=[{"role": "user", "content": "My phone budget is 600."}],
        writes=[Write("My phone budget is 600.", ["fact"]), Write("Headphones: 600 or less.", ["fact"])],
        question="What is my phone budget?",
        current=["200"],
        keep=["600"],
    )
    assert any("current '200'" in p for p in problems(flawed))
    assert any("repeated by the new statement" in p for p in problems(flawed))


def test_values_match_with_digits_commas_and_case_normalised() -> None:
    assert holds("The budget is 5,000 euros", "5000")
    assert holds("预算是５０００元", "5000")
    assert not holds("The budget is 15000", "5000")
    assert holds("Moved to BRISTOL", "Bristol")
    assert holds("是9091，9090被占了", "9091")  # a comma between two numbers is no thousands separator
    assert not holds("是9091，9090被占了", "909")


def _case(kind: str, **values: list[str]) -> Case:
    return Case("c", "en", "work", kind, [], [Write("x", ["fact"])], "q?", **values)


def test_the_checker_tells_a_right_supersede_from_a_wrong_one() -> None:
    change = _case("change", current=["Bristol"], stale=["Leeds"])
    right = check(change, "direct", ["I moved from Leeds to Bristol."], ["I moved from Leeds to Bristol."])
    assert right.superseded_right
    still = check(change, "direct", ["I live in Leeds.", "I live in Bristol."], ["I live in Bristol."])
    assert still.top_current
    assert not still.stale_gone
    assert not still.superseded_right
    wrong_first = check(change, "direct", ["I live in Bristol."], ["I live in Leeds.", "I live in Bristol."])
    assert wrong_first.stale_gone
    assert not wrong_first.superseded_right

    near = _case("near_miss", current=["180"], keep=["650"])
    lost = check(near, "conversation", ["Headphones: 180."], ["Headphones: 180."])
    assert lost.false_supersede
    assert lost.new_kept
    assert not lost.answered
    kept = check(near, "conversation", ["Phone: 650.", "Headphones: 180."], ["Phone: 650."])
    assert not kept.false_supersede
    assert kept.answered

    # a retirement with no successor: right when what ended is neither active nor answered first
    ended = _case("retirement", stale=["Netflix"])
    quiet = check(ended, "direct", ["I cancelled it last week."], ["I cancelled it last week."])
    assert quiet.superseded_right
    leading = check(ended, "direct", ["I cancelled it."], ["We pay for Netflix.", "I cancelled it."])
    assert not leading.top_current

    partial = _case("partial", current=["Oslo"], stale=["Lisbon"], keep=["Contoso"])
    half_lost = check(partial, "direct", ["I live in Oslo."], ["I live in Oslo."])
    assert half_lost.superseded_right
    assert half_lost.kept_lost == 1
    counts = figures([right, still, lost, kept, half_lost])
    assert counts["superseded_right"] == 2
    assert counts["false_supersedes"] == 1
    assert counts["partial_halves_lost"] == 1


async def test_a_sample_of_dev_cases_runs_through_the_stack_in_both_modes(
    client: httpx.AsyncClient, worker: Any
) -> None:
    by_id = {c.id: c for c in load()}
    sample = [by_id[i] for i in SAMPLE]
    assert {c.split for c in sample} == {"dev"}
    outcomes = await run_all(client, sample, MODES, concurrency=4)
    assert [(o.case_id, o.mode) for o in outcomes] == [(c.id, m) for c in sample for m in MODES]
    assert [o.error for o in outcomes] == [None] * len(outcomes)
    # Each run stored its statements and answered its question (what it found is the benchmark's figure).
    assert all(o.seen and o.seen["active"] and o.seen["ranked"] for o in outcomes)
    rows = summarise(outcomes)
    assert {(r["lang"], r["mode"]) for r in rows if r["half"] == "dev"} >= {
        (lang, mode) for lang in ("en", "zh") for mode in MODES
    }
    dev = next(r for r in rows if (r["half"], r["lang"]) == ("dev", "all"))
    assert (dev["changes"], dev["negatives"], dev["partial"]) == (6, 6, 2)
    assert "| dev | all | all |" in table(rows)
