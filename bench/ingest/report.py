"""The "Ingest" section of docs/benchmark-runs.md, from the JSON report (`--docs-only` rewrites it)."""

from __future__ import annotations

import functools
from typing import Any

from bench.harness import docs

SECTION = "Ingest"
TARGET = {"single_events_per_s": 1000.0, "single_p99_ms": 50.0, "batched_events_per_s": 10_000.0}
CPU_SPLIT = ("api_cpu_percent", "services_cpu_percent", "client_cpu_percent", "other_cpu_percent")
PG_PER_REQUEST = (
    "pg_commits_per_request",
    "pg_rollbacks_per_request",
    "pg_connections_opened_per_1000_requests",
)


def docs_section(report: dict[str, Any]) -> str:
    m, runs = report["machine"], report["results"]
    lines = docs.section_head(
        SECTION,
        f"Targets (benchmark issue, {m['cores']}-core machine): single-event appends with 32 concurrent "
        f"clients ≥ {TARGET['single_events_per_s']:,.0f} events/s with p99 ≤ "
        f"{TARGET['single_p99_ms']:.0f} ms; 100-event batches ≥ "
        f"{TARGET['batched_events_per_s']:,.0f} events/s.",
        report["command"],
        f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
        f"{m['python']}; embedded PostgreSQL (fsync on, synchronous_commit on) and Redis; "
        "`hindsight api` as a child process; the client (aiohttp, HTTP/1.1 keep-alive, one connection "
        "per concurrent caller) runs on the same machine and takes CPU from the server. A bank "
        "key with the `write` scope, an `external_id` on every turn, default bank config (a distillation "
        "job row every 5 undistilled turns of a session; no worker consumes them). "
        f"HINDSIGHT_RATE_LIMIT_PER_SECOND={report['rate_limit']} keeps the per-key limiter on the path "
        "without throttling.",
    )
    table = docs.RunTable(runs, lambda r: f"{r['uvicorn_processes']} uvicorn process(es)")
    table.each(
        "single appends: events/s",
        lambda r: (
            f"**{r['single']['events_per_s']:,}** ({r['single']['events']:,} in {r['single']['wall_s']} s)"
        ),
    )
    table.each(
        "single appends: latency p50 / p95 / p99 (ms)", lambda r: docs.p50_p95_p99(r["single"]["latency_ms"])
    )
    table.each(
        "100-event batches: events/s",
        lambda r: (
            f"**{r['batched']['events_per_s']:,}** ({r['batched']['requests']:,} requests, "
            f"{r['batched']['concurrency']} clients)"
        ),
    )
    table.each(
        "100-event batches: latency p50 / p95 / p99 (ms)",
        lambda r: docs.p50_p95_p99(r["batched"]["latency_ms"]),
    )
    for phase in ("single", "batched"):
        table.each(
            f"CPU during {phase} (% of the machine): API / PostgreSQL+Redis / client / others",
            functools.partial(_cpu_split, phase=phase),
        )
    table.each(
        "PostgreSQL per single append: commits / rollbacks (pre-ping) / connections opened per 1000",
        lambda r: " / ".join(str(r["single"].get("postgres", {}).get(k, "-")) for k in PG_PER_REQUEST),
    )
    table.each(
        "count check (stored / expected events, sessions with seq gaps)",
        lambda r: (
            f"{r['count_check']['stored_events']:,} / {r['count_check']['expected_events']:,}, "
            f"{r['count_check']['sessions_with_gaps']} ({'ok' if r['count_check']['ok'] else 'FAILED'})"
        ),
    )
    table.each("API RSS after the run, all its processes (MiB)", lambda r: str(r["api_rss_mib"]))
    lines += table.lines
    # `hindsight api`'s default: the run without --workers, else the one with a process per core.
    cores = report.get("machine", {}).get("cores")
    default = next(
        (r for r in runs if r["api_workers_flag"] is None),
        next((r for r in runs if r["uvicorn_processes"] == cores), runs[0]),
    )
    s, b = default["single"], default["batched"]
    met_single = (
        s["events_per_s"] >= TARGET["single_events_per_s"]
        and s["latency_ms"]["p99"] <= TARGET["single_p99_ms"]
    )
    met_batch = b["events_per_s"] >= TARGET["batched_events_per_s"]
    lines += [
        "",
        docs.wrap(
            f"With the API's default ({default['uvicorn_processes']} uvicorn process(es), one per core): "
            "single appends "
            f"**target {'met' if met_single else 'not met'}** ({s['events_per_s']:,} events/s, p99 "
            f"{s['latency_ms']['p99']} ms); batches **target {'met' if met_batch else 'not met'}** "
            f"({b['events_per_s']:,} events/s)."
        ),
    ]
    lines += docs.footer(report, "Raw figures")
    return "\n".join(lines)


def _cpu_split(run: docs.Run, phase: str) -> str:
    return " / ".join(str(run[phase]["conditions"].get(k, "-")) for k in CPU_SPLIT)
