"""Hostile input at the edges of what the API accepts (issue 29): timestamps at the ends of the allowed
years (checked in UTC, so a backup of them restores), imports as capped as the writes they carry, a
search index that never overflows, a Chinese import that leaves the event loop free, and ids that
are only dots."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import assert_problem
from tests.factories import make_bank

NDJSON = {"Content-Type": "application/x-ndjson"}
# The years 1000–8999 read in the sender's offset: outside them once in UTC.
OUTSIDE_IN_UTC = ("1000-01-01T00:00:00+14:00", "8999-12-31T23:00:00-12:00")
# The ends of the range, in UTC and in an offset that is the same instant.
EXTREMES = ("1000-01-01T00:00:00Z", "1000-01-01T14:00:00+14:00", "8999-12-31T23:59:59Z")
NOW = "2026-01-01T00:00:00Z"


async def import_as(client: httpx.AsyncClient, bank: str, body: Any) -> httpx.Response:
    return await client.post(f"/v1/banks/{bank}/import", content=body, headers=NDJSON)


def ndjson(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def stream(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    """An import stream: a bank line, `lines`, and the end line that counts them."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line["type"]] = counts.get(line["type"], 0) + 1
    bank = {"type": "bank", "bank_id": "x", "created_at": NOW, "updated_at": NOW}
    return [bank, *lines, {"type": "end", "counts": counts}]


def memory_line(content: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": str(uuid.uuid4()),
        "content": content,
        "tags": ["fact"],
        "confidence": 0.9,
        "importance": 0.5,
        "status": "active",
        "layer": "semantic",
        "status_changed_at": NOW,
        "created_at": NOW,
        "updated_at": NOW,
    } | fields


async def bank_exists(sql: Any, bank: str) -> bool:
    return bool(await sql("SELECT 1 FROM banks WHERE id = :bank", bank=bank))


# --- timestamps: one range, checked in UTC ------------------------------------------------------------


@pytest.mark.parametrize("at", OUTSIDE_IN_UTC)
async def test_a_timestamp_outside_the_years_in_utc_is_refused_everywhere(
    client: httpx.AsyncClient, bank_id: str, at: str
) -> None:
    requests = [
        (
            "POST",
            f"/v1/banks/{bank_id}/sessions/s/events",
            {"events": [{"role": "user", "content": "hi", "occurred_at": at}]},
        ),
        (
            "POST",
            f"/v1/banks/{bank_id}/memories",
            {"content": "A fact.", "tags": ["fact"], "occurred_at": at},
        ),
        ("POST", f"/v1/banks/{bank_id}/query", {"query": "fact", "as_of": at}),
        ("POST", f"/v1/banks/{bank_id}/query", {"query": "fact", "now": at}),
        ("POST", f"/v1/banks/{bank_id}/query", {"query": "fact", "time_range": {"from": at}}),
    ]
    for method, url, payload in requests:
        body = assert_problem(await client.request(method, url, json=payload), 422)
        assert "UTC" in json.dumps(body), body
    listed = await client.get(f"/v1/banks/{bank_id}/memories", params={"as_of": at})
    assert_problem(listed, 422)
    # The same instant in an import line is refused as well: the one range, the one reading.
    event = {"type": "event", "session_id": "s", "seq": 1, "role": "user", "content": "hi"}
    session = {"type": "session", "session_id": "s", "status": "open", "last_seq": 1, "distilled_seq": 0}
    lines = stream(session | {"created_at": NOW}, event | {"occurred_at": at, "created_at": NOW})
    body = assert_problem(await import_as(client, f"{bank_id}-copy", ndjson(lines)), 422)
    assert body["errors"][0]["loc"] == ["line", 3, "occurred_at"], body


async def test_a_naive_timestamp_is_held_a_day_inside_the_years(
    client: httpx.AsyncClient, bank_id: str
) -> None:
    """Read in the bank's zone (any offset), a naive time a day inside the range lands in it."""
    url = f"/v1/banks/{bank_id}/sessions/s/events"
    for refused in ("1000-01-01T12:00:00", "8999-12-31T12:00:00"):
        payload = {"events": [{"role": "user", "content": "hi", "occurred_at": refused}]}
        assert_problem(await client.post(url, json=payload), 422)
    payload = {"events": [{"role": "user", "content": "hi", "occurred_at": "1000-01-02T00:00:00"}]}
    assert (await client.post(url, json=payload)).status_code == 202


async def test_the_extreme_accepted_timestamps_survive_export_and_import(
    client: httpx.AsyncClient, sql: Any
) -> None:
    bank = await make_bank(client, timezone="Pacific/Kiritimati")  # +14:00, the furthest offset
    turns = [{"role": "user", "content": f"turn {i}", "occurred_at": at} for i, at in enumerate(EXTREMES)]
    turns.append({"role": "user", "content": "naive", "occurred_at": "1000-01-02T00:00:00"})
    appended = await client.post(f"/v1/banks/{bank}/sessions/s/events", json={"events": turns})
    assert appended.status_code == 202, appended.text
    for at in EXTREMES:
        written = await client.post(
            f"/v1/banks/{bank}/memories",
            json={"content": f"Said at {at}.", "tags": ["fact"], "occurred_at": at},
        )
        assert written.status_code in (201, 202), written.text
    exported = await client.get(f"/v1/banks/{bank}/export")
    assert exported.status_code == 200, exported.text
    copy = f"{bank}-copy"
    imported = await import_as(client, copy, exported.text)
    assert imported.status_code == 201, imported.text
    rows = await sql(
        "SELECT a.occurred_at = b.occurred_at AS same FROM events a JOIN events b USING (session_id, seq) "
        "WHERE a.bank_id = :bank AND b.bank_id = :copy",
        bank=bank,
        copy=copy,
    )
    assert [r["same"] for r in rows] == [True] * len(turns)


async def test_a_unit_valid_from_centuries_back_is_restored(client: httpx.AsyncClient) -> None:
    """A unit's valid time is derived from what was said ("founded 1500 years ago"): it may precede the
    years a client may send, and an import takes it back."""
    line = memory_line("The city was founded.", valid_from="0526-06-01T00:00:00Z")
    imported = await import_as(client, f"bank-{uuid.uuid4().hex[:12]}", ndjson(stream(line)))
    assert imported.status_code == 201, imported.text


# --- imports capped like the writes they carry ---------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "field"),
    [
        # ~160 000 distinct words: beyond a unit's length, and once too long for PostgreSQL's tsvector.
        (memory_line(" ".join(f"w{i:x}q" for i in range(160_000))), "content"),
        (memory_line("A fact.", tags=["fact"] * 17), "tags"),
        (memory_line("A fact.", tags=["t" * 257]), "tags.0"),
        (memory_line("A fact.", identity_key="k" * 3000), "identity_key"),
        (
            {
                "type": "entity",
                "id": str(uuid.uuid4()),
                "name": "N" * 5000,
                "canonical_name": "n",
                "entity_type": "person",
                "created_at": NOW,
                "updated_at": NOW,
            },
            "name",
        ),
    ],
    ids=["160k-words", "17-tags", "long-tag", "long-identity-key", "long-entity-name"],
)
async def test_an_import_line_over_a_write_limit_is_refused_by_line_and_field(
    client: httpx.AsyncClient, sql: Any, line: dict[str, Any], field: str
) -> None:
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    body = assert_problem(await import_as(client, bank, ndjson(stream(line))), 422)
    assert body["detail"].startswith(f"Line 2, field {field}:"), body["detail"]
    assert not await bank_exists(sql, bank)


async def test_an_imported_event_is_capped_like_an_appended_one(client: httpx.AsyncClient, sql: Any) -> None:
    session = {"type": "session", "session_id": "s", "status": "open", "last_seq": 1, "distilled_seq": 0}
    event = {
        "type": "event",
        "session_id": "s",
        "seq": 1,
        "role": "user",
        "occurred_at": NOW,
        "created_at": NOW,
    }
    lines = stream(session | {"created_at": NOW}, event | {"content": "x" * 160_001})
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    body = assert_problem(await import_as(client, bank, ndjson(lines)), 422)
    assert body["detail"].startswith("Line 3, field content:"), body["detail"]
    assert not await bank_exists(sql, bank)


async def test_the_search_text_of_any_text_fits_a_tsvector(sql: Any) -> None:
    """Whatever reaches it, the indexed text never makes PostgreSQL refuse the tsvector."""
    from app.text import search_text

    distinct = " ".join(f"w{i:x}-v{i:x}q" for i in range(200_000))  # hyphenated: each word three lexemes
    chinese = "".join(chr(0x4E00 + (i * 7919) % 20_000) for i in range(60_000))
    upper = " ".join(f"İ{i:x}Ⱥ" for i in range(200_000))  # lower-cased, these letters take more bytes
    for text in (distinct, chinese, upper):
        rows = await sql("SELECT length(to_tsvector('english', :t)) AS n", t=search_text(text))
        assert rows[0]["n"] > 0


# --- segmentation off the event loop -------------------------------------------------------------------


class JiebaWatch(threading.Thread):
    """Samples every thread's stack while an import runs: which threads ran jieba, and whether a
    /healthz request was answered on the event loop while jieba was running on another thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient) -> None:
        super().__init__(daemon=True)
        self.loop, self.client = loop, client
        self.loop_thread = threading.get_ident()
        self.jieba_threads: set[int] = set()
        self.answered_during_segmentation = 0
        self.stop = threading.Event()

    def segmenting(self) -> set[int]:
        found = set()
        for ident, frame in sys._current_frames().items():
            current: Any = frame
            while current is not None:
                if "jieba" in current.f_code.co_filename:
                    found.add(ident)
                    break
                current = current.f_back
        self.jieba_threads |= found
        return found

    def run(self) -> None:
        while not self.stop.is_set():
            if self.segmenting() - {self.loop_thread}:
                asked = asyncio.run_coroutine_threadsafe(self.client.get("/healthz"), self.loop)
                status = asked.result(timeout=120).status_code
                if status == 200 and self.segmenting() - {self.loop_thread}:
                    self.answered_during_segmentation += 1
            self.stop.wait(0.001)


async def test_a_chinese_import_leaves_the_event_loop_free(client: httpx.AsyncClient) -> None:
    """jieba runs on a thread: during a large Chinese import, health checks are answered while the
    segmentation is still running, and no jieba code ever runs on the event loop's thread."""
    sentence = "我住在里斯本，在一家医院当护士。明天我们去北京看望朋友，然后回上海开会讨论预算。"
    units = [memory_line(f"{i}：" + sentence * 60) for i in range(300)]  # ~2 400 characters each
    body = ndjson(stream(*units)).encode()

    async def chunks() -> AsyncIterator[bytes]:
        yield body  # one chunk: nothing between the lines gives the loop back

    watch = JiebaWatch(asyncio.get_running_loop(), client)
    watch.start()
    try:
        imported = await import_as(client, f"bank-{uuid.uuid4().hex[:12]}", chunks())
    finally:
        watch.stop.set()
        await asyncio.to_thread(watch.join)
    assert imported.status_code == 201, imported.text
    assert watch.jieba_threads, "the import segmented nothing"
    assert watch.loop_thread not in watch.jieba_threads
    assert watch.answered_during_segmentation >= 1


# --- ids made of dots -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dots", [".", "..", "..."])
async def test_an_id_of_only_dots_is_refused(
    client: httpx.AsyncClient, bank_id: str, dots: str, sql: Any
) -> None:
    assert_problem(await client.post("/v1/banks", json={"bank_id": dots}), 422)
    escaped = dots.replace(".", "%2E")  # as sent, httpx (and browsers) would remove the segment
    for method, url, payload in [
        (
            "POST",
            f"/v1/banks/{bank_id}/sessions/{escaped}/events",
            {"events": [{"role": "user", "content": "hi"}]},
        ),
        ("POST", f"/v1/banks/{escaped}/keys", {"scopes": ["read"]}),
        ("POST", f"/v1/banks/{escaped}/import", None),
        (
            "POST",
            f"/v1/banks/{bank_id}/memories",
            {"content": "A fact.", "tags": ["fact"], "session_id": dots},
        ),
    ]:
        response = await client.request(method, url, json=payload)
        assert_problem(response, 422)
    session = {"type": "session", "session_id": dots, "status": "open", "last_seq": 0, "distilled_seq": 0}
    body = assert_problem(
        await import_as(client, f"{bank_id}-copy", ndjson(stream(session | {"created_at": NOW}))), 422
    )
    assert body["errors"][0]["loc"] == ["line", 2, "session_id"], body
    assert not await sql("SELECT 1 FROM sessions WHERE session_id = :s", s=dots)
    assert (
        await client.post("/v1/banks", json={"bank_id": f"a.{uuid.uuid4().hex[:8]}.b"})
    ).status_code == 201


# --- invisible characters: cleaned on import as on every write ----------------------------------------


async def test_an_import_cleans_invisible_characters_and_refuses_a_line_of_nothing_else(
    client: httpx.AsyncClient, sql: Any
) -> None:
    hidden = "\u202e\u2066" * 50
    entity = {
        "type": "entity",
        "id": str(uuid.uuid4()),
        "name": hidden + "Acme",
        "canonical_name": "acme",
        "entity_type": "organisation",
        "created_at": NOW,
        "updated_at": NOW,
    }
    bank = f"bank-{uuid.uuid4().hex[:12]}"
    response = await import_as(
        client, bank, ndjson(stream(memory_line(hidden + "The user likes tea."), entity))
    )
    assert response.status_code == 201, response.text
    rows = await sql("SELECT content, search_text FROM memory_units WHERE bank_id = :bank", bank=bank)
    assert [r.content for r in rows] == ["The user likes tea."]
    assert "\u202e" not in rows[0].search_text
    names = await sql("SELECT name FROM entities WHERE bank_id = :bank", bank=bank)
    assert [r.name for r in names] == ["Acme"]

    other = f"bank-{uuid.uuid4().hex[:12]}"
    body = assert_problem(await import_as(client, other, ndjson(stream(memory_line(hidden)))), 422)
    assert body["detail"].startswith("Line 2, field content:"), body["detail"]
    assert not await bank_exists(sql, other)
