"""The relevance floor, measured: off-topic queries (English and Chinese, generated from topic and
question templates, none written against the bank) asked of banks that hold the seeds' laptop-budget
conversation, at several `min_similarity` values; the share answered with nothing, and the share of
on-topic questions still answered (the scenario's facts in the top 5). The same topics asked with a time
word (tonight, yesterday, last week, 今晚, 昨天, 上周 …) must answer nothing too — a time phrase narrows
the window, it admits nothing — while questions about a time alone ("what did we talk about today?",
我今天说了什么) answer with that window's units.

    python -m bench.offtopic --url http://127.0.0.1:8000 --api-key KEY [--floors 0,0.2,0.25,0.3,0.35]

The first row of each language is the bank's default (no `min_similarity` sent: 0.3 for English,
`min_similarity_cjk` 1 for Chinese); the others send `min_similarity`, which sets the bar for both.

Against a running service (`hindsight dev`); each run creates two fresh banks.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from app import seeds

# Topics and question forms chosen for being unrelated to shopping, budgets and orders as a whole (the
# lists were fixed before any run; every combination is asked, none is dropped after a run).
TOPICS_EN = [
    "the weather on Mars",
    "the capital of Peru",
    "photosynthesis",
    "the rules of cricket",
    "black holes",
    "the French Revolution",
    "sourdough bread",
    "whale migration",
    "quantum entanglement",
    "the Great Wall of China",
    "volcanoes in Iceland",
    "the history of jazz",
]
FORMS_EN = ["What do you know about {}?", "Tell me about {}.", "Can you explain {} to me?"]
TOPICS_ZH = [
    "火星上的天气",
    "秘鲁的首都",
    "光合作用",
    "板球的规则",
    "黑洞",
    "法国大革命",
    "酸面包的做法",
    "鲸鱼的迁徙",
    "量子纠缠",
    "长城的历史",
    "冰岛的火山",
    "爵士乐的历史",
]
FORMS_ZH = ["你知道{}吗？", "给我讲讲{}。", "能解释一下{}吗？"]


# The time words of the off-topic forms: windows that hold the seeds' units (said just now: today,
# tonight, this week, the past 3 days) and windows that do not (yesterday, last week).
TIMED_FORMS_EN = [
    "What do you know about {} today?",
    "Tell me about {} tonight.",
    "What did we say about {} yesterday?",
    "Anything about {} from last week?",
    "Can you explain {} from this week?",
    "What did I say about {} in the past 3 days?",
]
TIMED_FORMS_ZH = [
    "你今天知道{}吗？",
    "今晚给我讲讲{}。",
    "我们昨天说{}了吗？",
    "上周聊过{}吗？",
    "这周能解释一下{}吗？",
    "过去三天我说过{}吗？",
]
# Questions about a time alone: each window holds the seeds' units (said just now).
TIME_ONLY = {
    "en": [
        "What did we talk about today?",
        "What did I say in the past 3 days?",
        "Anything from this week?",
        "What did we discuss in the last 24 hours?",
    ],
    "zh": ["我今天说了什么？", "过去三天我们聊了什么？", "这周有什么？", "过去24小时我们讨论了什么？"],
}


def off_topic_queries() -> dict[str, list[str]]:
    return {
        "en": [form.format(topic) for topic, form in itertools.product(TOPICS_EN, FORMS_EN)],
        "zh": [form.format(topic) for topic, form in itertools.product(TOPICS_ZH, FORMS_ZH)],
    }


def timed_off_topic_queries() -> dict[str, list[str]]:
    """The off-topic topics, each with a time word (the forms cycle through the topics)."""
    return {
        lang: [forms[i % len(forms)].format(topic) for i, topic in enumerate(topics)]
        for lang, topics, forms in (("en", TOPICS_EN, TIMED_FORMS_EN), ("zh", TOPICS_ZH, TIMED_FORMS_ZH))
    }


async def _bank(client: httpx.AsyncClient, lang: str) -> str:
    bank = f"offtopic-{lang}-{uuid.uuid4().hex[:8]}"
    (await client.post("/v1/banks", json={"bank_id": bank})).raise_for_status()
    url = f"/v1/banks/{bank}/sessions/{seeds.SESSION_ID}"
    (await client.post(f"{url}/events", json={"events": seeds.events(lang)})).raise_for_status()
    distilled = await client.post(f"{url}/distill", params={"wait": "true"})
    distilled.raise_for_status()
    if not (distilled.json().get("job") or {}).get("searchable"):
        raise SystemExit(f"the {lang} bank was not searchable in time: {distilled.text}")
    return bank


async def _ask(client: httpx.AsyncClient, bank: str, query: str, floor: float | None) -> dict[str, Any]:
    """`floor` None: the bank's default bars."""
    body: dict[str, Any] = {"query": query, "top_k": 5, "explain": True}
    if floor is not None:
        body["min_similarity"] = floor
    response = await client.post(f"/v1/banks/{bank}/query", json=body)
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


def _best_similarity(result: dict[str, Any]) -> float:
    scores = [(m.get("scores") or {}).get("semantic") for m in result["memories"]]
    return max((s["score"] for s in scores if s), default=0.0)


async def measure(client: httpx.AsyncClient, floors: list[float | None]) -> dict[str, Any]:
    banks = {lang: await _bank(client, lang) for lang in ("en", "zh")}
    queries = off_topic_queries()
    timed = timed_off_topic_queries()
    rows: list[dict[str, Any]] = []
    for floor in floors:
        for lang, bank in banks.items():
            off = [await _ask(client, bank, q, floor) for q in queries[lang]]
            on = [(await _ask(client, bank, q, floor), want) for q, want in seeds.ON_TOPIC[lang]]
            off_timed = [await _ask(client, bank, q, floor) for q in timed[lang]]
            time_only = [await _ask(client, bank, q, floor) for q in TIME_ONLY[lang]]
            rows.append(
                {
                    "min_similarity": floor,
                    "lang": lang,
                    "off_topic": len(off),
                    "off_topic_empty": sum(not r["memories"] for r in off),
                    "off_topic_units": sum(len(r["memories"]) for r in off),
                    "on_topic": len(on),
                    "on_topic_answered": sum(
                        any(want in m["content"] for m in r["memories"]) for r, want in on
                    ),
                    "timed_off_topic": len(off_timed),
                    "timed_off_topic_empty": sum(not r["memories"] for r in off_timed),
                    "time_only": len(time_only),
                    "time_only_answered": sum(bool(r["memories"]) for r in time_only),
                }
            )
    unfiltered = {
        lang: [_best_similarity(await _ask(client, bank, q, 0.0)) for q in queries[lang]]
        for lang, bank in banks.items()
    }
    similarity = {
        lang: {"median": statistics.median(v), "max": max(v), "over_0.3": sum(s >= 0.3 for s in v)}
        for lang, v in unfiltered.items()
    }
    return {
        "rows": rows,
        "off_topic_best_similarity": similarity,
        "queries": queries,
        "timed_queries": timed,
        "time_only_queries": TIME_ONLY,
    }


def _table(report: dict[str, Any]) -> str:
    lines = [
        "| min_similarity | lang | off-topic answered with nothing | on-topic answered (top 5) "
        "| off-topic with a time word, nothing | time-only answered |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        share = r["off_topic_empty"] / r["off_topic"]
        floor = "bank default" if r["min_similarity"] is None else f"{r['min_similarity']:g}"
        lines.append(
            f"| {floor} | {r['lang']} | {r['off_topic_empty']}/{r['off_topic']} ({share:.0%}) "
            f"| {r['on_topic_answered']}/{r['on_topic']} "
            f"| {r['timed_off_topic_empty']}/{r['timed_off_topic']} "
            f"| {r['time_only_answered']}/{r['time_only']} |"
        )
    return "\n".join(lines)


async def _main(args: argparse.Namespace) -> int:
    floors: list[float | None] = [None, *(float(x) for x in args.floors.split(",") if x.strip())]
    headers = {"Authorization": f"Bearer {args.api_key}"}
    async with httpx.AsyncClient(base_url=args.url, headers=headers, timeout=120) as client:
        report = await measure(client, floors)
    print(_table(report))
    print("best semantic similarity of off-topic queries, floor off:", report["off_topic_best_similarity"])
    if args.out:
        await asyncio.to_thread(Path(args.out).write_text, json.dumps(report, ensure_ascii=False, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.offtopic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default: %(default)s)")
    parser.add_argument("--api-key", required=True, help="the admin key (`make up` prints it)")
    parser.add_argument(
        "--floors",
        default="0,0.2,0.25,0.3,0.35",
        help="min_similarity values to try besides the bank's default (default: %(default)s)",
    )
    parser.add_argument("--out", default=None, help="write the JSON report here")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
