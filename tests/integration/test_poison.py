"""Hostile turns on the real stack (issue 29): no turn holds back its session's memory, a turn the
distiller still fails on is quarantined (its reason in the job result and the session view), and
invisible format characters never reach a unit's content while the raw events keep them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from app.distill.types import DistillContext, DistillResult, TaskResult
from tests.conftest import Stack
from tests.factories import InProcessDistill, finished_job, make_bank, ok, units

BIDI = "\u202e\u2066" * 200
# What a hostile user appends: long digit runs, a phone-like run, a 600-letter company, repeated ids.
HOSTILE = [
    "My budget is " + "9" * 400 + ".",
    "My phone number is " + "5" * 280 + ".",
    "Call me at +" + "1" * 280,
    "I work at C" + "o" * 600 + " as a nurse.",
    "I work at " + "Contoso" * 86 + " Inc.",
    "My order is ORD-" + "12345-" * 1500,
    "My order numbers are " + "ORD-12345 " * 800,
    "I need " + "1,000 " * 3000 + "boxes by Friday.",
]


async def distil(client: httpx.AsyncClient, bank: str, session: str = "s") -> dict[str, Any]:
    job_id = ok(await client.post(f"/v1/banks/{bank}/sessions/{session}/distill"), 202)["job_id"]
    job = await finished_job(client, job_id, within=120)
    assert job["status"] == "succeeded", job
    return job


async def append(client: httpx.AsyncClient, bank: str, texts: list[str], session: str = "s") -> None:
    body = {"events": [{"role": "user", "content": text} for text in texts]}
    ok(await client.post(f"/v1/banks/{bank}/sessions/{session}/events", json=body), 202)


async def test_a_hostile_turn_among_others_is_distilled_and_the_watermark_moves(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await append(
        client,
        bank,
        ["I live in Lisbon and I work at Contoso as a nurse.", HOSTILE[0], "My favourite colour is teal."],
    )
    job = await distil(client, bank)
    assert job["result"]["distilled_seq"] == 3
    assert "quarantined" not in job["result"]
    session = ok(await client.get(f"/v1/banks/{bank}/sessions/s"))
    assert (session["distilled_seq"], session["quarantined"]) == (3, [])
    made = await units(sql, bank)
    assert {seq for u in made for seq in u["source_seqs"]} == {1, 2, 3}
    names = await sql("SELECT name FROM entities WHERE bank_id = :bank", bank=bank)
    assert "Lisbon" in {n["name"] for n in names}
    assert all(len(n["name"]) <= 256 for n in names)  # 400 digits are no amount


async def test_every_hostile_text_is_distilled_with_bounded_names(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await append(client, bank, [*HOSTILE, "My favourite colour is teal."])
    job = await distil(client, bank)
    assert job["result"]["distilled_seq"] == len(HOSTILE) + 1
    assert "quarantined" not in job["result"]
    made = await units(sql, bank)
    assert len(HOSTILE) + 1 in {seq for u in made for seq in u["source_seqs"]}
    assert all(len(u["content"]) <= 4000 for u in made)
    names = await sql("SELECT name FROM entities WHERE bank_id = :bank", bank=bank)
    assert all(len(n["name"]) <= 256 for n in names)


@pytest.mark.parametrize("text", [t for t in HOSTILE if len(t) <= 4000])
async def test_a_direct_write_of_hostile_text_is_accepted(client: httpx.AsyncClient, text: str) -> None:
    bank = await make_bank(client)
    response = await client.post(f"/v1/banks/{bank}/memories", json={"content": text, "tags": ["fact"]})
    assert response.status_code == 202, response.text
    waited = await client.post(
        f"/v1/banks/{bank}/memories", params={"wait": "true"}, json={"content": text, "tags": ["fact"]}
    )
    assert waited.status_code == 201, waited.text


async def test_a_direct_write_longer_than_a_unit_is_a_clear_422(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    response = await client.post(f"/v1/banks/{bank}/memories", json={"content": HOSTILE[5], "tags": ["fact"]})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


class FailsOnMarker:
    """The heuristic distiller, failing (as a bug would) on any batch holding a turn with the marker."""

    def __init__(self, marker: str) -> None:
        from app.distill.heuristic.distiller import HeuristicDistiller

        self.inner = HeuristicDistiller()
        self.marker = marker
        self.name, self.version, self.uses_related = "heuristic", self.inner.version, False

    async def distill(self, context: DistillContext) -> DistillResult:
        if any(self.marker in t.content for t in context.turns):
            raise RuntimeError("the rules met a turn they cannot read")
        return await self.inner.distill(context)

    async def task(self, context: DistillContext, min_steps: int) -> TaskResult:
        return await self.inner.task(context, min_steps)

    async def aclose(self) -> None:
        return None


@pytest.fixture
async def failing_runtime(stack: Stack, app: Any) -> AsyncIterator[Any]:
    """The worker's distillation code in this process, with a distiller that fails on one turn."""
    from app.config import get_settings
    from app.db.engine import create_engine, create_sessionmaker
    from app.providers.embeddings import OpenAIEmbedder

    engine = create_engine(get_settings(), pool_size=4)
    embedder = OpenAIEmbedder("fake-embedding", 384, stack.llm_url, "key")
    distiller = FailsOnMarker("POISON")
    yield InProcessDistill(create_sessionmaker(engine), embedder, distiller, app.state.work)
    await embedder.aclose()
    await engine.dispose()


async def run_distill_job(rt: Any, bank: str) -> dict[str, Any]:
    from app.distill.service import distill_session
    from app.jobs import service as jobs
    from app.jobs.schedule import schedule_distill

    async with rt.sessionmaker() as db, db.begin():
        job, _ = await schedule_distill(db, bank, "s")
    status = await jobs.run(rt.work, job.id, lambda j: distill_session(rt, j), deadline=timedelta(seconds=60))
    assert status == "succeeded"
    return {"id": str(job.id)}


async def test_a_turn_the_distiller_fails_on_is_quarantined_and_the_rest_distilled(
    client: httpx.AsyncClient, sql: Any, failing_runtime: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await append(
        client,
        bank,
        [
            "I live in Lisbon and I work at Contoso as a nurse.",
            "POISON my budget is 5000.",
            "My favourite colour is teal.",
            "POISON again.",
            "My order number is ORD-20417.",
        ],
    )
    job_id = (await run_distill_job(failing_runtime, bank))["id"]
    job = ok(await client.get(f"/v1/jobs/{job_id}"))
    assert job["result"]["distilled_seq"] == 5
    quarantined = job["result"]["quarantined"]
    assert [q["seq"] for q in quarantined] == [2, 4]
    assert quarantined[0]["reason"] == "RuntimeError: the rules met a turn they cannot read"
    session = ok(await client.get(f"/v1/banks/{bank}/sessions/s"))
    assert session["distilled_seq"] == 5
    assert session["quarantined"] == [{**q, "job_id": job_id} for q in quarantined]
    listed = ok(await client.get(f"/v1/banks/{bank}/sessions"))["sessions"]
    assert listed[0]["quarantined"] == session["quarantined"]
    made = {seq for u in await units(sql, bank) for seq in u["source_seqs"]}
    assert made == {1, 3, 5}  # the batch distilled without the quarantined turns
    # Nothing is left to retry: a second run finds no undistilled turn and quarantines nothing new.
    again = ok(await client.get(f"/v1/jobs/{(await run_distill_job(failing_runtime, bank))['id']}"))
    assert "quarantined" not in again["result"]
    assert ok(await client.get(f"/v1/banks/{bank}/sessions/s"))["quarantined"] == session["quarantined"]


async def test_a_turn_of_bidi_overrides_becomes_a_unit_without_them(
    client: httpx.AsyncClient, worker: Any, sql: Any
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    said = BIDI + "I live in Lisbon and my budget is 5000.\u200b"
    await append(client, bank, [said])
    await distil(client, bank)
    made = await units(sql, bank)
    assert made
    for unit in made:
        assert not any(c in unit["content"] for c in "\u202e\u2066\u200b"), unit["content"]
    assert made[0]["content"].startswith("The user")
    raw = ok(await client.get(f"/v1/banks/{bank}/sessions/s/events"))["events"]
    assert raw[0]["content"] == said  # the raw event keeps what was said


async def test_direct_writes_and_patches_store_content_without_invisible_characters(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client)
    written = ok(
        await client.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={
                "content": BIDI + "The user prefers window\u200b seats.\ufeff",
                "tags": ["preference"],
                "entities": [{"name": "Win\u2060dow", "type": "other"}],
            },
        ),
        201,
    )["memory"]
    assert written["content"] == "The user prefers window seats."
    assert [e["name"] for e in written["entities"]] == ["Window"]
    patched = ok(
        await client.patch(
            f"/v1/banks/{bank}/memories/{written['id']}",
            json={"content": "\u202dThe user prefers aisle seats.\u2069"},
        ),
        201,
    )
    assert patched["content"] == "The user prefers aisle seats."
    # Nothing visible left: a clear 422, not an empty unit.
    empty = await client.post(
        f"/v1/banks/{bank}/memories", json={"content": "\u202e\u2066\u200b", "tags": ["fact"]}
    )
    assert empty.status_code == 422, empty.text
