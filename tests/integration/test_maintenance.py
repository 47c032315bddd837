"""Scheduled maintenance on the real stack: each task through the admin API and a real worker, with
the clock injected (`now`), never slept."""

from __future__ import annotations

import asyncio
import signal
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import Stack, assert_problem, start_worker, wait_for
from tests.factories import events, finished_job, make_bank, memories
from tests.fake_openai import ChatStep, reply

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).isoformat()


async def maintenance_job(app: Any, kind: str, bank: str) -> Any:
    """A job row for running a task in this process, claimed as a worker claims what it receives (one
    bank): left queued and unsent, the sweep would send it to the session's worker after a few seconds,
    and two runs would share its work (a reembed counted 2 of 6 units on a loaded CI machine)."""
    from datetime import timedelta

    from app.db.repositories import jobs as jobs_repo

    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs_repo.create_job(
            db, kind=kind, bank_id=None, params={"bank_id": bank}, dedupe_key=None, max_attempts=3
        )
        claimed = await jobs_repo.claim(db, job.id, timedelta(minutes=10))
    assert claimed is not None
    return claimed


def killed_after_one_batch(run_type: Any) -> Any:
    """A MaintenanceRun whose process dies right after its first committed batch that changed something."""

    class Killed(run_type):  # type: ignore[misc,valid-type]
        async def batches(self, step: Any, progress: dict[str, Any]) -> int:
            async with self.sessionmaker() as db, db.begin():
                changed = await step(db)
            if changed:
                raise asyncio.CancelledError(f"killed after {changed}")
            return 0

    return Killed


async def put(
    client: httpx.AsyncClient, bank: str, content: str, tags: list[str], at: str, **extra: Any
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={"content": content, "tags": tags, "occurred_at": at, **extra},
    )
    assert response.status_code == 201, response.text
    unit: dict[str, Any] = response.json()["memory"]
    return unit


async def maintain(client: httpx.AsyncClient, task: str, bank: str, now: datetime = NOW) -> dict[str, Any]:
    response = await client.post(
        f"/v1/admin/maintenance/{task}", json={"bank_id": bank, "now": now.isoformat()}
    )
    assert response.status_code == 202, response.text
    job = await finished_job(client, response.json()["job_id"])
    assert job["status"] == "succeeded", job["error"]
    return job


async def status_of(client: httpx.AsyncClient, bank: str, unit: dict[str, Any]) -> str:
    status: str = (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"]
    return status


async def learned(sql: Any, unit: dict[str, Any], **delta: float) -> None:
    """The bank learned `unit` that long before NOW (its clock of forgetting), whatever it says."""
    await sql(
        "UPDATE memory_units SET created_at = :at WHERE id = :id", at=NOW - timedelta(**delta), id=unit["id"]
    )


async def test_expire_follows_ttls_and_the_forgetting_policy(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    # Ages count in bank time (since the bank learned a unit), except the time-bound task state.
    bank = await make_bank(client, forgetting_policy="delete", ttl_days={"fact": 365})
    old_task = await put(
        client, bank, "The refund for order ORD-11111 is pending.", ["task_state"], ago(days=2)
    )
    new_task = await put(
        client, bank, "The invoice for order ORD-22222 is pending.", ["task_state"], ago(hours=3)
    )
    old_episode = await put(client, bank, "The user talked about a trip to Oslo.", ["episode"], ago(days=100))
    new_episode = await put(client, bank, "The user talked about a trip to Rome.", ["episode"], ago(days=10))
    old_fact = await put(client, bank, "The user drives a blue Fiat.", ["fact"], ago(days=400))
    backfilled = await put(client, bank, "The user talked about a trip to Kyiv.", ["episode"], ago(days=700))
    await learned(sql, old_episode, days=100)
    await learned(sql, new_episode, days=10)
    await learned(sql, old_fact, days=400)
    await learned(sql, backfilled, hours=1)  # said two years ago, learned an hour ago: fresh
    for unit in (old_task, new_task):
        await learned(sql, unit, hours=1)
    job = await maintain(client, "expire", bank)
    assert job["result"]["banks"][bank] == {"archived": 3}
    # Forgotten, not gone: archived (restorable) for the grace period even under policy `delete`.
    assert [await status_of(client, bank, u) for u in (old_task, old_episode, old_fact)] == ["archived"] * 3
    assert [await status_of(client, bank, u) for u in (new_task, new_episode, backfilled)] == ["active"] * 3
    actions = (await client.get(f"/v1/banks/{bank}/memories/{old_task['id']}/history")).json()["actions"]
    assert [a["action"] for a in actions][-2:] == ["expired", "archived"]
    assert actions[-1]["actor"] == "maintenance:expire"
    assert actions[-1]["details"]["ttl"] == "task_state"
    again = await maintain(client, "expire", bank)
    assert again["result"]["banks"] == {}
    stats = (await client.get(f"/v1/banks/{bank}/stats")).json()
    assert stats["maintenance"]["expire"]["status"] == "succeeded"
    # After the grace period (30 days) policy `delete` deletes what stayed archived.
    later = await maintain(client, "expire", bank, now=NOW + timedelta(days=31))
    assert later["result"]["banks"][bank]["deleted"] == 3
    assert [await status_of(client, bank, u) for u in (old_task, old_episode, old_fact)] == ["deleted"] * 3
    assert await status_of(client, bank, new_task) == "archived"  # its own TTL passed meanwhile


async def test_expire_archives_under_downweight_and_keeps_everything_under_never(
    client: httpx.AsyncClient, worker: Any
) -> None:
    soft = await make_bank(client, forgetting_policy="downweight")
    keep = await make_bank(client, forgetting_policy="never")
    archived = await put(
        client, soft, "The parcel for order ORD-33333 is on hold.", ["task_state"], ago(days=3)
    )
    kept = await put(client, keep, "The parcel for order ORD-44444 is on hold.", ["task_state"], ago(days=3))
    await maintain(client, "expire", soft, now=NOW + timedelta(days=60))
    await maintain(client, "expire", keep)
    assert await status_of(client, soft, archived) == "archived"  # downweight never deletes
    assert await status_of(client, keep, kept) == "active"


async def test_decay_archives_faded_units_and_query_skips_them(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client)
    faded = await put(
        client, bank, "The user once mentioned a red umbrella.", ["episode"], ago(days=700), importance=0.1
    )
    fresh = await put(
        client, bank, "The user mentioned a green umbrella.", ["episode"], ago(days=700), importance=0.1
    )
    vital = await put(
        client, bank, "The user's umbrella is from Milan.", ["fact"], ago(days=700), importance=0.9
    )
    await learned(sql, faded, days=700)
    await learned(sql, fresh, days=5)  # said as long ago, but the bank learned it last week
    await learned(sql, vital, days=700)
    job = await maintain(client, "decay", bank)
    assert job["result"]["banks"][bank] == {"archived": 1}
    assert [await status_of(client, bank, u) for u in (faded, fresh, vital)] == [
        "archived",
        "active",
        "active",
    ]
    found = await client.post(f"/v1/banks/{bank}/query", json={"query": "red umbrella", "min_score": 0})
    assert faded["id"] not in [m["id"] for m in found.json()["memories"]]
    asked = await client.post(
        f"/v1/banks/{bank}/query",
        json={"query": "red umbrella", "min_score": 0, "statuses": ["active", "archived"]},
    )
    assert faded["id"] in [m["id"] for m in asked.json()["memories"]]
    assert (await maintain(client, "decay", bank))["result"]["banks"] == {}


async def test_promote_moves_confirmed_knowledge_to_l3(client: httpx.AsyncClient, worker: Any) -> None:
    bank = await make_bank(client)
    strong = await put(
        client,
        bank,
        "The user is allergic to penicillin.",
        ["constraint.diet"],
        ago(days=1),
        confidence=0.95,
        importance=0.9,
    )
    weak = await put(client, bank, "The user might like jazz.", ["preference"], ago(days=1), confidence=0.7)
    job = await maintain(client, "promote", bank)
    assert job["result"]["banks"][bank] == {"promoted": 1}
    layers = {m["id"]: m["layer"] for m in await memories(client, bank)}
    assert (layers[strong["id"]], layers[weak["id"]]) == ("semantic", "episodic")
    actions = (await client.get(f"/v1/banks/{bank}/memories/{strong['id']}/history")).json()["actions"]
    assert actions[-1]["action"] == "promoted"
    assert (await maintain(client, "promote", bank))["result"]["banks"] == {}


async def test_merge_collapses_near_duplicates(client: httpx.AsyncClient, worker: Any) -> None:
    bank = await make_bank(client, dedupe_threshold=1.0)  # resolution keeps them apart; the merge does not
    variants = [
        "The user enjoys hiking in the mountains.",
        "The user enjoys hiking in the mountains!",
        "The user really enjoys hiking in the mountains.",
    ]
    units = [await put(client, bank, v, ["preference.entertainment"], ago(days=3)) for v in variants]
    other = await put(
        client, bank, "The user enjoys cooking Thai food.", ["preference.entertainment"], ago(days=3)
    )
    assert len(await memories(client, bank, status="active")) == 4
    job = await maintain(client, "merge", bank)
    assert job["result"]["banks"][bank] == {"merged": 2}
    [survivor] = [m for m in await memories(client, bank, status="active") if m["id"] != other["id"]]
    assert survivor["content"] == variants[2]  # the most complete member
    assert sorted(survivor["merged_from"]) == sorted(u["id"] for u in units[:2])
    assert (await maintain(client, "merge", bank))["result"]["banks"] == {}


async def test_a_clock_without_an_offset_is_read_in_the_banks_timezone(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, timezone="Asia/Shanghai")
    body = {"bank_id": bank, "now": "2026-01-04T03:10:00"}
    response = await client.post("/v1/admin/maintenance/expire", json=body)
    assert response.status_code == 202, response.text
    [job] = await sql("SELECT params FROM jobs WHERE id = :id", id=uuid.UUID(response.json()["job_id"]))
    assert datetime.fromisoformat(job["params"]["now"]) == datetime.fromisoformat("2026-01-04T03:10:00+08:00")
    assert (await finished_job(client, response.json()["job_id"]))["status"] == "succeeded"


async def test_merge_keeps_alike_statements_about_two_people(client: httpx.AsyncClient, worker: Any) -> None:
    """Alike words (cosine above the merge's floor, the same numbers, no 'not') said of two people are two
    facts: the user's allergy is not merged into the son's."""
    bank = await make_bank(client)
    said = [
        "The user is allergic to peanuts, tree nuts and sesame.",
        "The user's son is allergic to peanuts, tree nuts and sesame.",
    ]
    units = [await put(client, bank, s, ["fact"], ago(days=3)) for s in said]
    job = await maintain(client, "merge", bank)
    assert job["result"]["banks"] == {}
    assert {m["id"] for m in await memories(client, bank, status="active")} == {u["id"] for u in units}


@pytest.mark.parametrize(
    ("task", "unit", "done"),
    [
        ("expire", {"tags": ["task_state"], "at": {"days": 2}}, lambda m: m["status"] == "archived"),
        (
            "decay",
            {"tags": ["episode"], "at": {"days": 700}, "importance": 0.1},
            lambda m: m["status"] == "archived",
        ),
        (
            "promote",
            {"tags": ["fact"], "at": {"days": 1}, "confidence": 0.95, "importance": 0.8},
            lambda m: m["layer"] == "semantic",
        ),
    ],
)
async def test_a_task_killed_half_way_resumes(
    client: httpx.AsyncClient, app: Any, sql: Any, task: str, unit: dict[str, Any], done: Any
) -> None:
    from app.maintenance import lifecycle
    from app.maintenance.lifecycle import MaintenanceRun

    bank = await make_bank(client)
    extra = {k: v for k, v in unit.items() if k not in ("tags", "at")}
    for i in range(5):
        await put(
            client, bank, f"The ticket TCK-{1000 + i} is waiting.", unit["tags"], ago(**unit["at"]), **extra
        )

    # Learned when said: old in bank time too.
    await sql(
        "UPDATE memory_units SET created_at = :at WHERE bank_id = :bank",
        at=NOW - timedelta(**unit["at"]),
        bank=bank,
    )
    job = await maintenance_job(app, f"maintenance.{task}", bank)
    work = getattr(lifecycle, task)
    with pytest.raises(asyncio.CancelledError):
        await work(killed_after_one_batch(MaintenanceRun)(app.state.sessionmaker, job, NOW, batch=2))
    assert sum(map(done, await memories(client, bank))) == 2
    result = await work(MaintenanceRun(app.state.sessionmaker, job, NOW, batch=2))
    assert sum(result["banks"][bank].values()) == 3
    assert sum(map(done, await memories(client, bank))) == 5
    assert (await work(MaintenanceRun(app.state.sessionmaker, job, NOW, batch=2)))["banks"] == {}


async def test_reembed_with_a_new_model_keeps_queries_answering(
    client: httpx.AsyncClient, app: Any, sql: Any
) -> None:
    from app.config import get_settings
    from app.main import create_app
    from app.maintenance.lifecycle import MaintenanceRun
    from app.maintenance.reembed import reembed
    from app.providers.embeddings import LocalEmbedder
    from tests.conftest import make_client

    bank = await make_bank(client)
    # Six visits (happenings: none replaces another), so six units to re-embed.
    for i, city in enumerate(["Lisbon", "Oslo", "Kyoto", "Lima", "Accra", "Hanoi"]):
        await put(client, bank, f"The user's sister visited {city}.", ["episode"], ago(days=i + 1))
    alt = LocalEmbedder("minilm-renamed", 384)  # the same weights under another name: a "new" model
    alt_app = create_app(get_settings().model_copy(update={"embedding_model": "minilm-renamed"}))
    async with (
        alt_app.router.lifespan_context(alt_app),
        make_client(alt_app, client.headers["Authorization"][7:]) as alt_client,
    ):
        before = await alt_client.post(
            f"/v1/banks/{bank}/query", json={"query": "sister Kyoto", "explain": True}
        )
        top = before.json()["memories"][0]
        assert "Kyoto" in top["content"]  # keyword and entity channels find it without a vector
        assert "semantic" not in top["scores"]

        job = await maintenance_job(app, "maintenance.reembed", bank)
        task = asyncio.create_task(reembed(MaintenanceRun(app.state.sessionmaker, job, NOW, batch=2), alt))
        answered = 0
        while not task.done():
            during = await client.post(f"/v1/banks/{bank}/query", json={"query": "sister Oslo"})
            assert during.status_code == 200
            assert "Oslo" in during.json()["memories"][0]["content"]
            answered += 1
            await asyncio.sleep(0.01)
        result = await task
        assert result == {"model": "minilm-renamed", "dim": 384, "reembedded": 6}
        assert answered >= 1
        after = await alt_client.post(
            f"/v1/banks/{bank}/query", json={"query": "sister Kyoto", "explain": True}
        )
        assert "semantic" in after.json()["memories"][0]["scores"]
    indexes = await sql(
        "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'ix_memory_embeddings_hnsw_384_minilm%'"
    )
    assert "model = 'minilm-renamed'" in indexes[0]["indexdef"]


async def test_a_worker_killed_mid_distillation_is_finished_by_the_sweep(
    client: httpx.AsyncClient, worker: Any, stack: Stack, app: Any, sql: Any, tmp_path: Any
) -> None:
    from app.config import get_settings
    from app.jobs.schedule import schedule_distill
    from worker.factory import create_celery

    bank = await make_bank(client, distill_every_n_turns=1000)
    await client.post(
        f"/v1/banks/{bank}/sessions/s/events",
        json={"events": events([("user", "My budget is 5000."), ("user", "I live in Porto.")])},
    )
    # The doomed worker listens on a broker of its own, so it (and not the shared worker) takes the job;
    # its LLM call hangs, and it dies holding the job.
    private_broker = stack.redis_url.rsplit("/", 1)[0] + "/5"
    stack.llm.state.chat_script = [ChatStep(delay=60)]
    stack.llm.state.requests.clear()
    doomed = start_worker(
        stack,
        tmp_path / "doomed.log",
        "doomed@localhost",
        HINDSIGHT_DISTILLER="llm",
        HINDSIGHT_JOB_DEADLINE_SECONDS="2",
        HINDSIGHT_BROKER_URL=private_broker,
    )
    celery = create_celery(get_settings().model_copy(update={"broker_url": private_broker}))
    try:
        async with app.state.sessionmaker() as db, db.begin():
            job, _ = await schedule_distill(db, bank, "s")
        celery.send_task("distill.session", args=[str(job.id)], queue="distill")
        await wait_for(lambda: _llm_called(stack), within=30)
        assert (await client.get(f"/v1/jobs/{job.id}")).json()["status"] == "running"
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait()
        celery.pool.force_close_all()
        celery.close()
        stack.llm.state.chat_script = [reply('{"units": []}')]
    await asyncio.sleep(2.5)  # past the dead worker's deadline
    swept = await client.post("/v1/admin/maintenance/sweep")
    sweep_job = await finished_job(client, swept.json()["job_id"])
    assert sweep_job["result"]["requeued_overdue"] >= 1
    done = await finished_job(client, str(job.id), within=90)
    assert done["status"] == "succeeded", done
    assert done["attempts"] == 2
    rows = await sql("SELECT content, source_seqs FROM memory_units WHERE bank_id = :bank", bank=bank)
    keys = [(r["content"], tuple(r["source_seqs"])) for r in rows]
    assert len(keys) >= 2
    assert len(keys) == len(set(keys))
    session = (await client.get(f"/v1/banks/{bank}/sessions/s")).json()
    assert session["distilled_seq"] == session["last_seq"] == 2


async def _llm_called(stack: Stack) -> bool:
    return any(kind == "chat" for kind, _ in stack.llm.state.requests)


async def test_maintenance_endpoints_refuse_bad_input(client: httpx.AsyncClient) -> None:
    assert_problem(await client.post("/v1/admin/maintenance/vacuum"), 422)
    assert_problem(await client.post("/v1/admin/maintenance/expire", json={"now": "yesterday"}), 422)
    bank = await make_bank(client)
    key = (await client.post(f"/v1/banks/{bank}/keys", json={})).json()["key"]
    assert_problem(
        await client.post("/v1/admin/maintenance/expire", headers={"Authorization": f"Bearer {key}"}), 403
    )


async def test_merge_writes_an_llm_summary_when_an_llm_is_configured(
    client: httpx.AsyncClient, app: Any, stack: Stack
) -> None:
    import json

    from app.maintenance.lifecycle import MaintenanceRun
    from app.maintenance.merge import merge
    from app.maintenance.summary import LLMSummarizer
    from app.providers.llm import JSONChatClient

    bank = await make_bank(client, dedupe_threshold=1.0)
    for variant in ("The user enjoys hiking in the mountains.", "The user enjoys hiking in the mountains!"):
        await put(client, bank, variant, ["preference.entertainment"], ago(days=3))
    summary = "The user enjoys mountain hiking."
    stack.llm.state.chat_script = [reply(json.dumps({"content": summary}))]
    summarizer = LLMSummarizer(JSONChatClient(base_url=stack.llm_url, api_key="k", model="m", max_retries=1))
    job = await maintenance_job(app, "maintenance.merge", bank)
    try:
        result = await merge(MaintenanceRun(app.state.sessionmaker, job, NOW), app.state.embedder, summarizer)
    finally:
        await summarizer.aclose()
        stack.llm.state.chat_script = [reply('{"units": []}')]
    assert result["banks"][bank] == {"merged": 1, "summarized": 1}
    [unit] = await memories(client, bank, status="active")
    assert unit["content"] == summary
    found = await client.post(f"/v1/banks/{bank}/query", json={"query": "mountain hiking", "explain": True})
    assert "semantic" in found.json()["memories"][0]["scores"]
    actions = (await client.get(f"/v1/banks/{bank}/memories/{unit['id']}/history")).json()["actions"]
    assert actions[-1]["action"] == "summarized"


async def test_merge_summaries_use_the_banks_model_and_stop_on_a_spent_budget(
    client: httpx.AsyncClient, app: Any, stack: Stack, sql: Any
) -> None:
    import json

    from app.maintenance.lifecycle import MaintenanceRun
    from app.maintenance.merge import merge
    from app.maintenance.summary import LLMSummarizer
    from app.providers.llm import JSONChatClient
    from app.usage.ledger import Ledger
    from tests.fake_openai import chat_bodies

    async def merged(**config: Any) -> tuple[str, dict[str, int], Any]:
        bank = await make_bank(client, dedupe_threshold=1.0, **config)
        for variant in (
            "The user enjoys hiking in the mountains.",
            "The user enjoys hiking in the mountains!",
        ):
            await put(client, bank, variant, ["preference.entertainment"], ago(days=3))
        client_ = JSONChatClient(
            base_url=stack.llm_url,
            api_key="k",
            model="m",
            max_retries=1,
            operation="summarise",
            recorder=Ledger(app.state.sessionmaker),
        )
        summarizer = LLMSummarizer(client_)
        job = await maintenance_job(app, "maintenance.merge", bank)
        try:
            result = await merge(
                MaintenanceRun(app.state.sessionmaker, job, NOW), app.state.embedder, summarizer
            )
        finally:
            await summarizer.aclose()
            # Run here, not by a worker: finished, so no later test waits on a queued job.
            await sql("UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = :id", id=job.id)
        return bank, result["banks"][bank], job.id

    stack.llm.state.chat_script = [reply(json.dumps({"content": "The user enjoys mountain hiking."}))]
    stack.llm.state.requests.clear()
    try:
        own, counts, job_id = await merged(llm_models={"summarise": "bank-summary"})
        assert counts == {"merged": 1, "summarized": 1}
        assert [b["model"] for b in chat_bodies(stack.llm)] == ["bank-summary"]
        [row] = await sql("SELECT operation, model, job_id FROM llm_calls WHERE bank_id = :bank", bank=own)
        assert (row["operation"], row["model"], row["job_id"]) == ("summarise", "bank-summary", job_id)
        stack.llm.state.requests.clear()
        _, counts, _ = await merged(llm_daily_tokens=0)
        assert counts == {"merged": 1}  # merged, keeping the member's own text: no summary
        assert chat_bodies(stack.llm) == []
    finally:
        stack.llm.state.chat_script = [reply('{"units": []}')]


async def test_reembed_killed_half_way_resumes_and_a_second_run_does_nothing(
    client: httpx.AsyncClient, app: Any
) -> None:
    from app.maintenance.lifecycle import MaintenanceRun
    from app.maintenance.reembed import reembed

    bank = await make_bank(client)
    for city in ("Quito", "Riga", "Perth", "Tunis", "Bergen"):
        await put(client, bank, f"The user's cousin lives in {city}.", ["fact.family"], ago(days=2))

    job = await maintenance_job(app, "maintenance.reembed", bank)
    embedder = app.state.embedder
    renamed = type("Renamed", (), {"model": "minilm-second-name", "dim": 384, "embed": embedder.embed})()
    with pytest.raises(asyncio.CancelledError):
        await reembed(
            killed_after_one_batch(MaintenanceRun)(app.state.sessionmaker, job, NOW, batch=2), renamed
        )
    rest = await reembed(MaintenanceRun(app.state.sessionmaker, job, NOW, batch=2), renamed)
    assert rest["reembedded"] == 3
    assert (await reembed(MaintenanceRun(app.state.sessionmaker, job, NOW, batch=2), renamed))[
        "reembedded"
    ] == 0


async def test_a_banks_maintenance_request_gets_its_own_job_while_a_global_one_waits(
    app: Any, client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    """Issue 29: a bank-scoped request used to be handed the queued global run (or another bank's)."""
    from app.jobs import service as jobs
    from app.jobs.schedule import maintenance_key

    kind = "maintenance.expire"
    first, second, third = await make_bank(client), await make_bank(client), await make_bank(client)
    await sql(  # whatever an earlier test left unfinished under the global key
        "UPDATE jobs SET status = 'failed' WHERE dedupe_key = :key AND status IN ('queued', 'running')",
        key=maintenance_key(kind, {}),
    )
    async with app.state.sessionmaker() as db, db.begin():  # runs queued and not sent (yet)
        waiting, _ = await jobs.create(db, kind, dedupe_key=maintenance_key(kind, {}))
        third_params = {"bank_id": third, "force": False}
        thirds, _ = await jobs.create(
            db, kind, params=third_params, dedupe_key=maintenance_key(kind, third_params)
        )
    try:
        bodies = [{"bank_id": first}, {"bank_id": second}, {"bank_id": first, "now": NOW.isoformat()}]
        ids = []
        for body in bodies:
            response = await client.post("/v1/admin/maintenance/expire", json=body)
            assert response.status_code == 202, response.text
            ids.append(response.json()["job_id"])
        assert len({str(waiting.id), str(thirds.id), *ids}) == 5  # none is the global run, nor another's
        rows = await sql("SELECT id, params FROM jobs WHERE id = ANY(CAST(:ids AS uuid[]))", ids=ids)
        assert {str(r["id"]): r["params"]["bank_id"] for r in rows} == {
            i: b["bank_id"] for i, b in zip(ids, bodies, strict=True)
        }
        for job_id in ids:  # each runs, over its own bank only
            assert (await finished_job(client, job_id))["status"] == "succeeded"
        # The same bank's request shares that bank's unfinished run (and sends it).
        shared = await client.post("/v1/admin/maintenance/expire", json={"bank_id": third})
        assert shared.json()["job_id"] == str(thirds.id)
        assert (await finished_job(client, str(thirds.id)))["status"] == "succeeded"
    finally:
        await sql("UPDATE jobs SET status = 'failed' WHERE id = :id AND status = 'queued'", id=waiting.id)
