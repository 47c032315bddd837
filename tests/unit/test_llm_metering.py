"""What the JSON chat client records of each call (against a scripted OpenAI-compatible server, the real
SDK over HTTP), the token estimate, a model per operation, and the budget's arithmetic."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime

import pytest
from fastapi import FastAPI

from app.config import ModelPrice
from app.distill.llm import LLMDistiller
from app.maintenance.summary import LLMSummarizer
from app.providers.llm import JSONChatClient
from app.providers.metering import LLMCall, charging, count_message_tokens, count_tokens, current_charge
from app.resolve.judge import JudgedUnit, LLMJudge
from app.usage.budget import Prices, Spending, day_of
from tests.factories import context, llm_settings, unit, units_json
from tests.fake_openai import ChatStep, chat_bodies, error, reply, script

JOB = uuid.UUID("22222222-2222-4222-8222-222222222222")


class Calls:
    """A CallRecorder that keeps what it is given."""

    def __init__(self) -> None:
        self.calls: list[LLMCall] = []

    async def record(self, call: LLMCall) -> None:
        self.calls.append(call)


@pytest.fixture
def fake(server: tuple[FastAPI, str]) -> tuple[FastAPI, str]:
    app, _ = server
    app.state.requests = []
    app.state.chat_script = [ChatStep()]
    return server


@pytest.fixture
def recorded(fake: tuple[FastAPI, str], chat_client: Callable[..., JSONChatClient]) -> tuple[Calls, Callable]:
    calls = Calls()
    return calls, lambda **options: chat_client(recorder=calls, **options)


async def test_each_call_is_recorded_with_the_servers_usage_charged_to_the_bank_and_job(
    fake: tuple[FastAPI, str], recorded: tuple[Calls, Callable[..., JSONChatClient]]
) -> None:
    app, _ = fake
    calls, make = recorded
    script(app, reply(units_json(unit()), prompt_tokens=120, completion_tokens=30))
    distiller = LLMDistiller(make(operation="distill"))
    with charging("bank-a", JOB):
        await distiller.distill(context())
    [call] = calls.calls
    assert (call.operation, call.model, call.outcome) == ("distill", "test-model", "ok")
    assert not call.estimated
    assert (call.prompt_tokens, call.completion_tokens) == (120, 30)
    assert (call.bank_id, call.job_id) == ("bank-a", JOB)
    assert call.latency_ms >= 0
    assert current_charge().bank_id is None  # the charge ends with its block


async def test_an_invalid_reply_and_its_corrective_retry_are_two_records(
    fake: tuple[FastAPI, str], recorded: tuple[Calls, Callable[..., JSONChatClient]]
) -> None:
    app, _ = fake
    calls, make = recorded
    script(app, reply("not json at all", prompt_tokens=50, completion_tokens=4), reply(units_json(unit())))
    await LLMDistiller(make(operation="distill")).distill(context())
    assert [(c.outcome, c.prompt_tokens, c.completion_tokens) for c in calls.calls] == [
        ("invalid", 50, 4),
        ("ok", 10, 5),
    ]
    assert {c.bank_id for c in calls.calls} == {None}  # nothing set a charge: the call is bank-less


async def test_a_refused_json_schema_and_a_failed_request_are_recorded_without_tokens(
    fake: tuple[FastAPI, str], recorded: tuple[Calls, Callable[..., JSONChatClient]]
) -> None:
    app, _ = fake
    calls, make = recorded
    verdict = json.dumps({"replaces": False, "reason": "compatible"})
    script(app, error(400, "response_format json_schema is not supported"), reply(verdict))
    judge = LLMJudge(make(operation="judge"))
    older = newer = _judged()
    await judge.judge(older, newer)
    script(app, error(500))
    await judge.judge(older, newer)  # fails open
    assert [(c.operation, c.outcome, c.prompt_tokens, c.completion_tokens) for c in calls.calls] == [
        ("judge", "refused", 0, 0),
        ("judge", "ok", 10, 5),
        ("judge", "error", 0, 0),
    ]


async def test_a_reply_without_usage_is_estimated_and_marked(
    fake: tuple[FastAPI, str], recorded: tuple[Calls, Callable[..., JSONChatClient]]
) -> None:
    app, _ = fake
    calls, make = recorded
    content = units_json(unit())
    script(app, reply(content, usage=False))
    result = await LLMDistiller(make(operation="distill")).distill(context())
    [call] = calls.calls
    [body] = chat_bodies(app)
    assert call.estimated
    assert call.prompt_tokens == count_message_tokens(body["messages"]) > 100
    assert call.completion_tokens == count_tokens(content) > 10
    # The job's own usage counts the same estimate as the ledger.
    assert result.usage["prompt_tokens"] == call.prompt_tokens


def test_the_token_estimate_counts_words_and_cjk_characters() -> None:
    assert count_tokens("") == 0
    english = count_tokens("I want to buy a laptop, my budget is 5000.")
    assert 8 <= english <= 16
    chinese = count_tokens("我想买一台笔记本电脑，预算是5000元。")
    assert 12 <= chinese <= 24
    assert count_message_tokens([{"role": "user", "content": "hello"}]) == 4 + count_tokens("hello")


async def test_a_model_per_operation_and_a_banks_own_model(
    fake: tuple[FastAPI, str], chat_client: Callable[..., JSONChatClient]
) -> None:
    app, base_url = fake
    settings = llm_settings(
        llm_base_url=base_url,
        llm_model="default-model",
        llm_model_distill="distill-model",
        llm_model_judge="judge-model",
    )
    assert settings.llm_model_for("distill") == "distill-model"
    assert settings.llm_model_for("judge") == "judge-model"
    assert settings.llm_model_for("summarise") == "default-model"  # not set: the default
    distiller = LLMDistiller.from_settings(settings)
    judge = LLMJudge.from_settings(settings)
    summarizer = LLMSummarizer.from_settings(settings)
    try:
        assert (distiller.version, judge.model) == ("llm-1:distill-model", "judge-model")
        script(app, reply(units_json(unit())))
        await distiller.distill(context())
        own = distiller.with_model("bank-model")
        assert own.version == "llm-1:bank-model"
        assert distiller.with_model("bank-model") is own
        await own.distill(context())
        script(app, reply(json.dumps({"replaces": False, "reason": "x"})))
        await judge.judge(_judged(), _judged())
        await judge.judge(_judged(), _judged(), model="bank-judge")
        script(app, reply(json.dumps({"content": "One sentence."})))
        await summarizer.summarize(["a", "b"])
        await summarizer.summarize(["a", "b"], model="bank-summary")
    finally:
        for client in (distiller, judge, summarizer):
            await client.aclose()
    assert [b["model"] for b in chat_bodies(app)] == [
        "distill-model",
        "bank-model",
        "judge-model",
        "bank-judge",
        "default-model",
        "bank-summary",
    ]


def test_prices_and_spending() -> None:
    prices = Prices({"m": ModelPrice(prompt=1.0, completion=4.0)}, "EUR")
    assert prices.cost("m", 1_000_000, 500_000) == pytest.approx(3.0)
    assert prices.cost("unpriced", 10, 10) is None
    assert prices.total({"m": (2_000_000, 0), "unpriced": (5, 5)}) == pytest.approx(2.0)
    assert prices.total({"unpriced": (5, 5)}) is None
    assert not Spending("bank", 99, None, 100, None).spent
    assert Spending("bank", 100, None, 100, None).spent
    assert Spending("bank", 0, None, 0, None).spent  # a zero budget: no LLM at all
    assert Spending("global", 10, 2.5, None, 2.0).spent
    assert not Spending("global", 10, None, None, 2.0).spent  # no price: money is never spent
    assert not Spending("bank", 10**9, 10.0, None, None).spent  # no budget
    day, start, resets = day_of(datetime(2026, 12, 2, 23, 30, tzinfo=UTC))
    assert (day, start.hour, resets) == (date(2026, 12, 2), 0, datetime(2026, 12, 3, tzinfo=UTC))


def _judged() -> JudgedUnit:
    return JudgedUnit(content="Alice's budget is 5000.", tags=["constraint.budget"], said_at=None)


async def test_a_ledger_that_cannot_write_counts_the_call_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from prometheus_client import REGISTRY
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from app.usage.ledger import Ledger

    engine = create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:9/none")  # nothing listens on 9
    labels = {"operation": "judge", "model": "metered-model", "outcome": "ok"}
    tokens = {"operation": "judge", "model": "metered-model", "kind": "completion"}
    before = REGISTRY.get_sample_value("hindsight_llm_calls_total", labels) or 0.0
    tokens_before = REGISTRY.get_sample_value("hindsight_llm_tokens_total", tokens) or 0.0
    call = LLMCall("judge", "metered-model", 70, 7, False, 25, "ok", "bank-a", JOB)
    try:
        await Ledger(async_sessionmaker(engine)).record(call)
    finally:
        await engine.dispose()
    assert REGISTRY.get_sample_value("hindsight_llm_calls_total", labels) == before + 1
    assert REGISTRY.get_sample_value("hindsight_llm_tokens_total", tokens) == tokens_before + 7
    assert "not recorded in the ledger" in caplog.text
