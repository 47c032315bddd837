"""Correctness under adversarial use (the probe's defects), each on the real stack: ids that share a
separator, configs a bank key can set, replays, statements written out of order, held locks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.conftest import assert_problem, wait_for
from tests.factories import finished_job


async def create_bank(client: httpx.AsyncClient, bank: str, **config: Any) -> str:
    response = await client.post("/v1/banks", json={"bank_id": bank, "config": config})
    assert response.status_code == 201, response.text
    return bank


async def append(client: httpx.AsyncClient, bank: str, session: str, *contents: str) -> dict[str, Any]:
    events = [{"role": "user", "content": c} for c in contents]
    response = await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json={"events": events})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


# --- 1, 2: composite keys -----------------------------------------------------------------------------------


async def colliding_banks(client: httpx.AsyncClient) -> tuple[str, str]:
    """Bank T session `eu:chat` and bank `T:eu` session `chat`: one key under `{bank}:{session}`."""
    t = f"t{uuid.uuid4().hex[:10]}"
    # Never distilled by themselves: the turns stay working memory.
    await create_bank(client, t, distill_every_n_turns=1000)
    await create_bank(client, f"{t}:eu", distill_every_n_turns=1000)
    return t, f"{t}:eu"


async def test_working_memory_never_crosses_banks(client: httpx.AsyncClient) -> None:
    t, t_eu = await colliding_banks(client)
    # A full buffer each (50 turns): under one shared Redis list the second append pushes the first
    # bank's turns out, and the first bank then reads the second's turns as its own (same seqs).
    secrets = [f"The vault code of T is {4000 + i}." for i in range(50)]
    await append(client, t_eu, "chat", *[f"Book a table for {i} people." for i in range(50)])
    await append(client, t, "eu:chat", *secrets)

    listed = await client.get(f"/v1/banks/{t_eu}/sessions/chat/working_memory")
    assert listed.status_code == 200, listed.text
    assert listed.json()["source"] == "redis"
    turns = [turn["content"] for turn in listed.json()["turns"]]
    assert turns == [f"Book a table for {i} people." for i in range(50)]
    own = await client.get(f"/v1/banks/{t}/sessions/eu:chat/working_memory")
    assert [turn["content"] for turn in own.json()["turns"]] == secrets

    answer = await client.post(
        f"/v1/banks/{t_eu}/query",
        json={"query": "vault code", "session_id": "chat", "working_memory": True},
    )
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["working_memory"]) == 50
    assert "The vault code" not in answer.text


async def test_distillation_jobs_of_colliding_ids_are_their_own(client: httpx.AsyncClient) -> None:
    t, t_eu = await colliding_banks(client)
    await append(client, t, "eu:chat", "My budget is 5000 EUR.")
    await append(client, t_eu, "chat", "My budget is 6000 EUR.")

    mine = await client.post(f"/v1/banks/{t}/sessions/eu:chat/distill")
    theirs = await client.post(f"/v1/banks/{t_eu}/sessions/chat/distill")
    assert mine.status_code == theirs.status_code == 202, (mine.text, theirs.text)
    assert mine.json()["job_id"] != theirs.json()["job_id"]

    key = (await client.post(f"/v1/banks/{t_eu}/keys", json={"scopes": ["read", "write"]})).json()["key"]
    headers = {"Authorization": f"Bearer {key}"}
    own = await client.get(f"/v1/jobs/{theirs.json()['job_id']}", headers=headers)
    assert own.status_code == 200, own.text
    assert own.json()["bank_id"] == t_eu
    assert_problem(await client.get(f"/v1/jobs/{mine.json()['job_id']}", headers=headers), 404)
    closed = await client.post(f"/v1/banks/{t_eu}/sessions/chat/close", headers=headers)
    assert closed.json()["job_id"] == theirs.json()["job_id"]


# --- 8: the calendar's edge --------------------------------------------------------------------------------


async def test_a_time_phrase_past_the_calendar_s_start_is_clamped(client: httpx.AsyncClient) -> None:
    bank = await create_bank(client, f"edge-{uuid.uuid4().hex[:10]}")
    for now in ("1000-01-01T14:00:00+14:00", "1000-01-01T00:00:00-12:00"):  # the first instants in UTC
        answer = await client.post(
            f"/v1/banks/{bank}/query", json={"query": "what did I do in the past 999 years", "now": now}
        )
        assert answer.status_code == 200, answer.text
        time_filter = answer.json()["time_filter"]
        # The window ends now and starts where the calendar does (the bank's zone is UTC).
        assert time_filter["from"].startswith("0001-01-"), time_filter
        assert time_filter["to"] == datetime.fromisoformat(now).astimezone(UTC).isoformat().replace(
            "+00:00", "Z"
        )


# --- 10: job timestamps from the clock ---------------------------------------------------------------------


async def test_a_long_job_finishes_when_it_ends_not_when_its_transaction_began(app: Any) -> None:
    from sqlalchemy import text

    from app.db.repositories import jobs as jobs_repo
    from app.jobs import service as jobs

    async def slow(db: Any, _job: Any) -> dict[str, Any]:
        await db.execute(text("SELECT pg_sleep(0.5)"))
        return {}

    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
    assert (
        await jobs.run_in_session(app.state.work, job.id, slow, deadline=timedelta(seconds=30)) == "succeeded"
    )
    async with app.state.sessionmaker() as db:
        done = await jobs_repo.get_job(db, job.id)
    assert done is not None
    assert done.started_at is not None
    assert done.finished_at is not None
    assert done.finished_at - done.started_at >= timedelta(seconds=0.5)


async def test_a_long_job_reporting_progress_keeps_its_claim(app: Any) -> None:
    """A redistill of a large bank runs longer than the job deadline: each session's progress renews its
    claim, so the sweep never requeues (and runs again) a job that is still working."""
    from app.db.repositories import jobs as jobs_repo

    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs_repo.create_job(
            db, kind="distill.redistill", bank_id=None, params={}, dedupe_key=None, max_attempts=3
        )
        other, _ = await jobs_repo.create_job(
            db, kind="distill.redistill", bank_id=None, params={}, dedupe_key=None, max_attempts=3
        )
    async with app.state.sessionmaker() as db, db.begin():
        claimed = await jobs_repo.claim(db, job.id, timedelta(seconds=1))
        assert claimed is not None
        await jobs_repo.set_progress(db, job.id, {"sessions_done": 1}, lease=timedelta(minutes=10))
        await jobs_repo.set_progress(db, other.id, {"sessions_done": 1}, lease=timedelta(minutes=10))
    async with app.state.sessionmaker() as db:
        renewed = await jobs_repo.get_job(db, job.id, fresh=True)
        queued = await jobs_repo.get_job(db, other.id, fresh=True)
    assert renewed is not None
    assert queued is not None
    assert renewed.deadline_at is not None
    assert renewed.deadline_at - datetime.now(UTC) > timedelta(minutes=9)
    assert queued.status == "queued"
    assert queued.deadline_at is None  # only a running job's claim is renewed


async def test_a_runner_outlived_by_its_deadline_changes_nothing_when_it_ends(app: Any) -> None:
    """The sweep failed the job for good while its runner still worked: the runner's late success neither
    marks it succeeded nor keeps its work."""
    import asyncio

    from sqlalchemy import update

    from app.db.models import Job
    from app.db.repositories import jobs as jobs_repo
    from app.jobs import service as jobs

    working, go_on = asyncio.Event(), asyncio.Event()
    made: list[Any] = []

    async def slow(db: Any, job: Any) -> dict[str, Any]:
        made.append((await jobs.create(db, "maintenance.sweep", dedupe_key=None))[0].id)  # its work
        working.set()
        await go_on.wait()
        return {"done": True}

    async with app.state.sessionmaker() as db, db.begin():
        job, _ = await jobs.create(db, "maintenance.sweep", dedupe_key=None)
    run = asyncio.create_task(
        jobs.run_in_session(app.state.work, job.id, slow, deadline=timedelta(seconds=30))
    )
    await working.wait()
    async with app.state.sessionmaker() as db, db.begin():  # as the sweep does past the last attempt
        await db.execute(update(Job).where(Job.id == job.id).values(deadline_at=None))
        await jobs_repo.finish(db, job.id, status="failed", error="deadline exceeded after 3 attempts")
    go_on.set()
    assert await run == "skipped"
    async with app.state.sessionmaker() as db:
        done = await jobs_repo.get_job(db, job.id)
        assert done is not None
        assert (done.status, done.result) == ("failed", None)
        assert await jobs_repo.get_job(db, made[0]) is None  # rolled back


# --- 3: a bank's config cannot break maintenance for every bank --------------------------------------------


async def test_config_values_are_bounded_by_what_their_use_can_hold(client: httpx.AsyncClient) -> None:
    bank = await create_bank(client, f"cfg-{uuid.uuid4().hex[:10]}")
    key = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read", "write"]})).json()["key"]
    headers = {"Authorization": f"Bearer {key}"}
    for config in (
        {"idle_distill_seconds": 10**18},
        {"ttl_days": {"episode": 1e9}},
        {"min_score": 1e300},
    ):
        body = assert_problem(
            await client.patch(f"/v1/banks/{bank}", json={"config": config}, headers=headers), 422
        )
        assert body["errors"], body
    fine = await client.patch(
        f"/v1/banks/{bank}", json={"config": {"idle_distill_seconds": 86400, "ttl_days": {"episode": 365}}}
    )
    assert fine.status_code == 200, fine.text


async def test_one_bank_s_stored_config_does_not_stop_the_sweep_or_expiry_of_others(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    poisoned = await create_bank(client, f"poison-{uuid.uuid4().hex[:10]}")
    await append(client, poisoned, "s", "My budget is 5000 EUR.")
    # Stored by a writer that bypasses the API (migration 0003 clamps what was stored before the bounds).
    await sql(
        "UPDATE banks SET config = config || CAST(:bad AS jsonb) WHERE id = :bank",
        bad='{"idle_distill_seconds": 1000000000000000000, "ttl_days": {"episode": 1e9}}',
        bank=poisoned,
    )
    healthy = await create_bank(
        client, f"healthy-{uuid.uuid4().hex[:10]}", idle_distill_seconds=1, ttl_days={"fact": 0.5}
    )
    await append(client, healthy, "idle", "I live in Porto.")

    async def swept_and_distilled() -> bool:
        # Every sweep succeeds (the poisoned bank's value is clamped in SQL); once the healthy
        # session has been idle for its one second, a sweep distils it.
        sweep = await client.post("/v1/admin/maintenance/sweep")
        job = await finished_job(client, sweep.json()["job_id"])
        assert job["status"] == "succeeded", job["error"]
        rows = await sql("SELECT distilled_seq FROM sessions WHERE bank_id = :bank", bank=healthy)
        return bool(rows[0]["distilled_seq"] == 1)

    await wait_for(swept_and_distilled, within=60, interval=0.3)

    written = await client.post(
        f"/v1/banks/{healthy}/memories",
        params={"wait": "true"},
        json={"content": "Ida's locker is number 12.", "tags": ["fact"]},
    )
    assert written.status_code == 201, written.text
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    expire = await client.post("/v1/admin/maintenance/expire", json={"now": later})
    job = await finished_job(client, expire.json()["job_id"])
    assert job["status"] == "succeeded", job["error"]
    assert poisoned in job["result"]["failed_banks"]
    assert job["result"]["banks"][healthy]["archived"] >= 1
    unit = await client.get(f"/v1/banks/{healthy}/memories/{written.json()['memory']['id']}")
    assert unit.json()["status"] == "archived"
    # Leave no bank behind whose stored config no route can read (other tests list every bank).
    await sql("UPDATE banks SET config = '{}' WHERE id = :bank", bank=poisoned)
    assert (await client.delete(f"/v1/banks/{poisoned}")).status_code == 204


# --- 5: an older statement written later ------------------------------------------------------------------


async def write(
    client: httpx.AsyncClient, bank: str, content: str, at: str | None = None, wait: bool = True
) -> dict[str, Any]:
    body: dict[str, Any] = {"content": content, "tags": ["constraint.budget"]}
    if at is not None:
        body["occurred_at"] = at
    response = await client.post(f"/v1/banks/{bank}/memories", params={"wait": str(wait).lower()}, json=body)
    assert response.status_code == (201 if wait else 202), response.text
    unit: dict[str, Any] = response.json()["memory"]
    return unit


async def unit_of(client: httpx.AsyncClient, bank: str, unit: dict[str, Any]) -> dict[str, Any]:
    response = await client.get(f"/v1/banks/{bank}/memories/{unit['id']}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def active_budgets(client: httpx.AsyncClient, bank: str) -> list[str]:
    listed = await client.get(f"/v1/banks/{bank}/memories", params={"status": "active"})
    assert listed.status_code == 200, listed.text
    return [m["content"] for m in listed.json()["memories"]]


async def test_an_older_statement_written_later_becomes_history(client: httpx.AsyncClient) -> None:
    bank = await create_bank(client, f"late-{uuid.uuid4().hex[:10]}")
    newer = await write(client, bank, "Ida's budget is 6000 EUR.", "2026-11-30T09:00:00+00:00")
    older = await write(client, bank, "Ida's budget is 5000 EUR.", "2026-01-15T09:00:00+00:00")
    assert older["status"] == "superseded"
    assert older["superseded_by"] == newer["id"]
    assert older["valid_to"] == newer["valid_from"]
    head = await unit_of(client, bank, newer)
    assert head["status"] == "active"
    assert head["valid_to"] is None
    assert await active_budgets(client, bank) == ["Ida's budget is 6000 EUR."]

    # One said in between joins the chain at its place: 5000 (January) → 5500 (June) → 6000 (November).
    middle = await write(client, bank, "Ida's budget is 5500 EUR.", "2026-06-01T09:00:00+00:00")
    assert middle["status"] == "superseded"
    chain = (await client.get(f"/v1/banks/{bank}/memories/{newer['id']}/history")).json()["chain"]
    assert [u["content"] for u in chain] == [
        "Ida's budget is 5000 EUR.",
        "Ida's budget is 5500 EUR.",
        "Ida's budget is 6000 EUR.",
    ]
    assert [u["status"] for u in chain] == ["superseded", "superseded", "active"]
    assert (await unit_of(client, bank, older))["valid_to"] == middle["valid_from"]


async def test_an_older_statement_resolved_in_the_background_becomes_history(
    client: httpx.AsyncClient, worker: Any
) -> None:
    bank = await create_bank(client, f"late-{uuid.uuid4().hex[:10]}")
    newer = await write(client, bank, "Ida's budget is 6000 EUR.", "2026-11-30T09:00:00+00:00", wait=False)

    async def resolved(unit: dict[str, Any]) -> bool:
        return bool((await unit_of(client, bank, unit))["status"] != "pending")

    await wait_for(lambda: resolved(newer), within=60)
    older = await write(client, bank, "Ida's budget is 5000 EUR.", "2026-01-15T09:00:00+00:00", wait=False)
    await wait_for(lambda: resolved(older), within=60)
    assert (await unit_of(client, bank, newer))["status"] == "active"
    assert (await unit_of(client, bank, older))["status"] == "superseded"


async def test_under_parallel_contradicting_writes_the_one_said_last_is_active(
    client: httpx.AsyncClient,
) -> None:
    import asyncio
    import random

    bank = await create_bank(client, f"race-{uuid.uuid4().hex[:10]}")
    days = list(range(1, 21))
    random.Random(7).shuffle(days)  # arrival order differs from the order they were said
    written = await asyncio.gather(
        *(
            write(client, bank, f"Ida's budget is {1000 + d} EUR.", f"2026-03-{d:02d}T09:00:00+00:00")
            for d in days
        )
    )
    assert len(written) == 20
    assert await active_budgets(client, bank) == ["Ida's budget is 1020 EUR."]


# --- 6: restore resolves again -----------------------------------------------------------------------------


async def test_a_restored_unit_is_resolved_again(client: httpx.AsyncClient) -> None:
    bank = await create_bank(client, f"restore-{uuid.uuid4().hex[:10]}")
    old = await write(client, bank, "Ida's budget is 5000 EUR.")
    assert (await client.delete(f"/v1/banks/{bank}/memories/{old['id']}")).status_code == 200
    new = await write(client, bank, "Ida's budget is 6000 EUR.")
    assert new["status"] == "active"
    restored = await client.post(f"/v1/banks/{bank}/memories/{old['id']}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["status"] == "superseded"
    assert restored.json()["superseded_by"] == new["id"]
    assert await active_budgets(client, bank) == ["Ida's budget is 6000 EUR."]
    answer = await client.post(f"/v1/banks/{bank}/query", json={"query": "What is Ida's budget?"})
    assert "6000" in answer.json()["context"]
    assert "5000" not in answer.json()["context"]

    # Restoring a unit with nothing newer against it brings it back in force.
    response = await client.post(
        f"/v1/banks/{bank}/memories",
        params={"wait": "true"},
        json={"content": "Ida prefers window seats.", "tags": ["preference.travel"]},
    )
    alone = response.json()["memory"]
    await client.delete(f"/v1/banks/{bank}/memories/{alone['id']}")
    back = await client.post(f"/v1/banks/{bank}/memories/{alone['id']}/restore")
    assert back.json()["status"] == "active"


# --- 7: a held bank lock ---------------------------------------------------------------------------------


async def test_writes_under_a_held_bank_lock_answer_503_or_wait(client: httpx.AsyncClient, app: Any) -> None:
    import asyncio

    from app.db.repositories.locks import xact_lock
    from app.keys import composite_key

    bank = await create_bank(client, f"locked-{uuid.uuid4().hex[:10]}")
    unit = await write(client, bank, "Ida's budget is 5000 EUR.")
    async with app.state.sessionmaker() as holder, holder.begin():
        assert await xact_lock(holder, composite_key("resolve", bank), 1.0)  # a long resolve.bank
        patched = await client.patch(
            f"/v1/banks/{bank}/memories/{unit['id']}", json={"content": "Ida's budget is 6000 EUR."}
        )
        body = assert_problem(patched, 503)
        assert "busy" in body["detail"]
        assert int(patched.headers["Retry-After"]) >= 1

        # A write that waits within its bound goes through once the lock is let go.
        async def release_soon() -> None:
            await asyncio.sleep(0.5)
            await holder.commit()

        waited, _ = await asyncio.gather(
            client.post(
                f"/v1/banks/{bank}/memories",
                params={"wait": "true"},
                json={"content": "Ida's budget is 7000 EUR.", "tags": ["constraint.budget"]},
            ),
            release_soon(),
        )
    assert waited.status_code == 201, waited.text
    assert waited.json()["memory"]["status"] == "active"


async def test_resolution_of_a_backlog_releases_the_bank_lock_between_batches(
    client: httpx.AsyncClient, app: Any, monkeypatch: Any
) -> None:
    """Each batch is a transaction of its own, so the lock is free between two batches."""
    from app.db.repositories import jobs as jobs_repo
    from app.distill.entry import statement_graph
    from app.memory import service as memory
    from app.memory.write import Writer
    from app.resolve import service as resolution
    from app.schemas.memories import MemoryCreate

    bank_id = await create_bank(client, f"backlog-{uuid.uuid4().hex[:10]}")
    async with app.state.sessionmaker() as db, db.begin():
        from app.banks.config import ConfiguredBank
        from app.db.repositories import banks as banks_repo

        row = await banks_repo.get_bank(db, bank_id)
        assert row is not None
        bank = ConfiguredBank.of(row)
        for i in range(5):  # pending units nobody was asked to resolve yet
            body = MemoryCreate(content=f"Ida visited city number {i}.", tags=["fact.location"])
            await memory.create(db, app.state.embedder, bank, body, Writer.direct("test", statement_graph))
        job, _ = await jobs_repo.create_job(
            db, kind="resolve.bank", bank_id=bank_id, params={}, dedupe_key=None, max_attempts=1
        )
    monkeypatch.setattr(resolution, "BATCH", 2)
    transactions = 0

    def counting_sessionmaker() -> Any:
        nonlocal transactions
        transactions += 1
        return app.state.sessionmaker()

    counts = await resolution.resolve_bank(counting_sessionmaker, job, embedder=app.state.embedder)
    assert sum(counts.values()) == 5
    assert transactions == 3  # 2 + 2 + 1 units
    assert await active_budgets(client, bank_id) != []


# --- 4: a replay of an unchanged distiller changes nothing --------------------------------------------------


async def test_a_no_op_redistill_changes_nothing(client: httpx.AsyncClient, worker: Any, sql: Any) -> None:
    bank = await create_bank(client, f"replay-{uuid.uuid4().hex[:10]}", distill_every_n_turns=1000)
    await append(client, bank, "s", "My budget is 5000 EUR.", "Actually my budget is 6000 EUR.")
    closed = await client.post(f"/v1/banks/{bank}/sessions/s/close")
    assert (await finished_job(client, closed.json()["job_id"]))["status"] == "succeeded"

    async def statuses() -> list[tuple[str, str]]:
        rows = await sql(
            "SELECT content, status FROM memory_units WHERE bank_id = :bank ORDER BY content, status",
            bank=bank,
        )
        return [(r["content"], r["status"]) for r in rows]

    async def resolved() -> list[tuple[str, str]] | None:
        found = await statuses()
        return found if found and all(status != "pending" for _, status in found) else None

    before = await wait_for(resolved)
    [active] = [c for c, status in before if status == "active"]
    assert "6000" in active
    for _ in range(3):
        replay = await client.post(f"/v1/banks/{bank}/redistill", json={})
        job = await finished_job(client, replay.json()["job_id"])
        assert job["status"] == "succeeded", job["error"]
        assert job["result"]["counts"].get("added", 0) == 0, job["result"]
        assert job["result"]["counts"].get("removed", 0) == 0, job["result"]
        assert await wait_for(resolved) == before
