"""Resolution by claims on the real stack (issue 31): the seeds' budget sequence with a turn between,
near-miss budgets that never replace each other, a partial update that leaves the still-true half
active (and what a statement says is unchanged beside what it changes, and a clause's other values when one
of them changes), a hedged statement beside a
firm one, a retirement, PATCH re-reading the claim, and the claim carried by export and import — each
told as a conversation and written directly where it applies."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.factories import make_bank, memories, ok, say, write

NDJSON = {"content-type": "application/x-ndjson"}

BUDGET_SEQUENCES = {
    "zh": (
        "我想买一台笔记本电脑，预算是5000元。",
        "我喜欢邮件通知，不要打电话。",
        "如果配置能升级的话，可以到8000。",
    ),
    "en": (
        "I want to buy a laptop, my budget is 5000.",
        "I prefer email notifications, no phone calls.",
        "If the specs can be upgraded, it can go to 8000.",
    ),
}


async def tell(client: httpx.AsyncClient, bank: str, mode: str, text: str, tags: list[str]) -> None:
    """One statement: a user turn distilled, or a direct write."""
    if mode == "conversation":
        await say(client, bank, text)
    else:
        await write(client, bank, text, tags)


async def history_actions(client: httpx.AsyncClient, bank: str, memory_id: str) -> list[str]:
    lineage = ok(await client.get(f"/v1/banks/{bank}/memories/{memory_id}/history"))
    return [a["action"] for a in lineage["actions"]]


def holding(units: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    return [u for u in units if text in u["content"]]


@pytest.mark.parametrize("mode", ["conversation", "direct"])
@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_seeds_budget_raise_with_a_turn_between_supersedes_the_old_budget(
    client: httpx.AsyncClient, worker: Any, lang: str, mode: str
) -> None:
    bank = await make_bank(client)
    first, between, raised = BUDGET_SEQUENCES[lang]
    await tell(client, bank, mode, first, ["constraint.budget"])
    await tell(client, bank, mode, between, ["preference"])
    await tell(client, bank, mode, raised, ["constraint.budget"])
    active = await memories(client, bank, status="active")
    assert holding(active, "8000"), active
    assert not holding(active, "5000"), active
    [old] = holding(await memories(client, bank, status="superseded"), "5000")
    assert old["superseded_by"] is not None
    assert holding(active, "邮件" if lang == "zh" else "email"), active  # the turn between stays


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_a_budget_of_another_thing_never_replaces_the_laptop_budget(
    client: httpx.AsyncClient, worker: Any, mode: str
) -> None:
    bank = await make_bank(client)
    await tell(client, bank, mode, "My budget for the laptop is 5000.", ["constraint.budget"])
    await tell(client, bank, mode, "My budget for the vacation is 8000.", ["constraint.budget"])
    active = await memories(client, bank, status="active")
    assert holding(active, "5000"), active
    assert holding(active, "8000"), active
    answer = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": "What is my laptop budget?"}))
    assert "5000" in answer["memories"][0]["content"], answer["memories"]


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_a_partial_update_keeps_the_still_true_half_active(
    client: httpx.AsyncClient, worker: Any, mode: str
) -> None:
    bank = await make_bank(client)
    await tell(client, bank, mode, "I live in Lisbon and I work at Contoso as a nurse.", ["fact"])
    await tell(client, bank, mode, "I live in Oslo.", ["fact"])
    active = await memories(client, bank, status="active")
    assert holding(active, "Oslo"), active
    assert holding(active, "Contoso"), active
    assert not holding(active, "Lisbon"), active


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_a_clause_whose_one_value_changes_keeps_its_other_values_active(
    client: httpx.AsyncClient, worker: Any, mode: str
) -> None:
    bank = await make_bank(client)
    await tell(client, bank, mode, "My design review is on June 9 in room A301.", ["fact.schedule"])
    await tell(client, bank, mode, "The design review was moved to room B115.", ["fact.schedule"])
    active = await memories(client, bank, status="active")
    assert not holding(active, "A301"), active
    [kept] = [u for u in holding(active, "June 9") if "B115" in u["content"]]  # said with the new room
    assert kept["metadata"]["split_from"], kept
    assert await history_actions(client, bank, kept["id"]) == ["split"]


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_what_a_statement_says_is_unchanged_stays_active_beside_what_it_changes(
    client: httpx.AsyncClient, worker: Any, mode: str
) -> None:
    bank = await make_bank(client)
    await tell(
        client, bank, mode, "Our staging database runs Postgres 13 and production runs Postgres 15.", ["fact"]
    )
    await tell(
        client,
        bank,
        mode,
        "Staging was upgraded to Postgres 16 last night; production is unchanged.",
        ["fact"],
    )
    active = await memories(client, bank, status="active")
    assert holding(active, "Postgres 16"), active
    assert holding(active, "Postgres 15"), active
    assert not holding(active, "Postgres 13"), active


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_a_value_whose_clause_leans_on_its_turn_replaces_the_value_of_that_thing(
    client: httpx.AsyncClient, worker: Any, mode: str
) -> None:
    """ "…, it's 55 euros now" names no membership itself: read in its turn, it is the membership's new
    fee, not a change of the phone plan said just before (distilled, the clause is a unit of its own)."""
    bank = await make_bank(client)
    await tell(client, bank, mode, "My gym membership is 40 euros a month.", ["fact"])
    await tell(client, bank, mode, "My phone plan is 25 euros a month.", ["fact"])
    await tell(client, bank, mode, "My gym membership went up, it's 55 euros a month now.", ["fact"])
    active = await memories(client, bank, status="active")
    assert holding(active, "55 euros"), active
    assert holding(active, "25 euros"), active
    assert not holding(active, "40 euros"), active
    [fee] = holding(active, "55 euros")
    assert fee["claim"]["attribute"] == "gym_membership", fee


async def test_a_compound_unit_leaves_a_residual_unit_with_its_sources_and_claim(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client)
    compound = await write(client, bank, "I live in Lisbon and I work at Contoso as a nurse.", ["fact"])
    assert compound["claim"]["attribute"] == "address.home"
    await write(client, bank, "I live in Oslo.", ["fact"])
    [residual] = holding(await memories(client, bank, status="active"), "Contoso")
    assert residual["id"] != compound["id"]
    assert residual["tags"] == ["fact"]
    assert residual["metadata"]["split_from"] == compound["id"]
    assert residual["claim"]["value"] == "Contoso"
    assert "Lisbon" not in residual["content"]
    assert await history_actions(client, bank, residual["id"]) == ["split"]
    old = ok(await client.get(f"/v1/banks/{bank}/memories/{compound['id']}"))
    assert old["status"] == "superseded"


@pytest.mark.parametrize(
    ("firm", "hedged"),
    [
        ("My laptop budget is 5000.", "If prices drop I might go to 9000."),
        ("My laptop budget is 5000.", "Maybe my laptop budget will be 9000 if I get a bonus."),
    ],
)
async def test_a_hedged_statement_never_replaces_a_firm_one(
    client: httpx.AsyncClient, firm: str, hedged: str
) -> None:
    bank = await make_bank(client)
    old = await write(client, bank, firm, ["constraint.budget"])
    new = await write(client, bank, hedged, ["constraint.budget"])
    assert new["claim"]["modality"] == "hedged", new["claim"]
    assert (new["status"], new["supersedes"]) == ("active", None)
    assert ok(await client.get(f"/v1/banks/{bank}/memories/{old['id']}"))["status"] == "active"


@pytest.mark.parametrize("mode", ["conversation", "direct"])
async def test_a_retirement_ends_the_old_claim(client: httpx.AsyncClient, worker: Any, mode: str) -> None:
    bank = await make_bank(client)
    await tell(client, bank, mode, "I have a cat named Tom.", ["fact"])
    await tell(client, bank, mode, "I don't have the cat anymore.", ["fact"])
    assert not holding(await memories(client, bank, status="active"), "Tom")
    [old] = holding(await memories(client, bank, status="superseded"), "Tom")
    assert "retired" in await history_actions(client, bank, old["id"])


@pytest.mark.parametrize("mode", ["conversation", "direct"])
@pytest.mark.parametrize(
    ("greeting", "told", "retired", "thing", "detail"),
    [
        # told to an assistant the turn becomes two units, the card and its fee; written, one unit
        (
            "您好，请问有什么可以帮您？",
            "我办了一张健身卡，年费1800元。",
            "健身卡我已经退了。",
            "办了一张健身卡",
            "1800",
        ),
        # what a relative clause says of the thing, and what the one taken on does
        (
            "Hi, how can I help?",
            "We have a gardener, Tomas, who comes every other Monday.",
            "We let Tomas go.",
            "gardener",
            "every other Monday",
        ),
        (
            "您好，请问有什么可以帮您？",
            "家里请了个钟点工，每周四来打扫。",
            "钟点工我们辞了。",
            "请了个钟点工",
            "周四",
        ),
    ],
)
async def test_a_retirement_takes_the_details_of_its_thing(
    client: httpx.AsyncClient,
    worker: Any,
    mode: str,
    greeting: str,
    told: str,
    retired: str,
    thing: str,
    detail: str,
) -> None:
    bank = await make_bank(client)
    opening = {"events": [{"role": "assistant", "content": greeting}]}
    await client.post(f"/v1/banks/{bank}/sessions/s/events", json=opening)
    await tell(client, bank, mode, told, ["fact"])
    await tell(client, bank, mode, retired, ["fact"])
    active = await memories(client, bank, status="active")
    assert not holding(active, detail), active
    assert not holding(active, thing), active
    for old in holding(await memories(client, bank, status="superseded"), detail):
        assert "retired" in await history_actions(client, bank, old["id"])


async def test_a_direct_write_carries_its_claim_from_the_start(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    response = await client.post(
        f"/v1/banks/{bank}/memories", json={"content": "My laptop budget is 5000.", "tags": ["constraint"]}
    )
    unit = ok(response, 202)["memory"]
    assert unit["status"] == "pending"
    assert unit["claim"] == {
        "subject": "user",
        "attribute": "budget.laptop",
        "value": "5000",
        "value_type": "number",
        "modality": "firm",
    }


async def test_patch_reads_the_claim_and_entities_of_the_new_content(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    old = await write(client, bank, "I live in Lisbon.", ["fact"])
    assert old["claim"]["value"] == "Lisbon"
    patched = await client.patch(
        f"/v1/banks/{bank}/memories/{old['id']}", json={"content": "I live in Oslo."}
    )
    new = ok(patched, 201)
    assert new["claim"]["attribute"] == "address.home"
    assert new["claim"]["value"] == "Oslo"
    names = {e["name"] for e in new["entities"]}
    assert "Oslo" in names
    assert "Lisbon" not in names


async def test_export_carries_claims_and_an_old_export_without_them_reads_them_again(
    client: httpx.AsyncClient,
) -> None:
    bank = await make_bank(client)
    await write(client, bank, "My laptop budget is 5000.", ["constraint.budget"])
    response = await client.get(f"/v1/banks/{bank}/export")
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    [unit] = [line for line in lines if line["type"] == "memory"]
    assert unit["claim"]["attribute"] == "budget.laptop"
    assert [c["attribute"] for c in unit["claims"]] == ["budget.laptop"]
    for name, keep in (("kept", True), ("read-again", False)):
        changed = [
            line if line["type"] != "memory" or keep else {k: v for k, v in line.items() if "claim" not in k}
            for line in lines
        ]
        body = "".join(json.dumps(line) + "\n" for line in changed)
        target = f"{bank}-{name}"
        ok(await client.post(f"/v1/banks/{target}/import", content=body, headers=NDJSON), 201)
        [imported] = await memories(client, target)
        assert imported["claim"] == unit["claim"], name


@pytest.mark.parametrize(
    ("first", "later", "question", "value"),
    [
        (
            "My delivery address is 5 Harbour Lane.",
            "Sorry, I meant 18 Elm Road.",
            "What is my delivery address?",
            "18 Elm",
        ),
        ("我的快递地址是建国路5号。", "不对，是望京街18号。", "我的快递地址是什么？", "望京街18号"),
    ],
)
async def test_a_value_said_elliptically_is_found_by_the_words_of_the_attribute_it_replaced(
    client: httpx.AsyncClient, worker: Any, first: str, later: str, question: str, value: str
) -> None:
    bank = await make_bank(client)
    await write(client, bank, first, ["fact"])
    await write(client, bank, later, ["correction"])
    [head] = await memories(client, bank, status="active")
    assert value in head["content"], head
    answer = ok(await client.post(f"/v1/banks/{bank}/query", json={"query": question}))
    assert answer["memories"], answer
    assert value in answer["memories"][0]["content"], answer["memories"]
