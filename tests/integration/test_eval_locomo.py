"""The LoCoMo harness end to end: the real app served over HTTP (uvicorn on a loopback port), a real
Celery worker, PostgreSQL and Redis; the harness sees only the public API, as a user's would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.eval.locomo import EvalError, Options, run_eval
from tests.conftest import ADMIN_KEY, Stack

CONVERSATION: dict[str, Any] = {
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {
                "speaker": "Ana",
                "dia_id": "D1:1",
                "text": "I adopted a golden retriever puppy and named him Biscuit.",
            },
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "I started taking cello lessons at the conservatory.",
            },
            {
                "speaker": "Ana",
                "dia_id": "D1:3",
                "text": "Here he is at the beach.",
                "img_url": ["http://example.invalid/biscuit.jpg"],
                "blip_caption": "a photo of a dog running on a beach",
            },
        ],
        "session_2_date_time": "10:05 am on 12 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I moved to Lisbon for a new job at a bakery."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Biscuit chewed my running shoes again."},
        ],
    },
    "qa": [
        {"question": "Which city did Ben move to?", "answer": "Lisbon", "evidence": ["D2:1"], "category": 4},
        {
            "question": "What is the name of Ana's golden retriever?",
            "answer": "Biscuit",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "What instrument does Ben play?",
            "answer": "cello",
            "evidence": ["D1:2 "],
            "category": 1,
        },
        {
            "question": "What car does Ana drive?",
            "adversarial_answer": "a van",
            "evidence": [],
            "category": 5,
        },
    ],
}


@pytest.fixture(scope="module")
def api_url(stack: Stack) -> Iterator[str]:
    """A fresh app on a loopback port (its own lifespan and event loop, in a thread)."""
    from app.config import get_settings
    from app.main import create_app
    from tests.fake_openai import serve

    with serve(create_app(get_settings())) as url:
        yield url.removesuffix("/v1")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_tiny.json"
    path.write_text(json.dumps([CONVERSATION]))
    return path


def details(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["question"]: d for d in report["question_details"]}


def check_shape(report: dict[str, Any], mode: str) -> None:
    assert report["benchmark"] == "locomo"
    assert report["mode"] == mode
    assert (report["conversations"], report["sessions"], report["questions"]) == (1, 2, 3)
    assert report["ks"] == [5, 10]
    assert set(report["results"]) == {"5", "10"}
    for row in report["results"].values():
        assert row["questions"] == 3
        assert set(row["by_category"]) == {"1", "2", "3", "4"}
        assert row["by_category"]["4"]["questions"] == 2
        assert row["context_words"] > 0
        assert row["latency_ms"]["client"]["p50"] > 0
        assert row["latency_ms"]["server"]["p95"] is not None
    assert report["ingest"]["items"] == 5
    assert report["ingest"]["seconds"] > 0
    assert report["units"]["active"] > 0
    assert {"cores", "memory_gb", "python"} <= report["machine"].keys()
    json.dumps(report)


async def test_product_run_ingests_distils_and_scores(api_url: str, data: Path, worker: Any) -> None:
    options = Options(url=api_url, api_key=ADMIN_KEY, data=data, ks=(5, 10), keep_banks=True, command="test")
    report = await run_eval(options)

    check_shape(report, "product")
    assert report["ingest"]["unit"] == "events"
    assert report["bank_config"]["distill_every_n_turns"] == 1000
    assert report["distill_wait_seconds"] > 0
    by_question = details(report)
    lisbon = by_question["Which city did Ben move to?"]
    assert lisbon["results"]["10"]["recall"] == 1.0
    assert "D2:1" in lisbon["results"]["10"]["dia_ids"]
    assert report["results"]["10"]["recall"] >= 2 / 3

    # What the harness left behind, seen through the same public API.
    bank = report["per_conversation"][0]["bank_id"]
    async with httpx.AsyncClient(
        base_url=api_url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    ) as client:
        sessions = (await client.get(f"/v1/banks/{bank}/sessions")).json()["sessions"]
        assert {(s["session_id"], s["last_seq"], s["distilled_seq"]) for s in sessions} == {
            ("session_1", 3, 3),
            ("session_2", 2, 2),
        }
        events = (await client.get(f"/v1/banks/{bank}/sessions/session_1/events")).json()["events"]
        assert [e["external_id"] for e in events] == ["D1:1", "D1:2", "D1:3"]
        assert [e["speaker"] for e in events] == ["Ana", "Ben", "Ana"]
        assert {e["role"] for e in events} == {"user"}
        assert events[0]["occurred_at"].startswith("2023-05-08T13:56:00")
        assert events[2]["content"] == "Here he is at the beach. (image: a photo of a dog running on a beach)"
        pending = (await client.get(f"/v1/banks/{bank}/memories", params={"status": "pending"})).json()
        assert pending["memories"] == []
        assert (await client.delete(f"/v1/banks/{bank}")).status_code == 204


def test_dense_baseline_from_the_command_line(
    api_url: str, data: Path, tmp_path: Path, worker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    out = tmp_path / "dense.json"
    argv = ["eval", "locomo", "--url", api_url, "--api-key", ADMIN_KEY, "--data", str(data)]
    assert main([*argv, "--k", "5,10", "--baseline", "dense", "--out", str(out), "--concurrency", "2"]) == 0
    printed = capsys.readouterr().out
    assert "LoCoMo retrieval (dense)" in printed
    assert "single-hop" in printed

    report = json.loads(out.read_text())
    check_shape(report, "dense")
    assert report["ingest"]["unit"] == "units"
    assert report["units"]["active"] == 5  # one unit per raw turn, none merged away
    assert report["query_settings"]["weights"]["keyword"] == 0
    # Five units, top_k 10, min_score 0: every evidence turn comes back.
    assert report["results"]["10"]["recall"] == 1.0
    assert report["results"]["10"]["units_returned"] == 5
    lisbon = details(report)["Which city did Ben move to?"]
    assert lisbon["results"]["5"]["dia_ids"][0] == "D2:1"  # the semantic channel puts it first
    conversation = report["per_conversation"][0]
    assert conversation["bank_id"].startswith("locomo-tiny-1-")
    assert conversation["bank_kept"] is False  # deleted after the run
    auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
    assert httpx.get(f"{api_url}/v1/banks/{conversation['bank_id']}", headers=auth).status_code == 404

    assert main(["eval", "locomo", "--compare", str(out), str(out)]) == 0
    assert "recall@10 ratio A/B = 1.000" in capsys.readouterr().out


async def test_a_wrong_key_or_url_is_a_clear_error(api_url: str, data: Path) -> None:
    with pytest.raises(EvalError, match="API key was refused"):
        await run_eval(Options(url=api_url, api_key="wrong-key", data=data))
    with pytest.raises(EvalError, match=r"POST /v1/banks answered 404"):
        await run_eval(Options(url=f"{api_url}/nothing-here", api_key=ADMIN_KEY, data=data))
