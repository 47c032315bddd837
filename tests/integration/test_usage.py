"""The usage routes and the budgets' arithmetic on the real database (issue 34): a ledger written row by
row, then read back grouped by day, operation and model, priced, windowed in the bank's time zone, and
refused with 422 for a bad window; only the admin key sets a bank's budget and models; the global budget
counts every bank and tells each bank's hooks once. The calls themselves: test_llm_cost.py."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from app.config import ModelPrice, get_settings
from tests.conftest import ADMIN_KEY, Stack, assert_problem, make_client, running_app
from tests.factories import create_hook, make_bank, ok

PRICES = {"distill-model": ModelPrice(prompt=1.0, completion=2.0)}  # per million tokens; judge-model: none


@pytest.fixture(scope="module")
async def cost_app(stack: Stack) -> AsyncIterator[Any]:
    async with running_app(get_settings().model_copy(update={"llm_prices": PRICES})) as application:
        yield application


@pytest.fixture
async def admin(cost_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(cost_app, ADMIN_KEY) as c:
        yield c


async def usage(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    report: dict[str, Any] = ok(await client.get(path, params=params))
    return report


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


async def test_the_global_budget_counts_every_bank_and_is_told_once_per_bank(
    admin: httpx.AsyncClient, cost_app: Any, sql: Any
) -> None:
    from app.db.repositories import usage as usage_repo
    from app.schemas.banks import BankConfig
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
    # Deleting the bank that spent refunds nothing: the ledger outlives it, and a bank created again under
    # its name starts the day with what it spent.
    assert (await admin.delete(f"/v1/banks/{spender}")).status_code == 204
    async with cost_app.state.sessionmaker() as db, db.begin():
        assert await budget.exhausted(db, other, config, "judge") is not None
    ok(await admin.post("/v1/banks", json={"bank_id": spender}), 201)
    async with cost_app.state.sessionmaker() as db, db.begin():
        again = await budget.status(db, spender, BankConfig())
    assert again.bank.tokens == 1000
