"""Distilled, not transcribed (issue 16), on the real stack: the seeds' budget conversation in both
languages, as an agent appends it (the assistant's greetings, echoes and pleasantries included), leaves
one active budget (the later, conditional one, its condition kept), no unit of the noise turns, and no
unit that carries only the superseded value among the top 5 for a question about the budget."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.seeds import BUDGET_CONVERSATION
from tests.conftest import wait_for
from tests.factories import finished_job, make_bank, memories, settled

CONVERSATIONS = BUDGET_CONVERSATION  # the seeds' conversation (app/seeds.py)
NOISE_SEQS = {"en": {1, 2, 4, 6, 8, 10}, "zh": {1, 2, 4, 6, 8, 10}}
QUESTION = {"en": "What is the user's budget?", "zh": "用户的预算是多少？"}


async def converse(client: httpx.AsyncClient, bank: str, lines: list[tuple[str, str]]) -> None:
    events = [{"role": role, "content": text} for role, text in lines]
    response = await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": events})
    assert response.status_code == 202, response.text
    job = await finished_job(
        client, (await client.post(f"/v1/banks/{bank}/sessions/s/distill")).json()["job_id"]
    )
    assert job["status"] == "succeeded", job
    await wait_for(lambda: settled(client, bank))


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_seeds_conversation_is_distilled_not_transcribed(
    client: httpx.AsyncClient, worker: Any, lang: str
) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000)
    await converse(client, bank, CONVERSATIONS[lang])

    everything = await memories(client, bank, status="active") + await memories(
        client, bank, status="superseded"
    )
    seqs = [set(m["source"]["seqs"]) for m in everything]
    assert not [m["content"] for m, s in zip(everything, seqs, strict=True) if s & NOISE_SEQS[lang]]
    # one budget: 8000 with its condition, at a lower confidence; 5000 superseded
    [budget] = await memories(client, bank, tag="constraint.budget", status="active")
    assert "8000" in budget["content"]
    assert ("If" in budget["content"]) if lang == "en" else ("如果" in budget["content"])
    assert budget["confidence"] < 0.8
    [old] = await memories(client, bank, tag="constraint.budget", status="superseded")
    assert "5000" in old["content"]
    # the question about the price states no budget
    assert not [
        m for m, s in zip(everything, seqs, strict=True) if s == {7} and "constraint.budget" in m["tags"]
    ]
    # "…, and my order number is …": two units citing the same turn
    assert sorted(m["tags"][0] for m, s in zip(everything, seqs, strict=True) if s == {9}) == [
        "fact.id",
        "preference.style",
    ]

    response = await client.post(f"/v1/banks/{bank}/query", json={"query": QUESTION[lang], "top_k": 5})
    assert response.status_code == 200, response.text
    top = response.json()["memories"]
    assert "8000" in top[0]["content"]
    assert not [m["content"] for m in top if "5000" in m["content"] and "8000" not in m["content"]]
