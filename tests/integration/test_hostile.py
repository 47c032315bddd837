"""Hostile input in every string field a client sends: SQL metacharacters, LIKE wildcards, NUL
bytes, lone surrogates, huge CJK and emoji text, deep nesting and oversize bodies. Each answer is a
2xx or a 4xx problem+json (never a 5xx); what is accepted reads back exactly as sent; and the
database still answers with every other bank's data intact."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.conftest import assert_problem
from tests.factories import ok

SQL = "'; DROP TABLE memory_units; --"
WILDCARDS = "100% of _all_ \\ back\\slash"
NUL = "before\x00after"
SURROGATE = "lone \ud800 surrogate"  # sent as the JSON escape "\ud800": valid JSON, not valid Unicode
CJK = "记忆" * 50_000  # 100 000 characters
EMOJI = "🧠" * 100_000
HOSTILE = {
    "sql": SQL,
    "wildcards": WILDCARDS,
    "nul": NUL,
    "surrogate": SURROGATE,
    "cjk-100k": CJK,
    "emoji-100k": EMOJI,
}
REFUSED = {"nul", "surrogate"}  # never storable: 422 wherever they are sent
MAX_BODY = 2 * 1024 * 1024


def body(value: Any) -> bytes:
    """JSON with every non-ASCII character escaped, so lone surrogates travel as `\\ud800`."""
    return json.dumps(value, ensure_ascii=True).encode()


async def send(client: httpx.AsyncClient, method: str, url: str, payload: Any = None) -> httpx.Response:
    if payload is None:
        return await client.request(method, url)
    return await client.request(
        method, url, content=body(payload), headers={"content-type": "application/json"}
    )


def assert_handled(response: httpx.Response) -> None:
    """A success, or a client error as problem+json; never a server error."""
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        assert_problem(response, response.status_code)


@dataclass
class Field:
    """One string field of a request: how to send a value in it, and how to read a stored one back."""

    send: Callable[[httpx.AsyncClient, str, str], Any]
    read_back: Callable[[httpx.AsyncClient, str, httpx.Response], Any] | None
    # The documented limit: longer is refused; None = only the body limit; 0 = no free text
    # (an id, a tag, an enum, a cursor): every hostile value is refused.
    max_chars: int | None
    # Sent in the URL: a lone surrogate travels as its UTF-8 bytes, which the server reads as U+FFFD.
    in_url: bool = False


def event(**fields: Any) -> dict[str, Any]:
    return {"events": [{"role": "user", "content": "hello", **fields}]}


async def _last_event(client: httpx.AsyncClient, bank: str, _: httpx.Response) -> dict[str, Any]:
    page = (await client.get(f"/v1/banks/{bank}/sessions/s/events")).json()
    last: dict[str, Any] = page["events"][-1]
    return last


async def _memory(client: httpx.AsyncClient, bank: str, response: httpx.Response) -> dict[str, Any]:
    memory_id = response.json()["memory"]["id"] if "memory" in response.json() else response.json()["id"]
    got: dict[str, Any] = (await client.get(f"/v1/banks/{bank}/memories/{memory_id}")).json()
    return got


async def _bank(client: httpx.AsyncClient, bank: str, response: httpx.Response) -> dict[str, Any]:
    got: dict[str, Any] = (await client.get(f"/v1/banks/{response.json()['bank_id']}")).json()
    return got


def memory(content: str = "The user's budget is 5000.", **fields: Any) -> dict[str, Any]:
    return {"content": content, "tags": ["constraint.budget"], **fields}


async def _active_memory(client: httpx.AsyncClient, bank: str) -> str:
    written = await client.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=memory())
    assert written.status_code == 201, written.text
    return str(written.json()["memory"]["id"])


_active: dict[str, str] = {}  # bank → an active unit to patch; a successful patch supersedes it


async def _patch(client: httpx.AsyncClient, bank: str, value: str) -> httpx.Response:
    if bank not in _active:
        _active[bank] = await _active_memory(client, bank)
    response = await send(client, "PATCH", f"/v1/banks/{bank}/memories/{_active[bank]}", {"content": value})
    if response.is_success:
        del _active[bank]
    return response


def post(path: str, make: Callable[[str], Any]) -> Callable[[httpx.AsyncClient, str, str], Any]:
    return lambda c, bank, v: send(c, "POST", path.format(bank=bank), make(v))


def in_url(value: str) -> str:
    # 5 000 characters: a URL of 100 000 would not pass any HTTP server's request-line limit.
    return quote(value[:5000], safe="", errors="surrogatepass")


def get(path: str, param: str) -> Callable[[httpx.AsyncClient, str, str], Any]:
    return lambda c, bank, v: c.get(f"{path.format(bank=bank)}?{param}={in_url(v)}")


EVENTS = "/v1/banks/{bank}/sessions/s/events"
MEMORIES = "/v1/banks/{bank}/memories"
QUERY = "/v1/banks/{bank}/query"
FIELDS: dict[str, Field] = {
    "event.content": Field(
        post(EVENTS, lambda v: event(content=v)),
        lambda c, b, r: _pick(_last_event(c, b, r), "content"),
        32_000,
    ),
    "event.speaker": Field(
        post(EVENTS, lambda v: event(speaker=v)), lambda c, b, r: _pick(_last_event(c, b, r), "speaker"), 256
    ),
    "event.external_id": Field(
        post(EVENTS, lambda v: event(external_id=v)),
        lambda c, b, r: _pick(_last_event(c, b, r), "external_id"),
        256,
    ),
    "event.metadata.value": Field(
        post(EVENTS, lambda v: event(metadata={"note": v})),
        lambda c, b, r: _pick(_last_event(c, b, r), "metadata", "note"),
        None,
    ),
    "event.metadata.key": Field(
        post(EVENTS, lambda v: event(metadata={v: 1})),
        lambda c, b, r: _pick(_last_event(c, b, r), "metadata", lambda m: next(iter(m))),
        None,
    ),
    "event.role": Field(post(EVENTS, lambda v: event(role=v)), None, 0),
    "session_id (path)": Field(
        lambda c, bank, v: send(c, "POST", f"/v1/banks/{bank}/sessions/{in_url(v)}/events", event()),
        None,
        0,
        in_url=True,
    ),
    "bank_id (path)": Field(lambda c, bank, v: c.get(f"/v1/banks/{in_url(v)}"), None, 0, in_url=True),
    "memory.content": Field(
        post(MEMORIES, lambda v: memory(v)), lambda c, b, r: _pick(_memory(c, b, r), "content"), 4000
    ),
    "memory.entity": Field(
        post(MEMORIES, lambda v: memory(entities=[{"name": v, "type": "person"}])),
        lambda c, b, r: _pick(_memory(c, b, r), "entities", lambda e: e[0]["name"]),
        256,
    ),
    "memory.metadata": Field(
        post(MEMORIES, lambda v: memory(metadata={v: 1})),
        lambda c, b, r: _pick(_memory(c, b, r), "metadata", lambda m: next(iter(m))),
        None,
    ),
    "memory.tags": Field(post(MEMORIES, lambda v: memory(tags=[v])), None, 0),
    "memory.session_id": Field(post(MEMORIES, lambda v: memory(session_id=v)), None, 0),
    "memory patch.content": Field(_patch, lambda c, b, r: _pick(_memory(c, b, r), "content"), 4000),
    "memories ?tag=": Field(get(MEMORIES, "tag"), None, 256, in_url=True),
    "memories ?entity=": Field(get(MEMORIES, "entity"), None, 256, in_url=True),
    "memories ?cursor=": Field(get(MEMORIES, "cursor"), None, 0, in_url=True),
    "entities ?q=": Field(get("/v1/banks/{bank}/entities", "q"), None, 256, in_url=True),
    "timeline ?kinds=": Field(get("/v1/banks/{bank}/timeline", "kinds"), None, 0, in_url=True),
    "query.query": Field(post(QUERY, lambda v: {"query": v}), None, 2000),
    "query.tags": Field(post(QUERY, lambda v: {"query": "budget", "tags": [v]}), None, 0),
    "query.entities": Field(post(QUERY, lambda v: {"query": "budget", "entities": [v]}), None, 256),
    "query.time_range": Field(post(QUERY, lambda v: {"query": "budget", "time_range": {"from": v}}), None, 0),
    "query.timezone": Field(post(QUERY, lambda v: {"query": "budget", "timezone": v}), None, 0),
    "bank.name": Field(
        lambda c, bank, v: send(
            c, "POST", "/v1/banks", {"bank_id": f"{bank}-{uuid.uuid4().hex[:6]}", "name": v}
        ),
        lambda c, b, r: _pick(_bank(c, b, r), "name"),
        256,
    ),
    "bank.config.tags": Field(
        lambda c, bank, v: send(c, "PATCH", f"/v1/banks/{bank}", {"config": {"tags": [v]}}), None, 0
    ),
    "bank.config.ttl_days": Field(
        lambda c, bank, v: send(c, "PATCH", f"/v1/banks/{bank}", {"config": {"ttl_days": {v: 1}}}),
        lambda c, b, r: next(
            k for k in r.json()["config"]["ttl_days"] if k not in ("fact", "episode", "task_state")
        ),
        64,
    ),
    "bank.config.timezone": Field(
        lambda c, bank, v: send(c, "PATCH", f"/v1/banks/{bank}", {"config": {"timezone": v}}), None, 0
    ),
    "key.name": Field(
        lambda c, bank, v: send(c, "POST", f"/v1/banks/{bank}/keys", {"name": v}),
        lambda c, b, r: r.json()["name"],
        256,
    ),
}


async def _pick(found: Any, *path: Any) -> Any:
    value = await found
    for step in path:
        value = step(value) if callable(step) else value[step]
    return value


@pytest.fixture(scope="module")
async def canary(app: Any) -> dict[str, Any]:
    """A bank of its own with a turn and a unit, which no hostile request may disturb."""
    from tests.conftest import ADMIN_KEY, make_client

    bank = "canary-" + uuid.uuid4().hex[:8]
    async with make_client(app, ADMIN_KEY) as c:
        assert (await c.post("/v1/banks", json={"bank_id": bank})).status_code == 201
        appended = await c.post(f"/v1/banks/{bank}/sessions/s/events", json=event(content="Canary turn."))
        assert appended.status_code == 202, appended.text
        written = await c.post(f"/v1/banks/{bank}/memories", params={"wait": "true"}, json=memory())
        assert written.status_code == 201, written.text
    return {"bank": bank, "memory": written.json()["memory"]}


async def assert_intact(client: httpx.AsyncClient, sql: Any, canary: dict[str, Any]) -> None:
    bank = canary["bank"]
    for table in ("banks", "events", "memory_units", "memory_history", "entities"):
        assert (await sql("SELECT to_regclass(:t) IS NOT NULL AS ok", t=table))[0]["ok"], table
    events = (await client.get(f"/v1/banks/{bank}/sessions/s/events")).json()["events"]
    assert [e["content"] for e in events] == ["Canary turn."]
    unit = (await client.get(f"/v1/banks/{bank}/memories/{canary['memory']['id']}")).json()
    assert (unit["content"], unit["status"]) == (canary["memory"]["content"], "active")
    found = await client.post(f"/v1/banks/{bank}/query", json={"query": "budget"})
    assert found.status_code == 200, found.text
    assert [m["id"] for m in found.json()["memories"]] == [unit["id"]]


@pytest.mark.parametrize("name", list(FIELDS))
async def test_hostile_strings_in_every_field(
    client: httpx.AsyncClient, bank_id: str, sql: Any, canary: dict[str, Any], name: str
) -> None:
    field = FIELDS[name]
    problems = []
    for kind, value in HOSTILE.items():
        response = await field.send(client, bank_id, value)
        assert_handled(response)
        ok = 200 <= response.status_code < 300
        sent = value[:5000] if field.in_url else value
        refused = kind in REFUSED or (field.max_chars is not None and len(sent) > field.max_chars)
        if kind == "surrogate" and field.in_url and field.max_chars != 0:
            refused = not ok  # read as U+FFFD: a search for it is fine, so is a refusal
        if ok == refused:
            problems.append(
                f"{kind}: {'refusal' if refused else 'success'} expected, got {response.text[:300]}"
            )
        elif ok and field.read_back is not None:
            stored = field.read_back(client, bank_id, response)
            stored = await stored if inspect.isawaitable(stored) else stored
            if stored != value:
                problems.append(f"{kind}: stored {stored!r:.80} is not what was sent")
    assert not problems, "\n".join(problems)
    await assert_intact(client, sql, canary)


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize(
    ("method", "path", "template"),
    [
        ("POST", EVENTS, '{"events": [{"role": "user", "content": "hi", "metadata": %s}]}'),
        ("POST", MEMORIES, '{"content": "hi", "tags": ["fact"], "metadata": %s}'),
        ("PATCH", "/v1/banks/{bank}", '{"config": %s}'),
        ("POST", QUERY, '{"query": "hi", "weights": %s}'),
    ],
    ids=["event", "memory", "bank-config", "query"],
)
@pytest.mark.parametrize("depth", [9, 10_000])
async def test_deeply_nested_json_is_a_422(
    client: httpx.AsyncClient,
    bank_id: str,
    sql: Any,
    canary: dict[str, Any],
    method: str,
    path: str,
    template: str,
    depth: int,
) -> None:
    raw = (template % nested(depth)).encode()
    response = await client.request(
        method, path.format(bank=bank_id), content=raw, headers={"content-type": "application/json"}
    )
    assert_problem(response, 422)
    await assert_intact(client, sql, canary)


async def test_metadata_up_to_the_documented_depth_is_stored(client: httpx.AsyncClient, bank_id: str) -> None:
    deep = json.loads(nested(8))
    appended = await send(client, "POST", EVENTS.format(bank=bank_id), event(metadata=deep))
    assert appended.status_code == 202, appended.text
    assert (await _last_event(client, bank_id, appended))["metadata"] == deep


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", EVENTS),
        ("POST", MEMORIES),
        ("POST", QUERY),
        ("POST", "/v1/banks"),
        ("PATCH", "/v1/banks/{bank}"),
        ("POST", "/v1/banks/{bank}/keys"),
        ("POST", "/v1/banks/{bank}/redistill"),
        ("POST", "/v1/banks/{bank}/sessions/s/close"),
    ],
)
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_oversize_bodies_are_a_413(
    client: httpx.AsyncClient, bank_id: str, method: str, path: str, declared: bool
) -> None:
    payload = body(event(content="x" * (MAX_BODY + 1)))

    async def chunks() -> Any:
        for start in range(0, len(payload), 65536):
            yield payload[start : start + 65536]

    response = await client.request(
        method,
        path.format(bank=bank_id),
        content=payload if declared else chunks(),
        headers={"content-type": "application/json"},
    )
    assert_problem(response, 413)


async def test_a_bank_named_import_has_its_json_routes_bounded_and_typed(client: httpx.AsyncClient) -> None:
    """Only a bank's import route streams another format; a bank named "import" is not that route."""
    ok(await client.post("/v1/banks", json={"bank_id": "import"}), 201)
    try:
        huge = json.dumps({"name": "x" * (MAX_BODY + 1)}).encode()
        headers = {"content-type": "application/json"}
        assert_problem(await client.patch("/v1/banks/import", content=huge, headers=headers), 413)
        assert_problem(await client.patch("/v1/banks/import", content=b"name=x"), 415)
    finally:
        await client.delete("/v1/banks/import")


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("top_k", "1" + "0" * 40),
        ("top_k", "Infinity"),
        ("min_score", "NaN"),
        ("min_score", "Infinity"),
        ("max_tokens", "-" + "9" * 40),
        ("weights", '{"semantic": Infinity}'),
    ],
)
async def test_out_of_range_numbers_are_a_422(
    client: httpx.AsyncClient, bank_id: str, field: str, raw: str
) -> None:
    response = await client.post(
        QUERY.format(bank=bank_id),
        content=f'{{"query": "budget", "{field}": {raw}}}'.encode(),
        headers={"content-type": "application/json"},
    )
    assert_problem(response, 422)
    if raw in ("NaN", "Infinity"):
        patched = await client.patch(
            f"/v1/banks/{bank_id}",
            content=f'{{"config": {{"min_score": {raw}}}}}'.encode(),
            headers={"content-type": "application/json"},
        )
        assert_problem(patched, 422)
    after = await client.get(EVENTS.format(bank=bank_id), params={"after_seq": "9" * 40})
    assert after.status_code in (404, 422), after.text  # no session yet: 404; the number: 422
    assert_problem(after, after.status_code)


@pytest.mark.parametrize(
    ("at", "accepted"),
    [
        ("9999-12-31T23:59:59-14:00", False),
        ("0001-01-01T00:00:00+14:00", False),
        ("0001-01-01T00:00:00", False),  # Python's datetime.min: the driver would store -infinity
        ("99999-01-01", False),
        ("1000-01-01T00:00:00-14:00", True),
        ("8999-12-31T23:59:59+14:00", True),
    ],
)
async def test_timestamps_at_the_edge_of_the_calendar_never_poison_reads(
    client: httpx.AsyncClient, bank_id: str, at: str, accepted: bool
) -> None:
    appended = await client.post(EVENTS.format(bank=bank_id), json=event(occurred_at=at))
    written = await client.post(MEMORIES.format(bank=bank_id), json=memory(occurred_at=at))
    queried = await client.post(QUERY.format(bank=bank_id), json={"query": "budget", "as_of": at, "now": at})
    listed = await client.get(MEMORIES.format(bank=bank_id), params={"since": at, "until": at})
    timeline = await client.get(f"/v1/banks/{bank_id}/timeline", params={"from": at})
    for response in (appended, written, queried, listed, timeline):
        assert_handled(response)
        assert response.is_success == accepted or response.status_code == 422, response.text
    assert (appended.status_code, written.status_code) == ((202, 202) if accepted else (422, 422))
    # Whatever was accepted, every read of the bank still works.
    if accepted:
        turn = await _last_event(client, bank_id, appended)
        assert turn["occurred_at"] is not None
    for read in (MEMORIES, "/v1/banks/{bank}/timeline"):
        response = await client.get(read.format(bank=bank_id))
        assert response.status_code == 200, response.text
    found = await client.post(QUERY.format(bank=bank_id), json={"query": "budget", "statuses": ["pending"]})
    assert found.status_code == 200, found.text
