"""The rerank stage's decisions and the provider's shapes, without the database: where each kind of server
is called, when the stage runs (service, bank, request, query), and how the reranker's scores reorder the
fused pool, over real HTTP to the local fake rerank server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi import FastAPI

from app.claims.asked import answer_types
from app.config import Settings
from app.providers.rerank import HttpReranker, RerankError, build_reranker, endpoint
from app.query.fusion import Fused
from app.query.rerank import RerankDeps, RerankSetup, answered_first, plan_rerank, rerank_pool
from app.schemas.banks import BankConfig
from app.schemas.query import QueryRequest
from tests.fake_rerank import create_fake_rerank, serve_rerank


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FastAPI, str]]:
    app = create_fake_rerank()
    with serve_rerank(app) as url:
        yield app, url


@pytest.mark.parametrize(
    ("url", "kind", "called"),
    [
        ("http://tei:8080", "tei", "http://tei:8080/rerank"),
        ("http://tei:8080/", "tei", "http://tei:8080/rerank"),
        ("https://api.jina.ai", "jina", "https://api.jina.ai/v1/rerank"),
        ("https://api.cohere.com/v2", "cohere", "https://api.cohere.com/v2/rerank"),
        ("http://vllm:8000/v1", "vllm", "http://vllm:8000/v1/rerank"),
        ("http://proxy/score/rerank", "cohere", "http://proxy/score/rerank"),
    ],
)
def test_each_kind_of_server_is_called_where_it_listens(url: str, kind: str, called: str) -> None:
    assert endpoint(url, kind) == called


async def test_the_service_settings_make_the_provider() -> None:
    assert build_reranker(Settings(env="test")) is None
    provider = build_reranker(Settings(env="test", rerank_url="http://tei:8080", rerank_kind="tei"))
    assert provider is not None
    assert provider.url == "http://tei:8080/rerank"
    await provider.aclose()


def request(**fields: object) -> QueryRequest:
    return QueryRequest.model_validate({"query": "budget", **fields})


def test_when_the_stage_runs() -> None:
    configured = RerankDeps(provider=HttpReranker("http://x", "tei"), top_n=30, budget_ms=150)
    bank, off = BankConfig(), BankConfig.model_validate({"rerank": {"enabled": False}})
    tuned = BankConfig.model_validate({"rerank": {"top_n": 5, "budget_ms": 900}})
    assert plan_rerank(RerankDeps(), bank, request(), time_only=False, candidates=9).skipped == (
        "skipped (not configured)"
    )
    assert plan_rerank(configured, bank, request(), time_only=False, candidates=9) == RerankSetup(30, 150)
    assert plan_rerank(configured, tuned, request(), time_only=False, candidates=9) == RerankSetup(5, 900)
    assert (
        plan_rerank(configured, off, request(), time_only=False, candidates=9).skipped == "skipped (disabled)"
    )
    assert plan_rerank(configured, off, request(rerank=True), time_only=False, candidates=9).runs
    assert plan_rerank(configured, bank, request(rerank=False), time_only=False, candidates=9).skipped == (
        "skipped (disabled)"
    )
    assert (
        plan_rerank(configured, bank, request(), time_only=True, candidates=9).skipped == "skipped (no topic)"
    )
    assert plan_rerank(configured, bank, request(), time_only=False, candidates=1).skipped == (
        "skipped (no candidates)"
    )


@pytest.mark.parametrize("kind", ["tei", "cohere"])
async def test_scores_reorder_the_head_and_ties_keep_the_fused_order(
    fake: tuple[FastAPI, str], kind: str
) -> None:
    app, url = fake
    app.state.delay, app.state.status, app.state.garbage, app.state.favour = 0.0, 200, False, ("plum",)
    texts = ["a pear", "a plum", "an apple", "a plum tart", "a fig"]
    pool = [Fused(uuid.uuid4(), score=1 - i / 10) for i in range(len(texts))]
    by_id = {u.memory_id: t for u, t in zip(pool, texts, strict=True)}
    provider = HttpReranker(url, kind, "m")
    try:
        done = await rerank_pool(
            RerankDeps(provider), RerankSetup(top_n=4, budget_ms=5000), "a plum", pool, by_id
        )
    finally:
        await provider.aclose()
    assert done.outcome == "applied"
    assert [by_id[u.memory_id] for u in done.pool] == ["a plum", "a plum tart", "a pear", "an apple", "a fig"]
    assert set(done.scores) == {u.memory_id for u in pool[:4]}


async def test_an_unreadable_answer_is_an_error(fake: tuple[FastAPI, str]) -> None:
    app, url = fake
    app.state.delay, app.state.status, app.state.garbage = 0.0, 200, True
    provider = HttpReranker(url, "tei")
    try:
        with pytest.raises(RerankError):
            await provider.scores("q", ["a", "b"])
    finally:
        app.state.garbage = False
        await provider.aclose()


@pytest.mark.parametrize(
    ("question", "texts", "first"),
    [
        (
            "When is the book club now?",
            ["The book club picked a thriller.", "The book club meets on Thursdays now.", "I like the host."],
            "The book club meets on Thursdays now.",
        ),
        ("我的房租现在是多少？", ["房租是押一付三。", "房东说涨到5200了。"], "房东说涨到5200了。"),
        # what ended answers any question about it
        (
            "How much is my gym membership?",
            ["I cancelled the gym membership last week.", "The fee was 40 euros a month."],
            "I cancelled the gym membership last week.",
        ),
        # a date note the distiller added is no answer to "when"
        (
            "What time is the dentist?",
            ["Booked the dentist next week (the week of 2026-12-07).", "The dentist is at 4:15pm."],
            "The dentist is at 4:15pm.",
        ),
    ],
)
def test_a_unit_stating_the_kind_of_value_asked_for_leads(
    question: str, texts: list[str], first: str
) -> None:
    pool = [Fused(uuid.uuid4(), score=1 - i / 10) for i in range(len(texts))]
    by_id = {u.memory_id: t for u, t in zip(pool, texts, strict=True)}
    ordered = answered_first(pool, len(pool), by_id, answer_types(question))
    assert by_id[ordered[0].memory_id] == first
    assert {u.memory_id for u in ordered} == set(by_id)


def test_a_question_asking_for_no_kind_of_value_keeps_the_order() -> None:
    assert answer_types("Who is my manager?") == frozenset()
    pool = [Fused(uuid.uuid4()), Fused(uuid.uuid4())]
    assert answered_first(pool, 2, {}, answer_types("What do I do for work?")) == pool
