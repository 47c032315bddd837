"""The rerank stage on the real stack against a local fake rerank server (tests/fake_rerank.py) in both
shapes (TEI `/rerank`, Cohere/Jina/vLLM `/v1/rerank`): it reorders the fused top N, `explain` shows its
score, the bank and the request turn it off, a slow or failing reranker leaves the fused order and says
why, and a superseded value never comes back through it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import ADMIN_KEY, Stack, assert_problem, make_client, running_app
from tests.factories import make_bank, ok, write
from tests.fake_rerank import create_fake_rerank, serve_rerank

# Every test that wants the stage applied gives it a generous budget: the machine running the tests may
# be loaded; the budget itself is tested with a reranker far slower than its budget.
ROOMY = {"rerank": {"budget_ms": 10_000}}
FRUITS = [
    "The user's favourite fruit for breakfast is mango.",
    "The user's favourite fruit in summer is watermelon.",
    "The user's favourite fruit for baking is apple.",
    "The user's favourite fruit to share is cherries.",
]


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FastAPI, str]]:
    app = create_fake_rerank()
    with serve_rerank(app) as url:
        yield app, url


@pytest.fixture
def reranker(fake: tuple[FastAPI, str]) -> FastAPI:
    """The fake, reset: no delay, no failure, no favourite, nothing received."""
    app, _ = fake
    app.state.delay, app.state.status, app.state.favour, app.state.garbage = 0.0, 200, (), False
    app.state.requests.clear()
    return app


@pytest.fixture(scope="module", params=["tei", "cohere"])
async def api(request: pytest.FixtureRequest, stack: Stack, fake: tuple[FastAPI, str]) -> AsyncIterator[Any]:
    """The app with HINDSIGHT_RERANK_URL at the fake, speaking one shape or the other."""
    from app.config import get_settings

    _, url = fake
    kind = request.param
    update = {
        "rerank_url": url,
        "rerank_kind": kind,
        "rerank_model": "fake-reranker" if kind != "tei" else None,
    }
    async with running_app(get_settings().model_copy(update=update)) as application:
        yield application


@pytest.fixture
async def client(api: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(api, ADMIN_KEY) as c:
        yield c


async def ask(client: httpx.AsyncClient, bank: str, query: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": query, **extra}))
    return body


async def fruit_bank(client: httpx.AsyncClient, **config: Any) -> str:
    bank = await make_bank(client, **(ROOMY | config))
    for line in FRUITS:
        await write(client, bank, line, ["preference"])
    return bank


def ids(answer: dict[str, Any]) -> list[str]:
    return [m["id"] for m in answer["memories"]]


async def test_the_reranker_reorders_the_fused_top_n_and_explain_shows_its_score(
    client: httpx.AsyncClient, reranker: FastAPI
) -> None:
    bank = await fruit_bank(client)
    fused = await ask(client, bank, "favourite fruit", explain=True, rerank=False)
    assert fused["rerank"] == "skipped (disabled)"
    assert len(fused["memories"]) == len(FRUITS)
    assert reranker.state.requests == []
    last = fused["memories"][-1]
    reranker.state.favour = (last["content"].split()[-1].rstrip("."),)  # its fruit

    answer = await ask(client, bank, "favourite fruit", explain=True)
    assert answer["rerank"] == "applied"
    assert answer["memories"][0]["id"] == last["id"]
    assert sorted(ids(answer)) == sorted(ids(fused))  # the same units, another order
    assert all(m["rerank_score"] is not None for m in answer["memories"])
    assert answer["memories"][0]["rerank_score"] > answer["memories"][1]["rerank_score"]
    assert answer["memories"][0]["score"] == last["score"]  # `score` stays the fused one
    [(path, body)] = reranker.state.requests
    texts = body["texts"] if path == "/rerank" else body["documents"]
    assert body["query"] == "favourite fruit"
    assert sorted(texts) == sorted(FRUITS)
    if path == "/v1/rerank":
        assert (body["model"], body["top_n"]) == ("fake-reranker", len(FRUITS))
    # Under a token budget the context keeps the best units first: now the favoured one.
    tight = await ask(client, bank, "favourite fruit", max_tokens=40)
    assert [m["id"] for m in tight["memories"]] == [last["id"]]
    assert last["content"] in tight["context"]
    # Without explain, no score; top_k cuts after the reranking.
    one = await ask(client, bank, "favourite fruit", top_k=1)
    assert ids(one) == [last["id"]]
    assert one["memories"][0]["rerank_score"] is None


async def test_top_n_bounds_what_is_sent_and_the_rest_follows_in_the_fused_order(
    client: httpx.AsyncClient, reranker: FastAPI
) -> None:
    bank = await fruit_bank(client, rerank={"budget_ms": 10_000, "top_n": 2})
    fused = ids(await ask(client, bank, "favourite fruit", rerank=False))
    reranker.state.favour = ("nothing-matches",)
    answer = await ask(client, bank, "favourite fruit", explain=True)
    assert answer["rerank"] == "applied"
    [(_, body)] = reranker.state.requests
    assert len(body.get("texts") or body["documents"]) == 2
    assert set(ids(answer)[:2]) == set(fused[:2])
    assert ids(answer)[2:] == fused[2:]
    assert [m["rerank_score"] is None for m in answer["memories"]] == [False, False, True, True]


async def test_past_the_budget_the_fused_order_stands(client: httpx.AsyncClient, reranker: FastAPI) -> None:
    bank = await fruit_bank(client, rerank={"budget_ms": 50})
    fused = ids(await ask(client, bank, "favourite fruit", rerank=False))
    reranker.state.favour = ("cherries",)
    reranker.state.delay = 5.0  # a hundred times the budget
    answer = await ask(client, bank, "favourite fruit", explain=True)
    assert answer["rerank"] == "skipped (budget)"
    assert ids(answer) == fused
    assert {m["rerank_score"] for m in answer["memories"]} == {None}
    assert len(reranker.state.requests) == 1  # it was asked, and not waited for


async def test_past_the_budget_a_question_for_a_value_gets_what_it_gets_without_a_reranker(
    client: httpx.AsyncClient, reranker: FastAPI
) -> None:
    """A question for a time puts the units stating one first among its top k, the same k whether or not
    a reranker was planned and missed its budget (its top N is wider than k)."""
    bank = await make_bank(client, **(ROOMY | {"rerank": {"budget_ms": 50}}))
    for line in (
        "Everyone keeps asking when the standup is.",
        "The standup is when the team talks about blockers.",
        "Standup is at 9:30 in the small room.",
    ):
        await write(client, bank, line, ["fact"])
    unranked = await ask(client, bank, "When is the standup?", top_k=1, rerank=False)
    reranker.state.delay = 5.0  # a hundred times the budget
    answer = await ask(client, bank, "When is the standup?", top_k=1)
    assert answer["rerank"] == "skipped (budget)"
    assert ids(answer) == ids(unranked)


@pytest.mark.parametrize("failure", ["status", "garbage"])
async def test_a_failing_reranker_leaves_the_fused_order(
    client: httpx.AsyncClient, reranker: FastAPI, failure: str
) -> None:
    bank = await fruit_bank(client)
    fused = ids(await ask(client, bank, "favourite fruit", rerank=False))
    reranker.state.favour = ("cherries",)
    if failure == "status":
        reranker.state.status = 503
    else:
        reranker.state.garbage = True
    answer = await ask(client, bank, "favourite fruit")
    assert answer["rerank"] == "skipped (error)"
    assert ids(answer) == fused


async def test_the_bank_and_the_request_switch_it(client: httpx.AsyncClient, reranker: FastAPI) -> None:
    bank = await fruit_bank(client, rerank={"enabled": False, "budget_ms": 10_000})
    assert (await ask(client, bank, "favourite fruit"))["rerank"] == "skipped (disabled)"
    assert reranker.state.requests == []
    assert (await ask(client, bank, "favourite fruit", rerank=True))["rerank"] == "applied"
    # Fewer than two candidates: nothing to reorder, nothing sent.
    reranker.state.requests.clear()
    lone = await ask(client, bank, "mango breakfast", rerank=True, top_k=1, min_score=0.99)
    assert lone["rerank"] == "skipped (no candidates)"
    assert reranker.state.requests == []
    # A bad bank setting is refused.
    bad = await client.patch(f"/v1/banks/{bank}", json={"config": {"rerank": {"top_n": 1}}})
    assert_problem(bad, 422)
    bad = await client.patch(f"/v1/banks/{bank}", json={"config": {"rerank": {"budget": 5}}})
    assert_problem(bad, 422)


async def test_a_superseded_value_never_comes_back_through_the_reranker(
    client: httpx.AsyncClient, reranker: FastAPI
) -> None:
    bank = await make_bank(client, **ROOMY)
    old = await write(client, bank, "The user's budget is 5000.", ["constraint.budget"])
    new = await write(client, bank, "The user's budget is 8000.", ["constraint.budget"])
    assert new["supersedes"] == old["id"]
    await write(client, bank, "Budget airlines charge extra for seat selection.", ["fact"])
    await write(client, bank, "The quarterly budget review is on Friday.", ["fact"])
    reranker.state.favour = ("5000",)  # the reranker would put the old value first

    answer = await ask(client, bank, "budget 5000", explain=True)
    assert answer["rerank"] == "applied"
    assert new["id"] in ids(answer)
    assert old["id"] not in ids(answer)
    assert "5000" not in answer["context"]
    sent = [text for _, body in reranker.state.requests for text in body.get("texts") or body["documents"]]
    assert "The user's budget is 5000." not in sent

    # Asked for the old value too, it may rank first, and the context says it is superseded.
    both = await ask(client, bank, "budget 5000", statuses=["active", "superseded"])
    assert both["rerank"] == "applied"
    assert ids(both)[0] == old["id"]
    [line] = [x for x in both["context"].splitlines() if "5000" in x]
    assert line.endswith("[superseded]")


async def test_a_query_for_a_time_window_alone_keeps_its_order(
    client: httpx.AsyncClient, reranker: FastAPI
) -> None:
    bank = await make_bank(client, **ROOMY)
    for day, text in (
        ("2026-11-29T10:00:00Z", "We fixed the login bug."),
        ("2026-11-29T15:00:00Z", "We shipped v2."),
    ):
        response = await client.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={"content": text, "tags": ["episode"], "occurred_at": day},
        )
        assert response.status_code == 201, response.text
    answer = await ask(client, bank, "what did we do yesterday?", now="2026-11-30T12:00:00Z")
    assert len(answer["memories"]) == 2
    assert answer["rerank"] == "skipped (no topic)"
    assert reranker.state.requests == []


async def test_without_a_provider_the_stage_says_so(stack: Stack) -> None:
    from app.config import get_settings

    assert get_settings().rerank_url is None
    async with running_app(get_settings()) as plain, make_client(plain, ADMIN_KEY) as other:
        bank = await fruit_bank(other)
        answer = await ask(other, bank, "favourite fruit", explain=True)
    assert answer["rerank"] == "skipped (not configured)"
    assert {m["rerank_score"] for m in answer["memories"]} == {None}
