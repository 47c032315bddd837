"""Fusion, decay and the query-side text helpers (pure functions)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.query.channels import Hit
from app.query.fusion import active_channels, effective_weights, fuse, on_topic, relevant
from app.query.service import entity_candidates, keywords
from app.query.tags import infer_tags
from app.query.tuning import DEFAULT_WEIGHTS

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
A, B, C = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()


def hit(channel: str, memory_id: uuid.UUID, rank: int, score: float = 0.5, **extra: object) -> Hit:
    fields: dict[str, object] = {
        "importance": 0.5,
        "layer": "episodic",
        "tags": ["fact"],
        "valid_from": NOW,
        "created_at": NOW,
        "sources": [],
    }
    fields.update(extra)
    return Hit(channel, memory_id, rank, score, **fields)  # type: ignore[arg-type]


def test_rrf_favours_agreement_and_scales_the_best_to_one() -> None:
    hits = [hit("semantic", A, 1), hit("keyword", A, 2), hit("semantic", B, 2), hit("keyword", C, 1)]
    ranked = fuse(hits, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)
    assert ranked[0].memory_id == A
    assert ranked[0].score == pytest.approx(1.0)  # importance 0.5 → boost 1.0, facts do not decay
    assert set(ranked[0].channels) == {"semantic", "keyword"}
    assert all(0 < u.score < 1 for u in ranked[1:])


def test_a_weak_channel_lifts_a_unit_a_few_ranks_not_past_the_strong_channels_top() -> None:
    # a tag match (weight 0.3) moves a unit up some places of the semantic channel, not from fifteenth
    # to first: the strong channels' first ranks stand ahead of their tail
    lifted = [hit("semantic", A, 1), hit("semantic", B, 15), hit("tag", B, 1)]
    assert [u.memory_id for u in fuse(lifted, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)] == [A, B]
    near = [hit("semantic", A, 1), hit("semantic", B, 3), hit("tag", B, 1)]
    assert [u.memory_id for u in fuse(near, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)] == [B, A]


def test_decay_counts_on_the_bank_s_clock_not_the_wall_clock() -> None:
    # a bank of conversations held three years ago: its episode is as fresh as its fact, on its own clock
    then = NOW - timedelta(days=3 * 365)
    hits = [hit("semantic", A, 1, tags=["episode"], valid_from=then), hit("semantic", B, 2, valid_from=then)]
    assert [u.memory_id for u in fuse(hits, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)] == [A, B]
    # ...and a newer unit found beside them sets the clock: the old episode fades against it
    fresh = hit("semantic", C, 3, tags=["fact"], valid_from=NOW)
    assert fuse([*hits, fresh], "rrf", DEFAULT_WEIGHTS["rrf"], NOW)[0].memory_id == B


def test_a_zero_weight_turns_a_channel_off() -> None:
    weights = effective_weights("rrf", None, {"keyword": 0.0, "semantic": None})
    assert weights["semantic"] == DEFAULT_WEIGHTS["rrf"]["semantic"]
    assert "keyword" not in active_channels(weights)
    ranked = fuse([hit("keyword", C, 1), hit("semantic", A, 5)], "rrf", weights, NOW)
    assert ranked[0].memory_id == A
    assert ranked[-1].score == 0


def test_decay_by_tag_and_importance_boost() -> None:
    old = NOW - timedelta(days=400)
    hits = [
        hit("semantic", A, 1, tags=["episode"], valid_from=old),
        hit("semantic", B, 2, tags=["fact.work"], valid_from=old),
        hit("semantic", C, 3, tags=["fact.work"], valid_from=old, importance=1.0),
        hit("semantic", uuid.uuid4(), 4, tags=["episode"], valid_from=NOW),  # the bank's clock: today
    ]
    scores = {u.memory_id: u.score for u in fuse(hits, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)}
    assert scores[A] < scores[B]  # an episode older than its half-life has decayed towards half (a fact not)
    assert scores[A] >= 0.5 * 0.9 * 0.99
    assert scores[C] > scores[B] * 0.9  # importance lifts a lower rank


def test_weighted_uses_channel_scores_on_a_unit_scale() -> None:
    hits = [hit("semantic", A, 1, score=0.9), hit("tag", A, 1, score=0.8), hit("semantic", B, 2, score=0.4)]
    ranked = fuse(hits, "weighted", DEFAULT_WEIGHTS["weighted"], NOW)
    assert ranked[0].memory_id == A
    assert ranked[0].score == pytest.approx(0.5 * 0.9 + 0.3 * 1.0)
    assert ranked[1].score == pytest.approx(0.5 * 0.4)


def test_keywords_are_the_content_words() -> None:
    assert keywords("What is my budget for the Lisbon trip?") == ["budget", "lisbon", "trip"]
    assert keywords("what is it?") == []
    chinese = keywords("我的预算是多少？")
    assert "预算" in chinese
    assert "的" not in chinese


def test_entity_candidates_are_spans_of_the_query() -> None:
    spans = entity_candidates("Where did Caroline move from New York?", ["ORD-12345"])
    assert {"caroline", "new york", "ord-12345"} <= set(spans)
    assert "where" not in spans
    assert "上海" in entity_candidates("张伟住在上海吗", None)


def test_a_name_the_request_gives_is_never_cut_by_a_long_query() -> None:
    long = " ".join(f"topic{i} detail{i}" for i in range(20)) + " and what about everything else?"
    assert "bob" in entity_candidates(long, ["Bob"])


@pytest.mark.parametrize(
    ("query", "tag"),
    [
        ("what is my budget?", "constraint.budget"),
        ("我的预算是多少？", "constraint.budget"),
        ("where does she live?", "fact.location"),
        ("what food does he like?", "preference"),
        ("How did we handle the damaged order last time?", "episode.task"),
        ("上次订单破损是怎么处理的？", "episode.task"),
    ],
)
def test_tags_inferred_from_the_query(query: str, tag: str) -> None:
    assert tag in infer_tags(query)


def test_only_a_question_about_a_past_task_infers_task_episodes() -> None:
    assert "episode.task" not in infer_tags("What is my order number?")
    assert "episode.task" not in infer_tags("Where does Caroline live?")


def test_a_task_episode_the_tag_channel_found_comes_first() -> None:
    task = {"tags": ["episode.task"]}
    hits = [hit("semantic", A, 1), hit("semantic", B, 2, **task), hit("tag", B, 1, **task)]
    assert [u.memory_id for u in fuse(hits, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)][:2] == [B, A]
    # Without the tag channel's vote (a question about something else), no boost: rank decides.
    plain = [hit("semantic", A, 1), hit("semantic", B, 2, **task)]
    assert [u.memory_id for u in fuse(plain, "rrf", DEFAULT_WEIGHTS["rrf"], NOW)][:2] == [A, B]


def test_the_time_window_is_evidence_only_for_a_question_about_the_window_alone() -> None:
    in_window = fuse(
        [hit("temporal", A, 1), hit("semantic", A, 40, score=0.1)], "rrf", DEFAULT_WEIGHTS["rrf"], NOW
    )
    assert not relevant(in_window[0], 0.3, window_asked=False)  # "the weather on Mars tonight"
    assert relevant(in_window[0], 0.3, window_asked=True)  # "what did we talk about tonight?"
    on = fuse([hit("temporal", B, 2), hit("semantic", B, 1, score=0.6)], "rrf", DEFAULT_WEIGHTS["rrf"], NOW)
    assert on_topic(on[0], 0.3)
    assert relevant(on[0], 0.3, window_asked=False)


def test_verbs_of_saying_are_no_keywords() -> None:
    assert keywords("Did I mention my budget?") == ["budget"]
    assert keywords("我说过预算吗？") == ["预算"]
