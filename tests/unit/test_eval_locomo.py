"""The LoCoMo harness's pure parts: the data set, the request bodies, the metrics and the report."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.eval.locomo import (
    Api,
    EvalError,
    Options,
    QueryOutcome,
    Question,
    aggregate,
    build_report,
    context_words,
    dense_memory,
    format_comparison,
    format_report,
    load_conversation,
    load_dataset,
    normalise_evidence,
    parse_ks,
    parse_session_datetime,
    percentile,
    query_body,
    recall,
    redacted_command,
    retrieved_dia_ids,
    session_batches,
    split_evidence,
    turn_event,
)

SAMPLE: dict[str, Any] = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! I adopted a dog named Biscuit."},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Look at my garden!",
                "img_url": ["http://example.invalid/x.jpg"],
                "blip_caption": "a photo of red tulips",
            },
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Lovely."},
        ],
        "session_2_date_time": "10:05 am on 12 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I moved to Lisbon last week."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Biscuit says hi."},
        ],
        "session_3_date_time": "9:00 am on 1 July, 2023",  # a stamp without turns
    },
    "qa": [
        {"question": "What is Ana's dog called?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Ben move?", "answer": "June 2023", "evidence": ["D2:1 "], "category": 2},
        {"question": "Pets?", "answer": "a dog", "evidence": ["D1:1; D2:2", "D", "D9:9"], "category": 1},
        {"question": "Would Ana like cats?", "answer": "maybe", "evidence": [], "category": 3},
        {"question": "What car does Ana drive?", "adversarial_answer": "x", "evidence": [], "category": 5},
    ],
}


def test_session_stamps_parse_as_utc() -> None:
    assert parse_session_datetime("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_datetime("12:19 am on 4 January, 2024") == datetime(2024, 1, 4, 0, 19, tzinfo=UTC)
    assert parse_session_datetime(" 9:55  am on 22 October, 2023 ") == datetime(
        2023, 10, 22, 9, 55, tzinfo=UTC
    )
    # Another spelling falls back to dateparser.
    assert parse_session_datetime("8 May 2023 13:56") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    with pytest.raises(EvalError):
        parse_session_datetime("not a date at all")


def test_turns_become_events_in_order_with_captions() -> None:
    conversation = load_conversation(SAMPLE)
    assert [s.session_id for s in conversation.sessions] == ["session_1", "session_2"]
    first = conversation.sessions[0]
    events = session_batches(first)[0]
    assert [e["external_id"] for e in events] == ["D1:1", "D1:2", "D1:3"]
    assert {e["role"] for e in events} == {"user"}
    assert [e["speaker"] for e in events] == ["Ana", "Ben", "Ana"]
    assert events[1]["content"] == "Look at my garden! (image: a photo of red tulips)"
    times = [datetime.fromisoformat(e["occurred_at"]) for e in events]
    assert times[0] == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert times == sorted(times)
    assert len(set(times)) == 3
    assert (times[-1] - times[0]).total_seconds() < 60  # a few seconds apart
    assert turn_event(first.turns[0])["occurred_at"].endswith("+00:00")
    # Questions are asked at the end of the conversation (its last turn).
    assert conversation.now == conversation.sessions[1].turns[-1].occurred_at
    assert any("session date-times without turns" in note for note in conversation.notes)


def test_caption_only_turns_and_empty_turns() -> None:
    sample = {
        "sample_id": "conv-y",
        "conversation": {
            "session_1_date_time": "1:00 pm on 1 May, 2023",
            "session_1": [
                {"speaker": "A", "dia_id": "D1:1", "text": "", "blip_caption": "a cat"},
                {"speaker": "B", "dia_id": "D1:2", "text": "   "},
            ],
        },
        "qa": [],
    }
    session = load_conversation(sample).sessions[0]
    assert [(t.dia_id, t.text) for t in session.turns] == [("D1:1", "(image: a cat)")]


def test_session_batches_split_at_one_thousand() -> None:
    turns = [{"speaker": "A", "dia_id": f"D1:{i}", "text": f"turn {i}"} for i in range(1, 1502)]
    sample = {"conversation": {"session_1_date_time": "1:00 pm on 1 May, 2023", "session_1": turns}}
    batches = session_batches(load_conversation(sample).sessions[0])
    assert [len(b) for b in batches] == [1000, 501]


def test_evidence_is_normalised_and_split() -> None:
    assert normalise_evidence(["D1:3"]) == ["D1:3"]
    assert normalise_evidence(["D10:8; D10:9", "D1:3 ", " D1:03", "d2:1"]) == [
        "D10:8",
        "D10:9",
        "D1:3",
        "D2:1",
    ]
    assert split_evidence(["D", "D1:2,D1:4"]) == (["D1:2", "D1:4"], ["D"])
    assert normalise_evidence([]) == []


def test_questions_keep_categories_one_to_four_with_usable_evidence() -> None:
    conversation = load_conversation(SAMPLE)
    assert [(q.index, q.category, q.evidence) for q in conversation.questions] == [
        (0, 4, ("D1:1",)),
        (1, 2, ("D2:1",)),
        (2, 1, ("D1:1", "D2:2")),  # "D" is malformed, D9:9 names no turn
    ]
    notes = "\n".join(conversation.notes)
    assert "malformed evidence ['D']" in notes
    assert "['D9:9'] names no turn" in notes
    assert "q3" in notes
    assert "question skipped" in notes
    assert "q4" not in notes  # category 5 is not evaluated at all


def test_recall_and_retrieved_dia_ids() -> None:
    event_map = {11: "D1:1", 12: "D1:2", 21: "D2:1"}
    units = [
        {"content": "Ana has a dog named Biscuit.", "source": {"event_ids": [11, 12]}, "metadata": {}},
        {
            "content": "[12 June 2023] Ben: I moved",
            "source": {"event_ids": []},
            "metadata": {"dia_id": "D2:2"},
        },
        {"content": "Again Biscuit", "source": {"event_ids": [11, 999]}},
    ]
    assert retrieved_dia_ids(units, event_map) == ["D1:1", "D1:2", "D2:2"]
    assert recall(["D1:1", "D2:1"], ["D1:1", "D1:2", "D2:2"]) == 0.5
    assert recall(["D1:1"], ["D1:1"]) == 1.0
    assert recall(["D3:1"], []) == 0.0
    with pytest.raises(ValueError, match="evidence"):
        recall([], ["D1:1"])
    assert context_words(units) == 6 + 6 + 2


def test_percentile_interpolates() -> None:
    assert percentile([], 50) is None
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([float(v) for v in range(1, 101)], 95) == pytest.approx(95.05)
    assert percentile([10.0, 0.0, 5.0], 100) == 10.0


def test_request_bodies_of_both_modes() -> None:
    conversation = load_conversation(SAMPLE)
    session = conversation.sessions[1]
    unit = dense_memory(session, session.turns[0])
    assert unit == {
        "content": "[10:05 am on 12 June, 2023] Ben: I moved to Lisbon last week.",
        "tags": ["episode"],
        "occurred_at": "2023-06-12T10:05:00+00:00",
        "session_id": "session_2",
        "metadata": {"dia_id": "D2:1"},
    }
    product = query_body("When did Ben move?", 10, conversation.now, dense=False)
    assert product == {
        "query": "When did Ben move?",
        "top_k": 10,
        "min_score": 0,
        "now": "2023-06-12T10:05:05+00:00",
        "timezone": "UTC",
    }
    dense = query_body("q", 5, conversation.now, dense=True)
    weights = {"semantic": 1, "keyword": 0, "entity": 0, "temporal": 0, "tag": 0, "recency": 0}
    assert dense["weights"] == weights
    # Plain RAG: no time filter from the question's words, every unit's age decay at its floor.
    assert dense["time_range"] == {"from": "1900-01-01T00:00:00+00:00", "to": "2200-01-01T00:00:00+00:00"}
    assert dense["now"] == "2200-01-01T00:00:00+00:00"
    assert (dense["top_k"], dense["min_score"], dense["query"]) == (5, 0, "q")


def outcome(
    index: int, category: int, k: int, value: float, words: int, ms: float, time_filter: str | None = None
) -> QueryOutcome:
    question = Question(index, f"q{index}", category, ("D1:1",))
    return QueryOutcome("conv-x", question, k, ("D1:1",), value, words, k, ms, ms / 2, time_filter)


def test_aggregation_per_k_and_category() -> None:
    outcomes = [
        outcome(0, 1, 5, 0.0, 40, 10.0),
        outcome(1, 4, 5, 1.0, 60, 30.0),
        outcome(2, 4, 5, 0.5, 50, 20.0, time_filter="recently"),
        outcome(0, 1, 10, 1.0, 80, 12.0),
        outcome(1, 4, 10, 1.0, 100, 14.0),
        outcome(2, 4, 10, 1.0, 90, 16.0),
    ]
    results = aggregate(outcomes, (5, 10))
    assert list(results) == ["5", "10"]
    five = results["5"]
    assert five["questions"] == 3
    assert five["recall"] == 0.5
    assert five["by_category"]["1"] == {"name": "multi-hop", "questions": 1, "recall": 0.0}
    assert five["by_category"]["4"] == {"name": "single-hop", "questions": 2, "recall": 0.75}
    assert five["by_category"]["2"] == {"name": "temporal", "questions": 0, "recall": None}
    assert five["context_words"] == 50.0
    assert five["latency_ms"]["client"] == {"p50": 20.0, "p95": 29.0, "mean": 20.0}
    assert five["latency_ms"]["server"]["p50"] == 10.0
    assert five["with_time_filter"] == {"questions": 1, "recall": 0.5}
    assert results["10"]["with_time_filter"] == {"questions": 0, "recall": None}
    assert results["10"]["recall"] == 1.0


def test_report_shape_text_and_comparison(tmp_path: Path) -> None:
    from app.eval.locomo import ConversationRun, Prepared

    conversation = load_conversation(SAMPLE)
    outcomes = tuple(
        outcome(q.index, q.category, k, 1.0, 20, 5.0) for q in conversation.questions for k in (5, 10)
    )
    run = ConversationRun("conv-x", Prepared("bank-1", 5, 0.5, 2.0), 2, {"active": 7, "merged": 1}, outcomes)
    options = Options(
        url="http://x", api_key="k", data=tmp_path / "d.json", ks=(5, 10), command="hindsight …"
    )
    report = build_report(options, [conversation], [run], datetime(2024, 1, 1, tzinfo=UTC))
    json.dumps(report)  # serialisable as is
    assert report["mode"] == "product"
    assert report["questions"] == 3
    assert report["sessions"] == 2
    assert report["ingest"] == {"items": 5, "unit": "events", "seconds": 0.5, "per_second": 10.0}
    assert report["distill_wait_seconds"] == 2.0
    assert report["query_settings"] == {
        "min_score": 0,
        "now": "the time of the conversation's last turn",
        "timezone": "UTC",
    }
    assert report["units"] == {"active": 7, "by_status": {"active": 7, "merged": 1}}
    assert {"cores", "memory_gb", "python"} <= report["machine"].keys()
    assert report["results"]["10"]["recall"] == 1.0
    assert report["per_conversation"][0]["bank_kept"] is False  # deleted after the run
    assert len(report["question_details"]) == 3
    assert report["question_details"][0]["results"]["5"]["dia_ids"] == ["D1:1"]
    assert report["data_notes"] == list(conversation.notes)
    text = format_report(report)
    assert "recall" in text
    assert "multi-hop" in text
    assert "events" in text

    dense = {**report, "mode": "dense", "results": json.loads(json.dumps(report["results"]))}
    dense["results"]["10"]["recall"] = 0.5
    comparison = format_comparison(report, dense)
    assert "recall@10 ratio A/B = 2.000" in comparison
    assert "A: product" in comparison
    assert "B: dense" in comparison


def test_dataset_file_and_cli_helpers(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE, {**SAMPLE, "sample_id": "conv-z"}]))
    assert [c.sample_id for c in load_dataset(path)] == ["conv-x", "conv-z"]
    with pytest.raises(EvalError, match="cannot read"):
        load_dataset(tmp_path / "missing.json")
    assert parse_ks("20,5,10") == (5, 10, 20)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_ks("5,abc")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_ks("0")
    assert redacted_command(["eval", "locomo", "--api-key", "secret", "--k=5"]) == (
        "hindsight eval locomo --api-key '***' --k=5"
    )
    assert "secret" not in redacted_command(["--api-key=secret"])


def test_cli_parses_the_eval_verb() -> None:
    from app.cli import build_parser

    args = build_parser().parse_args(
        ["eval", "locomo", "--url", "http://h:1", "--api-key", "k", "--data", "f.json", "--k", "5,10"]
    )
    assert (args.verb, args.suite, args.ks, args.concurrency, args.baseline) == (
        "eval",
        "locomo",
        (5, 10),
        4,
        None,
    )
    compare = build_parser().parse_args(["eval", "locomo", "--compare", "a.json", "b.json"])
    assert compare.compare == [Path("a.json"), Path("b.json")]


async def test_api_retries_503_and_explains_401_and_404() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if request.url.path == "/flaky" and len(calls) < 3:
            return httpx.Response(503, json={"title": "Unavailable", "detail": "database down"})
        if request.url.path == "/flaky":
            return httpx.Response(200, json={"ok": True})
        if request.url.path == "/secret":
            return httpx.Response(401, json={"detail": "Invalid key"})
        return httpx.Response(404, json={"detail": "Not Found"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://t") as client:
        api = Api(client, backoff=0.001)
        assert await api.get("/flaky") == {"ok": True}
        assert calls == ["/flaky"] * 3
        with pytest.raises(EvalError, match=r"401.*API key was refused"):
            await api.get("/secret")
        with pytest.raises(EvalError, match=r"POST /v1/banks/b/query answered 404.*endpoint"):
            await api.post("/v1/banks/b/query", {})
        calls.clear()
        always = Api(
            httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(503))), backoff=0.001
        )
        with pytest.raises(EvalError, match="503"):
            await always.get("http://t/x")
        await always.client.aclose()


def test_cli_compare_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    report = {
        "mode": "product",
        "results": {
            "10": {
                "recall": 0.6,
                "by_category": {},
                "context_words": 90.0,
                "latency_ms": {"client": {"p50": 5.0, "p95": 9.0}, "server": {"p50": 2.0}},
            }
        },
    }
    baseline = {**report, "mode": "dense", "results": {"10": {**report["results"]["10"], "recall": 0.5}}}
    (tmp_path / "a.json").write_text(json.dumps(report))
    (tmp_path / "b.json").write_text(json.dumps(baseline))
    assert main(["eval", "locomo", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert "recall@10 ratio A/B = 1.200" in capsys.readouterr().out
    assert main(["eval", "locomo", "--url", "http://x"]) == 1
    assert "missing --api-key, --data" in capsys.readouterr().err


async def test_a_dropped_connection_is_resent_only_when_harmless() -> None:
    attempts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request.url.path)
        if attempts.count(request.url.path) == 1:
            raise httpx.ReadError("connection closed by the server", request=request)
        return httpx.Response(200, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://t") as client:
        api = Api(client, backoff=0.001)
        assert await api.get("/read") == {"ok": True}
        assert await api.post("/query", {}, idempotent=True) == {"ok": True}
        with pytest.raises(EvalError, match=r"POST /write: no answer"):
            await api.post("/write", {})
    assert attempts == ["/read", "/read", "/query", "/query", "/write"]


def test_the_defaults_mode_sends_the_question_and_k_alone(tmp_path: Path) -> None:
    from app.cli import build_parser
    from app.eval.locomo.bodies import query_settings
    from app.eval.locomo.cli import _kept_banks, _options

    conversation = load_conversation(SAMPLE)
    assert query_body("When did Ben move?", 10, conversation.now, dense=False, defaults=True) == {
        "query": "When did Ben move?",
        "top_k": 10,
    }
    assert query_settings(dense=False, defaults=True) == {}
    flags = ["eval", "locomo", "--url", "http://h:1", "--api-key", "k", "--data", "f.json", "--defaults"]
    options = _options(build_parser().parse_args([*flags, "--reuse-banks", "r.json"]))
    assert (options.defaults, options.mode, options.reuse_banks) == (True, "product-defaults", Path("r.json"))
    with pytest.raises(EvalError, match="--defaults"):
        _options(build_parser().parse_args([*flags, "--baseline", "dense"]))
    report = tmp_path / "report.json"
    entries = [{"sample_id": "conv-x", "bank_id": "b1", "bank_kept": True}]
    report.write_text(json.dumps({"per_conversation": entries}))
    assert _kept_banks(report) == {"conv-x": "b1"}
    report.write_text(json.dumps({"per_conversation": [{**entries[0], "bank_kept": False}]}))
    with pytest.raises(EvalError, match="--keep-banks"):
        _kept_banks(report)
