"""Bounded LLM cost on the real stack (issue 34): a Celery worker of this module's own distils with the
LLM distiller against a fake OpenAI-compatible server of its own that answers with `usage`. The ledger's
sums equal what the server billed, each operation calls its own model, a spent budget switches a bank to
the heuristic distiller with every turn still distilled and tells its hooks once, and the usage routes
group, price and validate."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.config import ModelPrice, get_settings
from tests.conftest import (
    ADMIN_KEY,
    Stack,
    assert_problem,
    make_client,
    running_app,
    start_worker,
    stop_worker,
)
from tests.conftest import wait_for as wait_until
from tests.factories import Receiver, create_hook, events, finished_job, make_bank, ok, settled, units
from tests.fake_openai import ChatStep, chat_bodies, create_fake_openai, mirror, serve

MODELS = {
    "llm_model": "default-model",
    "llm_model_distill": "distill-model",
    "llm_model_judge": "judge-model",
}
PRICES = {"distill-model": ModelPrice(prompt=1.0, completion=2.0)}  # per million tokens; judge-model: none


@pytest.fixture(scope="module")
def llm() -> Iterator[tuple[FastAPI, str]]:
    fake = create_fake_openai()
    with serve(fake) as url:
        yield fake, url


@pytest.fixture(scope="module")
def broker(stack: Stack) -> str:
    """A broker of the module's own: its worker, not the shared one, takes the jobs its app sends."""
    return stack.redis_url.rsplit("/", 1)[0] + "/7"


@pytest.fixture(scope="module")
def llm_worker(
    stack: Stack, llm: tuple[FastAPI, str], broker: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    env = {f"HINDSIGHT_{key.upper()}": value for key, value in MODELS.items()}
    proc = start_worker(
        stack,
        tmp_path_factory.mktemp("llm-cost") / "worker.log",
        "llm-cost@localhost",
        HINDSIGHT_BROKER_URL=broker,
        HINDSIGHT_DISTILLER="llm",
        HINDSIGHT_LLM_BASE_URL=llm[1],
        HINDSIGHT_LLM_MAX_RETRIES="0",
        **env,
    )
    yield proc
    stop_worker(proc)


@pytest.fixture(scope="module")
async def cost_app(stack: Stack, llm: tuple[FastAPI, str], broker: str) -> AsyncIterator[Any]:
    update = {
        "broker_url": broker,
        "distiller": "llm",
        "llm_base_url": llm[1],
        "llm_prices": PRICES,
        **MODELS,
    }
    async with running_app(get_settings().model_copy(update=update)) as application:
        yield application


@pytest.fixture
async def admin(cost_app: Any, llm: tuple[FastAPI, str]) -> AsyncIterator[httpx.AsyncClient]:
    fake, _ = llm
    fake.state.chat_script = [ChatStep(answer=mirror, prompt_tokens=None, completion_tokens=None)]
    async with make_client(cost_app, ADMIN_KEY) as c:
        yield c


async def distil(
    client: httpx.AsyncClient, bank: str, lines: list[str], *, close: bool = False
) -> dict[str, Any]:
    """Append user turns to session `s` and distil them now (or close the session, which distils what
    is left); the finished job, once the bank has settled."""
    turns = events([("user", line) for line in lines])
    ok(await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": turns}), 202)
    action = "close" if close else "distill"
    accepted = ok(await client.post(f"/v1/banks/{bank}/sessions/s/{action}"), 200 if close else 202)
    job = await finished_job(client, accepted["job_id"])
    assert job["status"] == "succeeded", job
    await wait_until(lambda: settled(client, bank))
    return job


async def usage(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    report: dict[str, Any] = ok(await client.get(path, params=params))
    return report


def schema_of(body: dict[str, Any]) -> str:
    return str(body["response_format"]["json_schema"]["name"])


async def test_the_ledger_sums_equal_the_servers_usage_and_each_operation_calls_its_model(
    admin: httpx.AsyncClient, llm: tuple[FastAPI, str], llm_worker: Any, sql: Any
) -> None:
    fake, _ = llm
    fake.state.requests.clear()
    fake.state.usage_sent.clear()
    bank = await make_bank(admin, distill_every_n_turns=1000)
    first = await distil(admin, bank, ["My budget is 5000 dollars.", "I live in Lisbon with my sister."])
    second = await distil(admin, bank, ["I prefer window seats on long flights.", "My order is ORD-12345."])
    third = await distil(admin, bank, ["My sister works at Acme.", "I moved to Porto in May."], close=True)

    sent = fake.state.usage_sent
    assert sent["calls"] >= 3  # a call per distillation, and the judge's when it was asked
    report = await usage(admin, f"/v1/banks/{bank}/usage", group_by="operation")
    totals = report["totals"]
    assert (totals["calls"], totals["prompt_tokens"], totals["completion_tokens"]) == (
        sent["calls"],
        sent["prompt_tokens"],
        sent["completion_tokens"],
    )
    assert (totals["estimated_calls"], totals["failed_calls"]) == (0, 0)
    # Each operation's requests went to its own model, and the ledger files them under it.
    bodies = chat_bodies(fake)
    asked = {(schema_of(b), b["model"]) for b in bodies}
    assert ("memory_units", "distill-model") in asked
    assert asked <= {("memory_units", "distill-model"), ("conflict_verdict", "judge-model")}
    by_operation = {g["key"]: g for g in report["groups"]}
    assert by_operation["distill"]["calls"] == sum(schema_of(b) == "memory_units" for b in bodies)
    assert by_operation.get("judge", {"calls": 0})["calls"] == sum(
        schema_of(b) == "conflict_verdict" for b in bodies
    )
    by_model = {
        g["key"]: g for g in (await usage(admin, f"/v1/banks/{bank}/usage", group_by="model"))["groups"]
    }
    distill = by_model["distill-model"]
    assert distill["cost"] == pytest.approx(
        (distill["prompt_tokens"] + 2 * distill["completion_tokens"]) / 1e6
    )
    assert set(by_model) <= {"distill-model", "judge-model"}
    # Every distillation call is charged to its job.
    rows = await sql(
        "SELECT DISTINCT job_id FROM llm_calls WHERE bank_id = :bank AND operation = 'distill'", bank=bank
    )
    assert {str(r["job_id"]) for r in rows} == {first["id"], second["id"], third["id"]}
    assert first["result"]["usage"]["calls"] == 1
    assert "fallback" not in first["result"]
    assert {u["distiller"] for u in await units(sql, bank)} == {"llm-1:distill-model"}


async def test_a_spent_budget_switches_the_bank_to_the_heuristic_distiller_and_tells_its_hooks_once(
    admin: httpx.AsyncClient, llm: tuple[FastAPI, str], llm_worker: Any, sql: Any, receiver: Receiver
) -> None:
    fake, _ = llm
    bank = await make_bank(admin, distill_every_n_turns=1000, llm_daily_tokens=1)
    await create_hook(admin, bank, receiver.url(), ["budget.exhausted"])
    fake.state.requests.clear()
    first = await distil(admin, bank, ["My budget is 5000 dollars.", "I live in Lisbon."])
    assert "fallback" not in first["result"]  # the day's first batch finds the budget whole
    assert first["result"]["distiller"] == "llm-1:distill-model"
    assert len(chat_bodies(fake)) >= 1
    calls_before = len([b for b in chat_bodies(fake) if schema_of(b) == "memory_units"])

    later = ["I prefer window seats.", "My order number is ORD-12345.", "My sister lives in Berlin."]
    second = await distil(admin, bank, later[:2])
    third = await distil(admin, bank, later[2:], close=True)

    # No distillation call once the budget was spent: the heuristic distiller ran, and the jobs say why.
    assert len([b for b in chat_bodies(fake) if schema_of(b) == "memory_units"]) == calls_before
    for job in (second, third):
        assert job["result"]["distiller"] == "heuristic-3"
        fallback = job["result"]["fallback"]
        assert (fallback["reason"], fallback["budget"], fallback["limit_tokens"]) == (
            "budget.exhausted",
            "bank",
            1,
        )
        assert fallback["instead_of"] == "llm-1:distill-model"
        assert fallback["tokens"] >= 1
    # Nothing dropped: every turn is distilled, each later turn into a unit of the heuristic distiller.
    session = ok(await admin.get(f"/v1/banks/{bank}/sessions/s"))
    assert session["distilled_seq"] == session["last_seq"] == 5
    heuristic = [u for u in await units(sql, bank) if u["distiller"] == "heuristic-3"]
    assert {seq for u in heuristic for seq in u["source_seqs"]} >= {3, 4, 5}
    # The hooks heard of it once, though three jobs (and the resolutions between) found it spent.
    told = await wait_until(lambda: _told(receiver))
    [event] = told
    assert event["data"]["bank_id"] == bank
    assert (event["data"]["budget"], event["data"]["limit_tokens"]) == ("bank", 1)
    [noted] = await sql("SELECT day, budget FROM llm_budget_exhaustions WHERE bank_id = :bank", bank=bank)
    assert (event["data"]["day"], noted["budget"]) == (noted["day"].isoformat(), "bank")
    assert event["data"]["resets_at"] == f"{noted['day'] + timedelta(days=1)}T00:00:00+00:00"
    rows = await sql(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE bank_id = :bank AND event = 'budget.exhausted'",
        bank=bank,
    )
    assert rows[0]["n"] == 1
    report = await usage(admin, f"/v1/banks/{bank}/usage")
    assert report["budget"]["exhausted"] == "bank"
    assert report["budget"]["bank"]["spent"] is True
    assert report["totals"]["calls"] == calls_before + len(
        [b for b in chat_bodies(fake) if schema_of(b) == "conflict_verdict"]
    )


async def _told(receiver: Receiver) -> list[dict[str, Any]]:
    return [e for e in receiver.events() if e["type"] == "budget.exhausted"]


LEDGER = [
    # (bank, at, operation, model, prompt, completion, estimated, latency_ms, outcome)
    ("a", "2025-03-01T10:00:00+00:00", "distill", "distill-model", 100, 10, False, 100, "ok"),
    ("a", "2025-03-01T11:00:00+00:00", "distill", "distill-model", 50, 5, False, 300, "invalid"),
    ("a", "2025-03-02T23:30:00+00:00", "judge", "judge-model", 20, 2, True, 50, "ok"),
    ("b", "2025-03-02T12:00:00+00:00", "summarise", "default-model", 7, 1, False, 10, "ok"),
]


async def test_the_usage_routes_group_price_and_validate(
    admin: httpx.AsyncClient, cost_app: Any, sql: Any
) -> None:
    a = await make_bank(admin, timezone="Asia/Shanghai")
    b = await make_bank(admin)
    for bank, at, operation, model, prompt, completion, estimated, latency, outcome in LEDGER:
        await sql(
            "INSERT INTO llm_calls (bank_id, job_id, operation, model, prompt_tokens, completion_tokens,"
            " estimated, latency_ms, outcome, created_at) VALUES (:bank, :job, :operation, :model, :prompt,"
            " :completion, :estimated, :latency, :outcome, :at)",
            bank={"a": a, "b": b}[bank],
            job=uuid.uuid4(),
            operation=operation,
            model=model,
            prompt=prompt,
            completion=completion,
            estimated=estimated,
            latency=latency,
            outcome=outcome,
            at=datetime.fromisoformat(at),
        )
    window = {"since": "2025-03-01T00:00:00Z", "until": "2025-03-03T00:00:00Z"}
    path = f"/v1/banks/{a}/usage"

    by_day = await usage(admin, path, group_by="day", **window)
    assert (by_day["bank_id"], by_day["group_by"], by_day["currency"]) == (a, "day", "USD")
    day1, day2 = by_day["groups"]
    assert (
        day1["key"],
        day1["calls"],
        day1["failed_calls"],
        day1["prompt_tokens"],
        day1["completion_tokens"],
    ) == (
        "2025-03-01",
        2,
        1,
        150,
        15,
    )
    assert day1["cost"] == pytest.approx((150 * 1.0 + 15 * 2.0) / 1e6)
    assert (day1["latency_ms_avg"], day1["latency_ms_max"], day1["unpriced_tokens"]) == (200.0, 300, 0)
    assert (day2["key"], day2["calls"], day2["estimated_calls"], day2["cost"], day2["unpriced_tokens"]) == (
        "2025-03-02",
        1,
        1,
        None,
        22,
    )
    totals = by_day["totals"]
    assert (totals["calls"], totals["total_tokens"], totals["latency_ms_avg"]) == (3, 187, 150.0)
    assert totals["cost"] == pytest.approx(day1["cost"])

    by_operation = await usage(admin, path, group_by="operation", **window)
    assert [(g["key"], g["calls"]) for g in by_operation["groups"]] == [("distill", 2), ("judge", 1)]
    by_model = await usage(admin, path, group_by="model", **window)
    assert [(g["key"], g["total_tokens"]) for g in by_model["groups"]] == [
        ("distill-model", 165),
        ("judge-model", 22),
    ]

    # A timestamp without an offset is read in the bank's time zone (UTC+8): the first day only.
    local = await usage(admin, path, since="2025-03-01T08:00:00", until="2025-03-02T08:00:00")
    assert [g["key"] for g in local["groups"]] == ["2025-03-01"]
    # The admin's report covers every bank.
    everyone = await usage(admin, "/v1/admin/usage", group_by="operation", **window)
    assert {g["key"]: g["calls"] for g in everyone["groups"]} == {"distill": 2, "judge": 1, "summarise": 1}
    assert everyone["bank_id"] is None

    for params in (
        {"since": "2025-03-02T00:00:00Z", "until": "2025-03-01T00:00:00Z"},
        {"since": "2025-03-01T00:00:00Z", "until": "2025-03-01T00:00:00Z"},
        {"group_by": "week"},
        {"since": "yesterday"},
        {"until": "0001-01-01T00:00:00Z"},
    ):
        assert_problem(await admin.get(path, params=params), 422)
        assert_problem(await admin.get("/v1/admin/usage", params=params), 422)
    key = ok(await admin.post(f"/v1/banks/{b}/keys", json={"scopes": ["read"]}), 201)["key"]
    async with make_client(cost_app, key) as bank_key:
        assert_problem(await bank_key.get(path), 404)  # another bank's usage
        assert ok(await bank_key.get(f"/v1/banks/{b}/usage", params=window))["totals"]["calls"] == 1
        assert_problem(await bank_key.get("/v1/admin/usage"), 403)


async def test_only_the_admin_key_changes_a_banks_budget_and_models(
    admin: httpx.AsyncClient, cost_app: Any
) -> None:
    bank = await make_bank(admin)
    key = ok(await admin.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read", "write"]}), 201)["key"]
    async with make_client(cost_app, key) as own:
        for config in (
            {"llm_daily_tokens": 10**9},
            {"llm_daily_cost": 5},
            {"llm_models": {"distill": "big"}},
        ):
            assert_problem(await own.patch(f"/v1/banks/{bank}", json={"config": config}), 403)
        ok(await own.patch(f"/v1/banks/{bank}", json={"config": {"min_confidence": 0.5}}))
    config = {"llm_daily_tokens": 5000, "llm_models": {"judge": "small-judge"}}
    updated = ok(await admin.patch(f"/v1/banks/{bank}", json={"config": config}))
    assert updated["config"]["llm_models"] == {"distill": None, "judge": "small-judge", "summarise": None}
    assert updated["config"]["llm_daily_tokens"] == 5000
    for bad in ({"llm_models": {"embed": "x"}}, {"llm_daily_tokens": -1}, {"llm_models": {"judge": ""}}):
        assert_problem(await admin.patch(f"/v1/banks/{bank}", json={"config": bad}), 422)


# Two statements close enough (cosine 0.80-0.95, one tag, no claim attribute) that resolution asks the judge.
AMBIGUOUS = ("The user enjoys hiking in the mountains.", "The user enjoys hiking in the Alps.")


async def test_the_judge_is_asked_on_its_model_charged_to_the_bank_and_skipped_on_a_spent_budget(
    admin: httpx.AsyncClient, llm: tuple[FastAPI, str], sql: Any
) -> None:
    fake, _ = llm

    async def judged(**config: Any) -> tuple[str, list[str]]:
        bank = await make_bank(admin, **config)
        fake.state.requests.clear()
        for content in AMBIGUOUS:  # resolved in the request (`?wait=true`), by the API's own judge
            body = {"content": content, "tags": ["preference"]}
            ok(await admin.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=body), 201)
        return bank, [b["model"] for b in chat_bodies(fake) if schema_of(b) == "conflict_verdict"]

    bank, models = await judged()
    assert models == ["judge-model"]
    [judge] = (await usage(admin, f"/v1/banks/{bank}/usage", group_by="operation"))["groups"]
    assert (judge["key"], judge["calls"], judge["total_tokens"]) == ("judge", 1, fake.state.usage_sent_last)
    [row] = await sql("SELECT job_id, model FROM llm_calls WHERE bank_id = :bank", bank=bank)
    assert (row["job_id"], row["model"]) == (None, "judge-model")  # a request's call: no job

    _, models = await judged(llm_models={"judge": "bank-judge"})
    assert models == ["bank-judge"]

    spent, models = await judged(llm_daily_tokens=0)
    assert models == []  # the rules decided alone
    assert [u["status"] for u in await units(sql, spent)] == ["active", "active"]
    [noted] = await sql("SELECT budget FROM llm_budget_exhaustions WHERE bank_id = :bank", bank=spent)
    assert noted["budget"] == "bank"


async def test_a_replay_with_the_llm_refuses_while_the_budget_is_spent(
    admin: httpx.AsyncClient, llm_worker: Any
) -> None:
    bank = await make_bank(admin, distill_every_n_turns=1000, llm_daily_tokens=0)
    distilled = await distil(admin, bank, ["My budget is 5000 dollars."])
    assert distilled["result"]["fallback"]["limit_tokens"] == 0  # a zero budget: no LLM at all
    replay = ok(await admin.post(f"/v1/banks/{bank}/redistill", json={"dry_run": True}), 202)
    refused = await finished_job(admin, replay["job_id"])
    assert refused["status"] == "failed"
    assert "ReplayOverBudget" in refused["error"]
    assert "heuristic distiller" in refused["error"]
    body = {"dry_run": True, "distiller": "heuristic"}
    heuristic = ok(await admin.post(f"/v1/banks/{bank}/redistill", json=body), 202)
    assert (await finished_job(admin, heuristic["job_id"]))["status"] == "succeeded"


async def test_the_global_budget_counts_every_bank_and_is_told_once_per_bank(
    admin: httpx.AsyncClient, cost_app: Any, sql: Any
) -> None:
    from app.banks.config import BankConfig
    from app.db.repositories import usage as usage_repo
    from app.usage.budget import Budget, day_of

    spender, other = await make_bank(admin), await make_bank(admin, llm_daily_tokens=10**9)
    await create_hook(admin, other, "http://127.0.0.1:9/hook", ["budget.exhausted"])
    config = BankConfig(llm_daily_tokens=10**9)
    async with cost_app.state.sessionmaker() as db, db.begin():
        _, start, _ = day_of(datetime.now(UTC))
        already = sum(p + c for p, c in (await usage_repo.spent_by_model(db, start)).values())
    budget = Budget(daily_tokens=already + 1000)  # what this test spends decides it
    add = (
        "INSERT INTO llm_calls (bank_id, operation, model, prompt_tokens, completion_tokens, estimated,"
        " latency_ms, outcome) VALUES (:bank, 'distill', 'm', :tokens, 0, false, 10, 'ok')"
    )
    await sql(add, bank=spender, tokens=600)
    async with cost_app.state.sessionmaker() as db, db.begin():
        assert await budget.exhausted(db, other, config, "judge") is None
    await sql(add, bank=spender, tokens=400)  # everyone's day reaches the global budget
    for _ in range(2):
        async with cost_app.state.sessionmaker() as db, db.begin():
            status = await budget.exhausted(db, other, config, "judge")
        assert status is not None
        spent = status.exhausted
        assert spent is not None
        assert (spent.budget, spent.limit_tokens) == ("global", already + 1000)
        assert spent.tokens >= already + 1000
        assert not status.bank.spent  # the bank's own budget is whole: the global one stopped it
    [noted] = await sql("SELECT budget FROM llm_budget_exhaustions WHERE bank_id = :bank", bank=other)
    assert noted["budget"] == "global"
    told = await sql(
        "SELECT payload FROM webhook_deliveries WHERE bank_id = :bank AND event = 'budget.exhausted'",
        bank=other,
    )
    assert [t["payload"]["data"]["budget"] for t in told] == ["global"]
    assert [t["payload"]["data"]["operation"] for t in told] == ["judge"]
