"""Bank export and import on the real stack: the round trip (export, import under a new id, export
again: the same lines modulo ids; the same answers once the reembed job has run), imports that fail
and leave nothing behind, access, the snapshot, the body limits, and the CLI verbs over HTTP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_KEY, ROOT, Stack, assert_problem, make_client
from tests.factories import (
    canonical_export,
    finished_job,
    make_bank,
    portable_bank,
    say,
    write,
)

pytestmark = pytest.mark.usefixtures("worker")

NDJSON = {"Content-Type": "application/x-ndjson"}
TABLES = (
    "sessions",
    "events",
    "memory_units",
    "entities",
    "memory_entities",
    "relations",
    "memory_history",
    "jobs",
)


@pytest.fixture(scope="module")
async def source(app: Any, worker: Any) -> AsyncIterator[tuple[str, str]]:
    """The module's exported bank: (bank_id, its export)."""
    async with make_client(app, ADMIN_KEY) as client:
        bank = await portable_bank(client)
        response = await client.get(f"/v1/banks/{bank}/export")
        assert response.status_code == 200, response.text
        yield bank, response.text


async def import_as(client: httpx.AsyncClient, bank: str, body: str | bytes) -> httpx.Response:
    return await client.post(f"/v1/banks/{bank}/import", content=body, headers=NDJSON)


async def nothing_of(sql: Any, bank: str) -> bool:
    counts = [
        (await sql(f"SELECT count(*) AS n FROM {table} WHERE bank_id = :bank", bank=bank))[0]["n"]
        for table in TABLES
    ]
    banks = (await sql("SELECT count(*) AS n FROM banks WHERE id = :bank", bank=bank))[0]["n"]
    return banks == 0 and counts == [0] * len(TABLES)


def lines_of(ndjson: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ndjson.splitlines()]


async def test_round_trip_keeps_every_line_and_answer(
    client: httpx.AsyncClient, source: tuple[str, str], sql: Any
) -> None:
    bank, exported = source
    lines = lines_of(exported)
    types = [line["type"] for line in lines]
    assert types[0] == "bank"
    assert types[-1] == "end"
    order = ["bank", "session", "event", "memory", "entity", "link", "relation", "history", "end"]
    assert types == sorted(types, key=order.index)  # dependency order
    assert set(types) == set(order)
    assert not any("embedding" in key for line in lines for key in line)  # no vectors
    units = [line for line in lines if line["type"] == "memory"]
    statuses = sorted(u["status"] for u in units)
    assert statuses.count("superseded") == 2
    assert "merged" in statuses
    assert statuses.count("deleted") == 2
    assert [u["content"] for u in units if u["metadata"].get("purged_at")] == [""]  # the tombstone
    # purged content is gone from every line, history and claims included (a timestamp or an id may hold
    # the digits, never as a value of its own)
    assert not re.search(r"(?<![0-9A-Za-z.:-])9921(?![0-9A-Za-z])", exported)
    assert {s["session_id"] for s in lines if s["type"] == "session"} == {"trip", "home"}
    merged_into = next(u for u in units if u["status"] == "merged")["merged_into"]
    survivor = next(u for u in units if u["id"] == merged_into)
    assert {session for session, _ in survivor["source_events"]} == {"trip", "home"}

    copy = f"copy-{uuid.uuid4().hex[:8]}"
    imported = await import_as(client, copy, exported)
    assert imported.status_code == 201, imported.text
    result = imported.json()
    assert result["bank_id"] == copy
    assert result["counts"] == lines[-1]["counts"]
    job = await finished_job(client, result["job_id"])
    assert (job["kind"], job["status"]) == ("maintenance.reembed", "succeeded"), job
    vectors = await sql("SELECT count(*) AS n FROM memory_embeddings WHERE bank_id = :bank", bank=copy)
    assert vectors[0]["n"] == sum(1 for u in units if u["content"])

    again = await client.get(f"/v1/banks/{copy}/export")
    assert again.status_code == 200
    assert canonical_export(again.text) == canonical_export(exported)
    new_units = [line for line in lines_of(again.text) if line["type"] == "memory"]
    assert not {u["id"] for u in new_units} & {u["id"] for u in units}  # new ids

    # the lineage points at the new rows: the chain's head and its history both ways
    head = next(u for u in new_units if u["content"] == "Ana's favourite colour is red.")
    history = (await client.get(f"/v1/banks/{copy}/memories/{head['id']}/history")).json()
    assert [u["content"] for u in history["chain"]] == [
        f"Ana's favourite colour is {c}." for c in ("green", "blue", "red")
    ]
    # the words keyword search finds each unit by, those it inherited along its chain included
    searched = "SELECT content, status, search_text FROM memory_units WHERE bank_id = :bank ORDER BY 1, 2, 3"
    assert await sql(searched, bank=copy) == await sql(searched, bank=bank)
    for question in ("What is the budget?", "Where does the user live?", "What colour does Ana like?"):
        answers = []
        for target in (bank, copy):
            found = await client.post(f"/v1/banks/{target}/query", json={"query": question, "top_k": 5})
            assert found.status_code == 200, found.text
            answers.append(_ranked(found.json()["memories"]))
        assert answers[0] == answers[1], question
        assert answers[0]


# The copy's vectors are embedded again, in batches of other texts, and the int8 model quantises a batch's
# activations together: a score moves in the second decimal, so near-ties may swap.
NEAR_TIE = 0.02


def _ranked(memories: list[dict[str, Any]]) -> list[set[str]]:
    """The answers' contents in rank order, those scored within NEAR_TIE of the one before as one group."""
    groups: list[set[str]] = []
    last = None
    for memory in memories:
        if last is None or last - memory["score"] > NEAR_TIE:
            groups.append(set())
        groups[-1].add(memory["content"])
        last = memory["score"]
    return groups


def _cut_mid_line(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:5]) + lines[5][: len(lines[5]) // 2], 6


def _cut_at_a_line(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:-3]), len(lines) - 2


def _bad_json(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    lines[3] = '{"type": "event", "session_id": \n'
    return "".join(lines), 4


def _replace(text: str, kind: str, change: dict[str, Any]) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == kind)
    lines[number] = json.dumps({**json.loads(lines[number]), **change}) + "\n"
    return "".join(lines), number + 1


def _twice(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "memory")
    lines.insert(number + 1, lines[number])
    return "".join(lines), number + 2


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (_cut_mid_line, None),
        (_cut_at_a_line, "type"),
        (_bad_json, None),
        (lambda text: _replace(text, "memory", {"session_id": "nowhere"}), "session_id"),
        (lambda text: _replace(text, "memory", {"confidence": 2.5}), "confidence"),
        (lambda text: _replace(text, "memory", {"supersedes": str(uuid.uuid4())}), "supersedes"),
        (lambda text: _replace(text, "link", {"entity_id": str(uuid.uuid4())}), None),
        (_twice, None),
        (lambda text: _replace(text, "history", {"memory_id": str(uuid.uuid4())}), "memory_id"),
        (lambda text: _replace(text, "event", {"seq": 10_000}), "seq"),
        (lambda text: _replace(text, "session", {"last_seq": 2**31}), "last_seq"),  # events.seq is int4
        (
            lambda text: _replace(text, "end", {"counts": {**lines_of(text)[-1]["counts"], "memory": 1}}),
            "counts.memory",
        ),
    ],
    ids=[
        "truncated-mid-line",
        "truncated-at-a-line",
        "bad-json",
        "memory-of-a-missing-session",
        "confidence-out-of-range",
        "supersedes-a-missing-unit",
        "link-to-a-missing-entity",
        "a-memory-twice",
        "history-of-a-missing-unit",
        "seq-beyond-the-session",
        "last-seq-past-int4",
        "counts-disagree",
    ],
)
async def test_a_bad_stream_is_refused_and_leaves_nothing(
    client: httpx.AsyncClient, source: tuple[str, str], sql: Any, mutate: Any, field: str | None
) -> None:
    body, line = mutate(source[1])
    target = f"bad-{uuid.uuid4().hex[:8]}"
    problem = assert_problem(await import_as(client, target, body), 422)
    assert problem["detail"].startswith(f"Line {line}"), problem
    assert problem["errors"][0]["line"] == line
    if field is not None:
        assert f"field {field}:" in problem["detail"], problem
    assert await nothing_of(sql, target)
    assert (await client.get(f"/v1/banks/{target}")).status_code == 404


async def test_an_existing_bank_is_409_and_stays_as_it_was(
    client: httpx.AsyncClient, source: tuple[str, str], sql: Any
) -> None:
    bank = await make_bank(client)
    await write(client, bank, "The user drinks tea.", ["preference"])
    assert_problem(await import_as(client, bank, source[1]), 409)
    rows = await sql("SELECT content FROM memory_units WHERE bank_id = :bank", bank=bank)
    assert [r["content"] for r in rows] == ["The user drinks tea."]


async def test_only_the_admin_imports_and_a_bank_key_exports_only_its_bank(
    client: httpx.AsyncClient, source: tuple[str, str]
) -> None:
    bank = source[0]
    other = await make_bank(client)
    other_key = (await client.post(f"/v1/banks/{other}/keys", json={"scopes": ["read", "write"]})).json()[
        "key"
    ]
    writer = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["write"]})).json()["key"]
    reader = (await client.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]})).json()["key"]
    with_key = {"Authorization": f"Bearer {other_key}"}
    assert_problem(await client.get(f"/v1/banks/{bank}/export", headers=with_key), 404)
    assert_problem(
        await client.get(f"/v1/banks/{bank}/export", headers={"Authorization": f"Bearer {writer}"}), 403
    )
    own = await client.get(f"/v1/banks/{bank}/export", headers={"Authorization": f"Bearer {reader}"})
    assert own.status_code == 200
    assert own.headers["content-type"].startswith("application/x-ndjson")
    assert lines_of(own.text)[-1] == lines_of(source[1])[-1]  # (the round trip's queries moved access counts)
    target = f"keyed-{uuid.uuid4().hex[:8]}"
    response = await client.post(
        f"/v1/banks/{target}/import", content=source[1], headers={**NDJSON, **with_key}
    )
    assert_problem(response, 404)
    response = await client.post(
        f"/v1/banks/{other}/import", content=source[1], headers={**NDJSON, **with_key}
    )
    assert_problem(response, 403)
    assert_problem(await client.get("/v1/banks/no-such-bank/export"), 404)


async def test_without_events_the_units_keep_their_seqs(
    client: httpx.AsyncClient, source: tuple[str, str]
) -> None:
    response = await client.get(f"/v1/banks/{source[0]}/export", params={"events": "false"})
    lines = lines_of(response.text)
    assert lines[0]["events"] is False
    assert not [line for line in lines if line["type"] == "event"]
    assert lines[-1]["counts"]["event"] == 0
    target = f"noevents-{uuid.uuid4().hex[:8]}"
    imported = await import_as(client, target, response.text)
    assert imported.status_code == 201, imported.text
    units = (await client.get(f"/v1/banks/{target}/memories", params={"session_id": "trip"})).json()[
        "memories"
    ]
    assert units
    assert all(u["source"]["seqs"] and not u["source"]["event_ids"] for u in units)
    # A replay sees none of the turns its units came from: the session is left as it is, and said so.
    replay = await client.post(f"/v1/banks/{target}/redistill", json={})
    job = await finished_job(client, replay.json()["job_id"])
    assert job["status"] == "succeeded", job
    assert {"session_id": "trip", "reason": "events missing"} in job["result"]["skipped"]
    assert job["result"]["removed"] == []
    after = (await client.get(f"/v1/banks/{target}/memories", params={"session_id": "trip"})).json()
    assert {u["id"] for u in after["memories"]} == {u["id"] for u in units}


async def test_redacted_content_stays_redacted(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client, distill_every_n_turns=1000, redact_raw_events=True)
    await say(client, bank, "My card is 4111 1111 1111 1111, keep it on file.")
    exported = (await client.get(f"/v1/banks/{bank}/export")).text
    # the card's groups, not its first four digits alone: a timestamp's microseconds can read "…4111…"
    assert "4111 1111" not in exported
    assert "1111 1111" not in exported
    [event] = [line for line in lines_of(exported) if line["type"] == "event"]
    assert event["content"].startswith("My card is ")


async def test_the_export_is_one_snapshot(app: Any, client: httpx.AsyncClient) -> None:
    from app.portability.export import export_bank

    bank = await make_bank(client)
    await write(client, bank, "The user drinks tea.", ["preference"])
    stream = export_bank(app.state.engine, bank)
    first = await anext(stream)  # the snapshot is taken: the bank line is read
    await write(client, bank, "The user drinks coffee now.", ["preference"])
    rest = b"".join([chunk async for chunk in stream])
    during = (first + rest).decode()
    assert "tea" in during
    assert "coffee" not in during
    assert lines_of(during)[-1]["counts"]["memory"] == 1
    assert "coffee" in (await client.get(f"/v1/banks/{bank}/export")).text


async def test_the_api_body_limit_does_not_apply_but_the_import_limit_does(
    client: httpx.AsyncClient, stack: Stack, sql: Any
) -> None:
    from app.config import get_settings
    from app.main import create_app

    bank = await make_bank(client, distill_every_n_turns=1000)
    for batch in range(4):  # each append under the API's body limit
        turns = [{"role": "user", "content": f"note {batch}.{i}: " + "x" * 30_000} for i in range(20)]
        response = await client.post(f"/v1/banks/{bank}/sessions/big/events", json={"events": turns})
        assert response.status_code == 202, response.text
    exported = (await client.get(f"/v1/banks/{bank}/export")).content
    assert len(exported) > get_settings().max_body_bytes
    target = f"big-{uuid.uuid4().hex[:8]}"
    imported = await import_as(client, target, exported)
    assert imported.status_code == 201, imported.text
    assert imported.json()["counts"]["event"] == 80

    small = create_app(get_settings().model_copy(update={"import_max_bytes": 100_000}))
    async with small.router.lifespan_context(small), make_client(small, ADMIN_KEY) as limited:
        refused = f"refused-{uuid.uuid4().hex[:8]}"
        assert_problem(await import_as(limited, refused, exported), 413)
    assert await nothing_of(sql, refused)


def test_the_cli_exports_and_imports_over_http(source: tuple[str, str], stack: Stack, tmp_path: Any) -> None:
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    bank = source[0]
    target = f"cli-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "bank.ndjson"
    with serve(create_app(get_settings())) as url:
        env = stack.env(HINDSIGHT_URL=url.removesuffix("/v1"), HINDSIGHT_API_KEY=ADMIN_KEY)

        def hindsight(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "app.cli", *args],
                env=env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )

        exported = hindsight("export", bank, str(path))
        assert exported.returncode == 0, exported.stderr
        assert lines_of(path.read_text())[-1] == lines_of(source[1])[-1]
        imported = hindsight("import", target, str(path))
        assert imported.returncode == 0, imported.stderr
        assert json.loads(imported.stdout)["counts"] == lines_of(source[1])[-1]["counts"]
        again = hindsight("import", target, str(path))
        assert again.returncode == 1
        assert "409" in again.stderr or "Conflict" in again.stderr
        env["HINDSIGHT_URL"] = "http://127.0.0.1:9"  # nothing listens on the discard port
        unreachable = hindsight("import", target, str(path))
        assert unreachable.returncode == 1
        assert "cannot reach the service" in unreachable.stderr
        env["HINDSIGHT_URL"] = url.removesuffix("/v1")
        missing = hindsight("export", "no-such-bank", str(tmp_path / "none.ndjson"))
        assert missing.returncode == 1
        assert "Not Found" in missing.stderr


async def test_sessions_may_come_in_any_order_but_a_sessions_events_in_seq_order(
    client: httpx.AsyncClient, source: tuple[str, str]
) -> None:
    """How a database sorts session ids depends on its collation ("alice" before "Bob" or after): an export
    from any of them imports; a session's events out of order or twice are refused, naming the line."""
    lines = source[1].splitlines(keepends=True)
    events = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "event"]
    by_session: dict[str, list[str]] = {}
    for i in events:
        by_session.setdefault(json.loads(lines[i])["session_id"], []).append(lines[i])
    assert len(by_session) >= 2
    swapped = [line for block in reversed(by_session.values()) for line in block]
    reordered = lines[: events[0]] + swapped + lines[events[-1] + 1 :]
    imported = await import_as(client, f"order-{uuid.uuid4().hex[:8]}", "".join(reordered))
    assert imported.status_code == 201, imported.text
    first = next(iter(by_session.values()))
    assert len(first) >= 2
    backwards = [*lines[: events[0]], first[1], first[0], *lines[events[0] + 2 :]]
    refused = await import_as(client, f"order-{uuid.uuid4().hex[:8]}", "".join(backwards))
    problem = assert_problem(refused, 422)
    assert "seq order" in json.dumps(problem)


async def test_a_sessions_quarantined_turns_come_along(
    client: httpx.AsyncClient, source: tuple[str, str]
) -> None:
    """The turns a distiller failed on are listed on their session (with the reason) after a round trip."""
    left_out = {"seq": 2, "reason": "ValueError: the distiller choked", "job_id": str(uuid.uuid4())}
    text, _ = _replace(source[1], "session", {"quarantined": [left_out]})
    copy = f"quarantine-{uuid.uuid4().hex[:8]}"
    imported = await import_as(client, copy, text)
    assert imported.status_code == 201, imported.text
    session_id = next(line for line in lines_of(text) if line["type"] == "session")["session_id"]
    session = (await client.get(f"/v1/banks/{copy}/sessions/{session_id}")).json()
    assert [(q["seq"], q["reason"]) for q in session["quarantined"]] == [(2, left_out["reason"])]
    again = (await client.get(f"/v1/banks/{copy}/export")).text
    exported = next(line for line in lines_of(again) if line["type"] == "session")
    assert exported["quarantined"] == [left_out]
