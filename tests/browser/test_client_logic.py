"""Unit tests of the console's client-side logic (time zones, lineage, density, the recall form,
routes, problem messages), run as the console runs them: ES modules imported in the real browser."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.conftest import Console


@pytest.fixture
async def js(console: Console) -> Any:
    """`await js("time.js", "m.formatTime(...)")` → the expression's value, `m` being the module."""
    await console.open("/ui/login")

    async def run(module: str, expression: str) -> Any:
        return await console.page.evaluate(
            f"async () => {{ const m = await import('/ui/static/js/{module}'); return {expression}; }}"
        )

    return run


@pytest.mark.parametrize(
    ("local", "zone", "instant"),
    [
        ("2026-12-01T17:30", "Asia/Shanghai", "2026-12-01T09:30:00.000Z"),
        ("2026-12-01T17:30:15", "UTC", "2026-12-01T17:30:15.000Z"),
        ("2026-07-01T12:00", "America/New_York", "2026-07-01T16:00:00.000Z"),  # EDT, -4
        ("2026-12-01T12:00", "America/New_York", "2026-12-01T17:00:00.000Z"),  # EST, -5
        ("2026-03-08T02:30", "America/New_York", "2026-03-08T07:30:00.000Z"),  # skipped: read forwards
        ("2026-11-01T01:30", "America/New_York", "2026-11-01T05:30:00.000Z"),  # repeated: the first
        ("2026-03-29T12:00", "Asia/Kolkata", "2026-03-29T06:30:00.000Z"),
    ],
)
async def test_a_wall_time_in_the_bank_zone_becomes_an_instant(
    js: Any, local: str, zone: str, instant: str
) -> None:
    assert await js("time.js", f"m.zonedToUtc({json.dumps(local)}, {json.dumps(zone)})") == instant


async def test_instants_are_shown_in_the_bank_zone_and_round_trip(js: Any) -> None:
    shanghai = "m.formatTime('2026-12-01T09:30:00Z', 'Asia/Shanghai')"
    assert await js("time.js", shanghai) == "2026-12-01 17:30:00"
    tokyo = "m.formatTime('2026-12-31T23:00:00Z', 'Asia/Tokyo')"
    assert await js("time.js", tokyo) == "2027-01-01 08:00:00"
    assert await js("time.js", "m.formatDate(null)") == "—"
    assert await js("time.js", "m.zonedToUtc('', 'UTC')") is None
    back = "m.zonedToUtc(m.toLocalInput('2026-05-04T03:02:01Z', 'Europe/Paris'), 'Europe/Paris')"
    assert await js("time.js", back) == "2026-05-04T03:02:01.000Z"
    assert await js("time.js", "[m.formatSeconds(42), m.formatSeconds(600), m.formatSeconds(7200)]") == [
        "42 s",
        "10.0 min",
        "2.0 h",
    ]


def brief(unit_id: str, status: str) -> dict[str, Any]:
    return {"id": unit_id, "content": unit_id, "status": status, "valid_from": None, "valid_to": None}


async def test_the_lineage_marks_the_active_head_and_the_current_unit(js: Any) -> None:
    history = {
        "memory": brief("b", "superseded"),
        "chain": [brief("a", "superseded"), brief("b", "superseded"), brief("c", "active")],
        "merged_from": [brief("m", "merged")],
        "merged_into": None,
    }
    model = await js("lineage.js", f"m.lineageModel({json.dumps(history)})")
    assert [(u["id"], u["isCurrent"], u["isHead"]) for u in model["chain"]] == [
        ("a", False, False),
        ("b", True, False),
        ("c", False, True),
    ]
    assert model["activeHead"]["id"] == "c"
    assert [m["id"] for m in model["mergedFrom"]] == ["m"]
    # A forgotten head is the head, not an active one; a unit with no chain is its own.
    gone = {"memory": brief("x", "deleted"), "chain": [], "merged_from": [], "merged_into": None}
    alone = await js("lineage.js", f"m.lineageModel({json.dumps(gone)})")
    assert [(u["id"], u["isHead"]) for u in alone["chain"]] == [("x", True)]
    assert alone["activeHead"] is None
    action = {
        "action": "superseded",
        "actor": "resolver",
        "details": {"from": "active", "to": "superseded", "reason": "relation"},
    }
    assert (
        await js("lineage.js", f"m.describeAction({json.dumps(action)})")
        == "superseded · resolver · active → superseded · reason: relation"
    )


async def test_density_counts_items_per_bucket_and_kind(js: Any) -> None:
    items = [
        {"at": "2026-12-01T00:00:00Z", "kind": "event"},
        {"at": "2026-12-01T00:00:01Z", "kind": "memory"},
        {"at": "2026-12-01T00:00:05Z", "kind": "query"},
        {"at": "2026-12-01T00:00:10Z", "kind": "job"},  # the very end: the last bucket
    ]
    buckets = await js("density.js", f"m.density({json.dumps(items)}, 2)")
    assert [b["total"] for b in buckets] == [2, 2]
    assert buckets[0]["counts"] == {"event": 1, "memory": 1, "query": 0, "job": 0}
    assert buckets[1]["counts"] == {"event": 0, "memory": 0, "query": 1, "job": 1}
    assert await js("density.js", "m.peak(m.density([], 10))") == 1
    one = await js("density.js", "m.density([{at: '2026-12-01T00:00:00Z', kind: 'event'}], 3)")
    assert sum(b["total"] for b in one) == 1


async def test_the_recall_form_becomes_the_query_body(js: Any) -> None:
    form = {
        "query": "  what is my budget?  ",
        "top_k": "5",
        "tags": "constraint, preference ,",
        "from": "2026-11-01T00:00",
        "to": "",
        "as_of": "2026-12-01T08:00",
        "fusion": "weighted",
        "min_score": "0",
        "w_semantic": "2",
        "w_keyword": "",
        "w_recency": "0",
        "statuses": "active,superseded",
        "session_id": "chat-1",
        "rerank": "off",
        "context_why": "on",
    }
    body = await js("recall.js", f"m.queryBody({json.dumps(form)}, 'Asia/Shanghai')")
    assert body == {
        "query": "what is my budget?",
        "top_k": 5,
        "explain": True,
        "tags": ["constraint", "preference"],
        "time_range": {"from": "2026-10-31T16:00:00.000Z"},
        "as_of": "2026-12-01T00:00:00.000Z",
        "fusion": "weighted",
        "min_score": 0,
        "weights": {"semantic": 2, "recency": 0},
        "statuses": ["active", "superseded"],
        "session_id": "chat-1",
        "working_memory": True,
        "rerank": False,
        "context_why": True,
    }
    assert (await js("recall.js", "m.queryBody({query: 'x', rerank: 'on'}, 'UTC')"))["rerank"] is True
    assert await js("recall.js", "m.queryBody({query: 'x', top_k: '', rerank: ''}, 'UTC')") == {
        "query": "x",
        "top_k": 10,
        "explain": True,
    }


async def test_channel_bars_scale_each_channel_by_its_best(js: Any) -> None:
    memories = [
        {"scores": {"keyword": {"rank": 1, "score": 8.0}, "semantic": {"rank": 2, "score": 0.4}}},
        {"scores": {"semantic": {"rank": 1, "score": 0.8}}},
        {"scores": None},
    ]
    bars = await js("recall.js", f"m.channelBars({json.dumps(memories)})")
    assert bars[0] == [
        {"channel": "semantic", "rank": 2, "score": 0.4, "fraction": 0.5},
        {"channel": "keyword", "rank": 1, "score": 8.0, "fraction": 1.0},
    ]
    assert bars[1] == [{"channel": "semantic", "rank": 1, "score": 0.8, "fraction": 1.0}]
    assert bars[2] == []
    scores = "[m.formatScore(0.45412), m.formatScore(1796120704)]"
    assert await js("recall.js", scores) == ["0.454", "1.796e+9"]


@pytest.mark.parametrize(
    ("pathname", "view", "params"),
    [
        ("/ui", "banks", {}),
        ("/ui/banks", "banks", {}),
        ("/ui/banks/b%3A1", "bank", {"bank": "b:1"}),
        ("/ui/banks/b1/memories/", "memories", {"bank": "b1"}),
        ("/ui/banks/b1/memories/u1", "memory", {"bank": "b1", "memory": "u1"}),
        ("/ui/banks/b1/sessions/chat.1", "session", {"bank": "b1", "session": "chat.1"}),
        ("/ui/banks/b1/timeline", "timeline", {"bank": "b1"}),
        ("/ui/banks/b1/recall", "recall", {"bank": "b1"}),
        ("/ui/banks/b1/entities/e1", "entity", {"bank": "b1", "entity": "e1"}),
        ("/ui/banks/b1/nothing", None, {}),
    ],
)
async def test_deep_links_route_to_their_view(js: Any, pathname: str, view: str | None, params: Any) -> None:
    assert await js("routes.js", f"m.matchRoute({json.dumps(pathname)})") == {"view": view, "params": params}


async def test_paths_escape_their_segments(js: Any) -> None:
    assert await js("routes.js", "m.path('banks', 'a/b', 'memories')") == "/ui/banks/a%2Fb/memories"
    assert await js("api.js", "m.bankPath('a b', 'sessions', 's/1')") == "/v1/banks/a%20b/sessions/s%2F1"


async def test_problems_read_as_one_line(js: Any) -> None:
    problem = {
        "title": "Unprocessable Content",
        "status": 422,
        "detail": "Invalid input.",
        "errors": [{"loc": ["body", "top_k"], "msg": "Input should be less than or equal to 100"}],
    }
    assert (
        await js("api.js", f"m.problemMessage(422, {json.dumps(problem)})")
        == "Unprocessable Content (422): Invalid input. (top_k: Input should be less than or equal to 100)"
    )
    assert await js("api.js", "m.problemMessage(502, null)") == "Request failed (502)."


async def test_units_are_aligned_with_the_turns_they_came_from(js: Any) -> None:
    units = [
        {"id": "u1", "source": {"session_id": "s", "seqs": [1, 2]}},
        {"id": "u2", "source": {"session_id": "s", "seqs": [2]}},
        {"id": "u3", "source": {"session_id": "other", "seqs": [1]}},
    ]
    ids = "([seq, found]) => [seq, found.map((u) => u.id)]"
    aligned = await js(
        "views/session.js", f"Object.fromEntries([...m.unitsBySeq({json.dumps(units)}, 's')].map({ids}))"
    )
    assert aligned == {"1": ["u1"], "2": ["u1", "u2"]}
