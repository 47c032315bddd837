"""The command: the stack (embedded PostgreSQL and Redis, `hindsight api`, one `hindsight worker`),
every selected case in both modes, the table per half × language × mode, the JSON report."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from bench import truth
from bench.harness import cli, measure, services
from bench.harness.measure import log
from bench.truth import report
from bench.truth.runner import run_all
from bench.truth.suite import MODES, load, select


async def _measure(base: str, key: str, cases: list[Any], modes: list[str], concurrency: int) -> list[Any]:
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=concurrency * 2)
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120, limits=limits) as client:
        return await run_all(client, cases, modes, concurrency)


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.truth", truth.__doc__)
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="all")
    parser.add_argument("--files", default="*", help="files whose stem matches (fresh_*)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma list (default: %(default)s)")
    parser.add_argument("--json", default=None, help="write the JSON report here")
    parser.add_argument("--show-failures", action="store_true", help="print the failing dev cases")
    parser.add_argument("--concurrency", type=int, default=8, help="banks run at once")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="the worker's processes")
    parser.add_argument("--api-workers", type=int, default=None, help="`hindsight api --workers`")
    parser.add_argument("--database-url", default=None, help="a migrated database (default: embedded)")
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    everything = load(files=args.files)
    cases = select(everything, args.split)
    modes = [m for m in args.modes.split(",") if m]
    print(report.split_counts(everything))
    started = time.perf_counter()
    with services.stack(args.database_url, args.redis_url) as s:
        key = "bench-admin-" + uuid.uuid4().hex
        env = services.service_env(
            s.database_url,
            s.redis_url,
            key,
            HINDSIGHT_RATE_LIMIT_PER_SECOND="100000",
            HINDSIGHT_RATE_LIMIT_BURST="100000",
        )
        worker_argv = ["worker", "--name", "bench-truth@%h", "--concurrency", str(args.worker_concurrency)]
        with (
            services.api(env, s.work / "api.log", workers=args.api_workers) as (base, _),
            services.child(worker_argv, env, s.work / "worker.log"),
        ):
            log(f"running {len(cases)} cases × {len(modes)} modes, {args.concurrency} banks at a time …")
            outcomes = asyncio.run(_measure(base, key, cases, modes, args.concurrency))
    rows = report.summarise(outcomes)
    print(report.table(rows))
    print(report.by_kind(outcomes))
    print(report.false_supersede_reasons(outcomes))
    if args.show_failures:
        print(report.failures(cases, outcomes))
    if args.json:
        cli.write_json(
            args.json,
            {
                "command": cli.command_line("bench.truth", argv),
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": measure.machine(),
                "wall_s": round(time.perf_counter() - started, 1),
                "split": args.split,
                "cases": len(cases),
                "rows": rows,
                "outcomes": report.public(outcomes),
            },
        )
        log(f"wrote {args.json}")
    return 0
