"""The run: the conversation, through one worker, then in process under cProfile, on one stack; the
JSON report and the docs section (`python -m bench.distill`)."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from pathlib import Path

from bench import distill
from bench.distill import llm_cost
from bench.distill.conversation import conversation
from bench.distill.in_process import profile_in_process
from bench.distill.report import SECTION, TARGET_EVENTS_PER_S, docs_section
from bench.distill.worker import through_worker
from bench.harness import cli, measure, services
from bench.harness.measure import log


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.distill", distill.__doc__)
    parser.add_argument("--events", type=int, default=2500, help="events distilled by the worker")
    parser.add_argument("--zh-share", type=float, default=0.15, help="share of Chinese events")
    parser.add_argument("--profile-events", type=int, default=1000, help="events of the in-process profile")
    parser.add_argument("--top", type=int, default=25, help="profile rows kept in the JSON")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--embedding-model",
        default=services.MODEL,
        help="the local model (all-MiniLM-L6-v2, or all-MiniLM-L6-v2-int8 for its int8 quantisation)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="the worker's processes (`--concurrency`; `hindsight dev`'s realtime pool runs 2)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the worker")
    parser.add_argument(
        "--distiller",
        choices=("heuristic", "llm"),
        default="heuristic",
        help="llm: LLM calls and tokens per 100 events against the stand-in server "
        "(bench/distill/llm_cost.py)",
    )
    parser.add_argument("--llm-events", type=int, default=2080, help="LoCoMo dev turns of the llm run")
    parser.add_argument("--locomo", type=Path, default=services.LOCOMO, help="the LoCoMo dev split")
    parser.add_argument("--every", default="5", help="llm: distill_every_n_turns values, comma-separated")
    args = cli.parse_program(parser, argv, "bench/results/distill.json", (SECTION, docs_section))
    if args is None:
        return 0
    if args.distiller == "llm":
        return _llm_cost(args, argv)
    sessions = conversation(args.events, args.zh_share, args.seed)
    zh_events = sum(len(t) for sid, t in sessions if sid.startswith("zh-"))
    profiled = [(f"p-{sid}", t) for sid, t in conversation(args.profile_events, args.zh_share, args.seed + 1)]
    with services.stack(args.database_url, args.redis_url) as s:
        worker = through_worker(s, sessions, args)
        log(
            f"  {worker['events']:,} events distilled in {worker['distilled_s']} s: "
            f"{worker['events_per_s']} events/s ({worker['events_per_s_resolved']} with resolution)"
        )
        log(f"  profiling {args.profile_events:,} events in process …")
        profile = asyncio.run(profile_in_process(s, profiled, args.top, args.embedding_model))
    report = {
        "command": cli.command_line("bench.distill", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": measure.machine(),
        "target_events_per_s": TARGET_EVENTS_PER_S,
        "embedding_model": args.embedding_model,
        "concurrency": args.concurrency,
        "zh_events": zh_events,
        "out": args.out,
        "notes": [],
        "worker": worker,
        "profile": profile,
    }
    cli.write_json(args.out, report)
    print(
        f"one worker: {worker['events_per_s']} events/s to the watermark "
        f"({worker['events_per_s_resolved']} until resolved); in process under cProfile "
        f"{profile['events_per_s']} events/s, split {profile['split_s']}"
    )
    for r in profile["top_cumulative"][:10]:
        print(f"  {r['cumtime_s']:>8} s  {r['calls']:>8}  {r['function']}")
    cli.publish(args, SECTION, docs_section, report)
    return 0


def _llm_cost(args: argparse.Namespace, argv: list[str] | None) -> int:
    """The `--distiller llm` run: its JSON report (no docs section: the lead adds its figures)."""
    everies = [int(n) for n in args.every.split(",")]
    with services.stack(args.database_url, args.redis_url) as s:
        rows = llm_cost.run(s, args.locomo, args.llm_events, everies)
    out = args.out if args.out != "bench/results/distill.json" else "bench/results/distill_llm.json"
    report = {
        "command": cli.command_line("bench.distill", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": measure.machine(),
        "note": llm_cost.__doc__,
        "rows": rows,
    }
    cli.write_json(out, report)
    print("dataset      every  events  calls/100  prompt/100  completion/100  tokens/100")
    for r in rows:
        print(
            f"{r['dataset']:<12} {r['distill_every_n_turns']:>5} {r['events']:>7}"
            f" {r['calls_per_100_events']:>10}"
            f" {r['prompt_tokens_per_100_events']:>11,} {r['completion_tokens_per_100_events']:>15,}"
            f" {r['tokens_per_100_events']:>11,}"
        )
    return 0
