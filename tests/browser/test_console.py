"""The console's views in a real browser on the seed scenario: sign-in, the bank and its units, the
5000 → 8000 lineage, the replay timeline, the recall tester, a session, and what each key may see."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.conftest import PHONE, SEED_QUERY, Console, Seeded, bank_key, fresh_bank, say
from tests.conftest import ADMIN_KEY
from tests.factories import write


async def test_sign_in_lists_the_banks_with_counts(console: Console, seeded: Seeded) -> None:
    await console.sign_in(ADMIN_KEY)
    await expect(console.page).to_have_url(re.compile(r"/ui/banks$"))
    row = console.page.get_by_test_id("bank-row").filter(has_text=seeded.bank)
    await expect(row).to_have_count(1)
    # active units, all units, sessions, events
    await expect(row.locator("td").nth(0)).to_have_text("2")
    await expect(row.locator("td").nth(1)).to_have_text("3")
    await expect(row.locator("td").nth(3)).to_have_text("3")
    assert ADMIN_KEY not in console.page.url
    await console.shot("banks")
    await row.get_by_role("link", name=seeded.bank).click()
    await expect(console.page.get_by_test_id("session-row")).to_have_count(1)
    await expect(console.page.get_by_role("heading", name="Units by status")).to_be_visible()
    await console.shot("bank")


async def test_the_bank_shows_its_units_newest_first(console: Console, seeded: Seeded) -> None:
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}/memories")
    rows = console.page.get_by_test_id("memory-row")
    await expect(rows).to_have_count(3)
    await expect(rows.nth(0)).to_contain_text("8000")
    await expect(rows.nth(2)).to_contain_text("5000")
    await expect(rows.nth(2)).to_have_attribute("data-status", "superseded")
    await console.shot("memories")
    # Filters go to the API (status, tag prefix) and into the URL, never the key.
    await console.page.get_by_label("Status").select_option("active")
    await console.page.get_by_label("Tag prefix").fill("constraint")
    await console.page.get_by_role("button", name="Filter").click()
    await expect(rows).to_have_count(1)
    await expect(rows.nth(0)).to_contain_text("8000")
    await expect(console.page).to_have_url(re.compile(r"status=active&tag=constraint"))


async def test_the_superseded_budget_draws_its_lineage(console: Console, seeded: Seeded) -> None:
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}/memories")
    await console.page.get_by_role("link", name=seeded.old["content"]).click()
    await expect(console.page.get_by_test_id("memory-content")).to_have_text(seeded.old["content"])
    nodes = console.page.get_by_test_id("lineage").get_by_test_id("lineage-node")
    await expect(nodes).to_have_count(2)
    await expect(nodes.nth(0)).to_contain_text("5000")
    await expect(nodes.nth(0)).to_have_attribute("data-status", "superseded")
    await expect(nodes.nth(1)).to_contain_text("8000")
    await expect(nodes.nth(1)).to_have_attribute("data-status", "active")
    await expect(nodes.nth(1)).to_have_attribute("data-head", "true")
    await expect(nodes.nth(1)).to_contain_text("active head")
    actions = console.page.get_by_test_id("history-action")
    await expect(actions.filter(has_text="superseded")).to_contain_text("resolver")
    await expect(console.page.get_by_test_id("source-turn")).to_contain_text("My budget is 5000.")
    why = console.page.get_by_test_id("memory-why")
    await expect(why).to_contain_text("Said by Ana in chat-1, turn 1, on ")
    await expect(why).to_contain_text("'My budget is 5000.'; replaced by 8000 on ")
    await console.shot("memory")
    # The chain reads the same from its head.
    await nodes.nth(1).get_by_role("link").click()
    await expect(console.page.get_by_test_id("memory-content")).to_have_text(seeded.new["content"])
    await expect(nodes).to_have_count(2)


async def test_the_timeline_replays_writes_and_reads(console: Console, seeded: Seeded) -> None:
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}/timeline")
    items = console.page.get_by_test_id("timeline-item")
    await expect(items.filter(has_text="My budget is 5000.")).to_have_count(1)
    await expect(items.and_(console.page.locator("[data-kind=event]"))).to_have_count(3)
    superseded = items.filter(has=console.page.locator("strong", has_text=re.compile("^superseded$")))
    await expect(superseded).to_contain_text(seeded.old["content"])
    query = items.filter(has_text=SEED_QUERY)
    await expect(query).to_have_count(1)
    ids = query.get_by_test_id("query-result-id")
    await expect(ids).to_have_count(len(seeded.query["memories"]))
    await expect(console.page.locator("figure.chart rect.kind-event")).not_to_have_count(0)
    # The instant the 5000 unit was activated: then the budget was 5000, not 8000.
    activated = items.filter(has_text="activated").filter(has_text=seeded.old["content"])
    await activated.get_by_role("button", name="as of").click()
    as_of = console.page.get_by_test_id("as-of-memory")
    await expect(as_of.filter(has_text=seeded.old["content"])).to_have_count(1)
    await expect(as_of.filter(has_text="8000")).to_have_count(0)
    await console.shot("timeline")
    # Filters by kind; a returned id clicks through to its unit.
    await console.page.get_by_label("event").uncheck()
    await console.page.get_by_label("job").uncheck()
    await console.page.get_by_role("button", name="Apply").click()
    await expect(items.and_(console.page.locator("[data-kind=event]"))).to_have_count(0)
    await expect(items.filter(has_text=SEED_QUERY)).to_have_count(1)
    await items.filter(has_text=SEED_QUERY).get_by_test_id("query-result-id").first.click()
    top = seeded.query["memories"][0]
    await expect(console.page.get_by_test_id("memory-content")).to_have_text(top["content"])


async def test_the_recall_tester_shows_channels_and_the_context_block(
    console: Console, seeded: Seeded, api: httpx.AsyncClient
) -> None:
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}/recall")
    await console.page.get_by_test_id("recall-input").fill(SEED_QUERY)
    await console.page.get_by_test_id("recall-submit").click()
    results = console.page.get_by_test_id("recall-result")
    await expect(results.first).to_contain_text("8000")
    await expect(results.first.get_by_test_id("channel-score").first).to_be_visible()
    await expect(results.first.locator("[data-channel=semantic]")).to_contain_text(re.compile(r"#\d+ · "))
    # No unit says 5000 (the why of the 8000 one names what it replaced).
    await expect(results.get_by_role("link", name=re.compile("5000"))).to_have_count(0)
    # Why each unit is remembered, and what the rerank stage did (no reranker here).
    await expect(results.first.get_by_test_id("memory-why")).to_contain_text("Said by Ana in chat-1, turn 3")
    await expect(results.first.get_by_test_id("memory-why")).to_contain_text("replaces 5000 said on")
    await expect(console.page.get_by_test_id("rerank-status")).to_have_text("skipped (not configured)")
    # The block exactly as an agent receives it for the same request.
    agent = await api.post(f"/v1/banks/{seeded.bank}/query", json={"query": SEED_QUERY, "explain": True})
    block = console.page.get_by_test_id("context-block")
    await expect(block).to_have_text(agent.json()["context"])
    assert (await block.inner_text()).startswith("## constraint.budget")
    await console.shot("recall")
    # With the why in the block, as the agent would get it with `context_why`.
    await console.page.get_by_label("Why in the context block").check()
    await console.page.get_by_test_id("recall-submit").click()
    agent = await api.post(
        f"/v1/banks/{seeded.bank}/query", json={"query": SEED_QUERY, "explain": True, "context_why": True}
    )
    assert "\n  why: Said by Ana in chat-1, turn 3" in agent.json()["context"]
    await expect(block).to_have_text(agent.json()["context"])
    await console.page.get_by_label("Why in the context block").uncheck()
    # A query naming a time shows the filter it was parsed into.
    await console.page.get_by_test_id("recall-input").fill("what did I say about my budget yesterday?")
    await console.page.get_by_test_id("recall-submit").click()
    await expect(console.page.get_by_test_id("time-filter")).to_contain_text("yesterday")


async def test_a_session_aligns_turns_with_their_units_and_distils_now(
    console: Console, api: httpx.AsyncClient
) -> None:
    bank = await fresh_bank(api)
    await say(api, bank, "I live in Hangzhou.", session="chat-2")
    response = await api.post(
        f"/v1/banks/{bank}/sessions/chat-2/events",
        json={"events": [{"role": "user", "content": "I am allergic to peanuts.", "speaker": "Ana"}]},
    )
    assert response.status_code == 202, response.text
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{bank}/sessions/chat-2")
    turns = console.page.get_by_test_id("session-turn")
    await expect(turns).to_have_count(2)
    first = console.page.locator("li.pair").nth(0)
    await expect(first.get_by_test_id("session-unit")).to_contain_text("Hangzhou")
    await expect(console.page.get_by_test_id("working-turn")).to_have_text(re.compile("peanuts"))
    await console.shot("session")
    await console.page.get_by_test_id("distill-now").click()
    second = console.page.locator("li.pair").nth(1)
    await expect(second.get_by_test_id("session-unit")).to_contain_text("peanuts", timeout=60_000)
    await expect(console.page.get_by_test_id("working-turn")).to_have_count(0)


async def test_an_entity_page_lists_its_units(console: Console, seeded: Seeded) -> None:
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}/entities")
    await console.page.get_by_label("Name contains").fill("ana")
    await console.page.get_by_role("button", name="Search").click()
    await console.page.get_by_role("link", name="Ana", exact=True).click()
    await expect(console.page.get_by_test_id("entity-memory").filter(has_text="8000")).to_have_count(1)
    await console.shot("entity")


async def test_a_bank_key_sees_only_its_bank(
    console: Console, seeded: Seeded, api: httpx.AsyncClient
) -> None:
    other = f"other-{seeded.bank}"
    assert (await api.post("/v1/banks", json={"bank_id": other})).status_code == 201
    _, key = await bank_key(api, seeded.bank, ["read", "write"])
    await console.sign_in(key)
    await expect(console.page.get_by_test_id("principal")).to_contain_text(seeded.bank)
    rows = console.page.get_by_test_id("bank-row")
    await expect(rows).to_have_count(1)
    await expect(rows).to_contain_text(seeded.bank)
    await console.open(f"/ui/banks/{other}/memories")
    await expect(console.page.get_by_test_id("problem")).to_contain_text("Not Found (404)")
    await expect(console.page.get_by_test_id("memory-row")).to_have_count(0)


async def test_a_read_key_has_no_forget_and_a_forced_one_gets_403(
    console: Console, seeded: Seeded, api: httpx.AsyncClient
) -> None:
    _, key = await bank_key(api, seeded.bank, ["read"])
    await console.sign_in(key, f"/ui/banks/{seeded.bank}/memories/{seeded.new['id']}")
    await expect(console.page.get_by_test_id("memory-content")).to_have_text(seeded.new["content"])
    await expect(console.page.get_by_text("This key can read only.")).to_be_visible()
    await expect(console.page.get_by_test_id("forget")).to_have_count(0)
    # Force it: tell the page this key may write; the server still refuses, and the page says so.
    await console.page.evaluate(
        """() => {
            const s = JSON.parse(sessionStorage.getItem("hindsight.console"));
            s.principal.scopes = ["read", "write"];
            sessionStorage.setItem("hindsight.console", JSON.stringify(s));
        }"""
    )
    await console.page.reload()
    await console.page.get_by_test_id("forget").click()
    await console.confirm()
    await expect(console.page.get_by_test_id("problem")).to_contain_text("Forbidden (403)")
    unit = (await api.get(f"/v1/banks/{seeded.bank}/memories/{seeded.new['id']}")).json()
    assert unit["status"] == "active"


async def test_forget_restore_and_edit_ask_first(console: Console, api: httpx.AsyncClient) -> None:
    bank = await fresh_bank(api)
    unit = await write(api, bank, "Ana's favourite colour is teal.", ["preference"])
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{bank}/memories/{unit['id']}")
    await console.page.get_by_test_id("forget").click()
    await console.page.get_by_role("button", name="Cancel").click()
    assert (await api.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"] == "active"
    await console.page.get_by_test_id("forget").click()
    await console.confirm()
    await expect(console.page.get_by_test_id("restore")).to_be_visible()
    assert (await api.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"] == "deleted"
    await console.page.get_by_test_id("restore").click()
    await console.confirm()
    await expect(console.page.get_by_test_id("forget")).to_be_visible()
    assert (await api.get(f"/v1/banks/{bank}/memories/{unit['id']}")).json()["status"] == "active"
    # Edit: a new unit that supersedes this one.
    await console.page.get_by_test_id("edit").click()
    await console.page.get_by_label("Content").fill("Ana's favourite colour is green.")
    await console.page.get_by_test_id("edit-save").click()
    await console.confirm()
    content = console.page.get_by_test_id("memory-content")
    await expect(content).to_have_text("Ana's favourite colour is green.")
    nodes = console.page.get_by_test_id("lineage-node")
    await expect(nodes).to_have_count(2)
    await expect(nodes.nth(0)).to_contain_text("teal")


async def test_a_revoked_key_is_sent_back_to_sign_in(
    console: Console, seeded: Seeded, api: httpx.AsyncClient
) -> None:
    key_id, key = await bank_key(api, seeded.bank, ["read"])
    await console.sign_in(key, f"/ui/banks/{seeded.bank}")
    await expect(console.page.get_by_test_id("session-row")).to_have_count(1)  # the overview has loaded
    # and so has its usage panel, the last request it makes: one still in flight at the revocation would
    # sign out on this page, and the reason would be gone with it when the next page loads
    await expect(console.page.get_by_test_id("usage-budget")).to_be_visible()
    assert (await api.delete(f"/v1/banks/{seeded.bank}/keys/{key_id}")).status_code == 204
    # the next page the console loads asks again
    await console.open(f"/ui/banks/{seeded.bank}/memories")
    await expect(console.page.get_by_test_id("login-key")).to_be_visible()
    await expect(console.page.get_by_test_id("problem")).to_contain_text("expired or revoked")
    assert await console.page.evaluate("sessionStorage.length") == 0
    # A wrong key is a message, not a sign-in.
    await console.page.get_by_test_id("login-key").fill("hs_not-a-key")
    await console.page.get_by_test_id("login-submit").click()
    await expect(console.page.get_by_test_id("problem")).to_contain_text("Unauthorized (401)")


async def test_keyboard_only_sign_in_with_visible_focus(console: Console, seeded: Seeded) -> None:
    await console.open("/ui")
    await expect(console.page.get_by_test_id("login-key")).to_be_focused()
    await console.page.keyboard.type(ADMIN_KEY)
    await console.page.keyboard.press("Enter")
    await expect(console.page.get_by_test_id("bank-row").first).to_be_visible()
    await console.page.keyboard.press("Tab")
    await console.page.keyboard.press("Tab")
    focused = console.page.locator(":focus")
    await expect(focused).to_have_text("Hindsight")
    assert await focused.evaluate("el => getComputedStyle(el).outlineStyle") == "solid"


async def test_phone_width_has_no_sideways_scroll(console: Console, seeded: Seeded) -> None:
    await console.page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{seeded.bank}")
    views = {  # a view, and what shows it has loaded
        f"memories/{seeded.old['id']}": "lineage-node",
        "memories": "memory-row",
        "timeline": "timeline-item",
        "recall": "recall-input",
        "sessions/chat-1": "session-turn",
    }
    for path, loaded in views.items():
        await console.open(f"/ui/banks/{seeded.bank}/{path}")
        await expect(console.page.get_by_test_id(loaded).first).to_be_visible()
        overflow = await console.page.evaluate("document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, (path, overflow)
    await console.shot("phone-session")


async def test_a_session_shows_invisible_characters_as_escapes_and_its_quarantined_turns(
    console: Console, api: httpx.AsyncClient, sql: Any
) -> None:
    bank = await fresh_bank(api)
    await say(api, bank, "\u202e\u2066" * 3 + "I live in Porto.", session="chat-3")
    # A turn the distiller failed on, as a distillation records it (tests/integration/test_poison.py).
    reason = "RuntimeError: the rules met a turn they cannot read"
    await sql(
        "UPDATE sessions SET quarantined = CAST(:q AS jsonb) WHERE bank_id = :bank AND session_id = 'chat-3'",
        q=json.dumps([{"seq": 1, "reason": reason}]),
        bank=bank,
    )
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{bank}/sessions/chat-3")
    turn = console.page.get_by_test_id("session-turn")
    await expect(turn).to_contain_text("⟨U+202E⟩⟨U+2066⟩⟨U+202E⟩")  # shown, never applied
    unit = console.page.get_by_test_id("session-unit")
    await expect(unit).to_contain_text("Porto")
    await expect(unit).not_to_contain_text("⟨U+")  # the unit was stored without them
    await expect(console.page.get_by_test_id("quarantined-turn")).to_have_text(f"turn #1: {reason}")
    await expect(console.page.get_by_test_id("turn-quarantined")).to_contain_text(reason)


async def test_the_overview_shows_the_banks_llm_usage_and_budget(
    console: Console, api: httpx.AsyncClient, sql: Any
) -> None:
    bank = await fresh_bank(api)
    await console.sign_in(ADMIN_KEY, f"/ui/banks/{bank}")
    panel = console.page.get_by_test_id("usage-panel")
    await expect(panel).to_contain_text("No LLM calls")
    await expect(console.page.get_by_test_id("usage-budget")).to_contain_text("no daily budget")
    response = await api.patch(f"/v1/banks/{bank}", json={"config": {"llm_daily_tokens": 1000}})
    assert response.status_code == 200, response.text
    for operation, prompt, completion in (("distill", 900, 80), ("judge", 40, 6)):
        await sql(
            "INSERT INTO llm_calls (bank_id, operation, model, prompt_tokens, completion_tokens, estimated,"
            " latency_ms, outcome) VALUES (:bank, :operation, 'm', :prompt, :completion, false, 120, 'ok')",
            bank=bank,
            operation=operation,
            prompt=prompt,
            completion=completion,
        )
    await console.page.reload()
    await expect(panel).to_contain_text("LLM calls2")
    await expect(panel).to_contain_text("Prompt tokens940")
    await expect(panel).to_contain_text("distill1 calls, 980 tokens")
    await expect(panel).to_contain_text("no price set")
    await expect(console.page.get_by_test_id("usage-budget")).to_contain_text(
        "Today: 1,026 tokens of 1,000; the bank budget is spent until"
    )
    await console.shot("usage")
