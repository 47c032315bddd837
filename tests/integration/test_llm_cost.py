"""Bounded LLM cost on the real stack (issue 34): a Celery worker of this module's own distils with the
LLM distiller against a fake OpenAI-compatible server of its own that answers with `usage`. The ledger's
sums equal what the server billed, each operation calls its own model, a spent budget switches a bank to
the heuristic distiller with every turn still distilled and tells its hooks once, the worker's merge
summary asks the service-wide summariser's model, and the usage routes group, price and validate."""

from __future__ import annotations

import json
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
    make_client,
    running_app,
    start_worker,
    stop_worker,
)
from tests.conftest import wait_for as wait_until
from tests.factories import Receiver, create_hook, events, finished_job, make_bank, ok, settled, units
from tests.fake_openai import ChatStep, chat_bodies, create_fake_openai, fenced, mirror, reply, serve

MODELS = {
    "llm_model": "default-model",
    "llm_model_distill": "distill-model",
    "llm_model_judge": "judge-model",
    "llm_model_summarise": "summary-model",
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
    # asked what the claims ask, with each unit's claims beside its words
    [asked] = [fenced(b, "units") for b in chat_bodies(fake) if schema_of(b) == "conflict_verdict"]
    assert asked["newer"]["content"] == AMBIGUOUS[1]
    assert [(c["subject"], c["value"]) for c in asked["newer"]["claims"]] == [("user", "Alps")]
    assert [(c["subject"], c["value"]) for c in asked["older"]["claims"]] == [("user", "hiking")]
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


async def test_the_judge_is_asked_whether_two_attributes_named_in_other_words_are_one(
    admin: httpx.AsyncClient, llm: tuple[FastAPI, str], sql: Any
) -> None:
    """The claims name two attributes (`gym_membership`, `club_fee_fit`) where a reader sees one fee said
    in other words: the claims alone keep both, so the judge is asked, and its "same attribute, the newer
    is current" supersedes the older."""
    fake, _ = llm
    bank = await make_bank(admin)
    said = ("My gym membership costs 40 euros a month.", "My fitness club fee is 45 euros a month.")
    fake.state.requests.clear()
    verdict = {"same_subject": True, "same_attribute": True, "current": "newer", "reason": "one fee, raised"}
    fake.state.chat_script = [reply(json.dumps(verdict))]
    for content in said:
        body = {"content": content, "tags": ["fact"]}
        ok(await admin.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=body), 201)
    asked = [fenced(b, "units") for b in chat_bodies(fake) if schema_of(b) == "conflict_verdict"]
    assert [a["newer"]["content"] for a in asked] == [said[1]]
    assert {u["content"]: u["status"] for u in await units(sql, bank)} == {
        said[0]: "superseded",
        said[1]: "active",
    }


async def test_the_judge_asked_by_an_acceptance_is_on_the_banks_bill(
    admin: httpx.AsyncClient, cost_app: Any, llm: tuple[FastAPI, str]
) -> None:
    """An accepted proposal is resolved as a waited write is: the judge's call goes on the bank's bill."""
    fake, _ = llm
    bank = await make_bank(admin)
    standing = {"content": "My gym membership costs 40 euros a month.", "tags": ["fact"]}
    ok(await admin.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=standing), 201)
    keys = [
        ok(await admin.post(f"/v1/banks/{bank}/keys", json={"scopes": [scope]}), 201)["key"]
        for scope in ("propose", "review")
    ]
    proposed = {"content": "My fitness club fee is 45 euros a month.", "tags": ["fact"]}
    async with make_client(cost_app, keys[0]) as proposer:
        written = await proposer.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=proposed)
        unit = ok(written, 201)["memory"]
    fake.state.requests.clear()
    verdict = {"same_subject": True, "same_attribute": True, "current": "newer", "reason": "one fee, raised"}
    fake.state.chat_script = [reply(json.dumps(verdict))]
    async with make_client(cost_app, keys[1]) as reviewer:
        ok(await reviewer.post(f"/v1/banks/{bank}/memories/{unit['id']}/accept"))
    assert [schema_of(b) for b in chat_bodies(fake)] == ["conflict_verdict"]
    groups = (await usage(admin, f"/v1/banks/{bank}/usage", group_by="operation"))["groups"]
    assert {g["key"]: g["calls"] for g in groups} == {"judge": 1}


async def test_the_merge_summary_asks_the_service_wide_summarise_model(
    admin: httpx.AsyncClient, llm: tuple[FastAPI, str], llm_worker: Any, sql: Any
) -> None:
    """HINDSIGHT_LLM_MODEL_SUMMARISE, set for the whole service (the worker's environment), is the model
    the weekly merge's summary asks, and the ledger files the call under it, charged to the merge job."""
    fake, _ = llm
    bank = await make_bank(admin, dedupe_threshold=1.0)  # both variants stored, for the merge to join
    said = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    for content in ("The user enjoys hiking in the mountains.", "The user enjoys hiking in the mountains!"):
        body = {"content": content, "tags": ["preference.entertainment"], "occurred_at": said}
        ok(await admin.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=body), 201)
    summary = "The user enjoys mountain hiking."
    fake.state.chat_script = [reply(json.dumps({"content": summary}))]
    fake.state.requests.clear()
    started = ok(await admin.post("/v1/admin/maintenance/merge", json={"bank_id": bank}), 202)
    job = await finished_job(admin, started["job_id"])
    assert job["status"] == "succeeded", job
    assert job["result"]["banks"][bank] == {"merged": 1, "summarized": 1}
    assert [b["model"] for b in chat_bodies(fake)] == ["summary-model"]
    [active] = await units(sql, bank, status="active")
    assert active["content"] == summary
    rows = await sql(
        "SELECT operation, model, job_id FROM llm_calls WHERE bank_id = :bank AND operation = 'summarise'",
        bank=bank,
    )
    assert [(r["model"], str(r["job_id"])) for r in rows] == [("summary-model", job["id"])]


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
