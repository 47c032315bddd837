"""The "Distillation throughput" section of docs/benchmark-runs.md, from the JSON report (`--docs-only`
rewrites it)."""

from __future__ import annotations

from typing import Any

from bench.distill.conversation import BATCH
from bench.harness import docs

SECTION = "Distillation throughput"
TARGET_EVENTS_PER_S = 150.0


def docs_section(report: dict[str, Any]) -> str:
    m, w, p = report["machine"], report["worker"], report["profile"]
    met = w["events_per_s"] >= TARGET_EVENTS_PER_S
    lines = docs.section_head(
        SECTION,
        f"Target (benchmark issue): ≥ {TARGET_EVENTS_PER_S:.0f} events/s through one worker with the "
        "heuristic distiller and the local embedder.",
        report["command"],
        f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
        f"{m['python']}, embedder on ONNX Runtime {m.get('onnxruntime', '?')}; embedded PostgreSQL and "
        "Redis, `hindsight api` and one "
        f"`hindsight worker` ({_processes(report.get('concurrency', 1))}, queues distill, resolve and "
        "maintenance) as child processes. "
        f"{w['events']:,} events in {w['sessions']} sessions ({report['zh_events']:,} of them Chinese): "
        "LoCoMo's dev-split turns with Chinese sessions mixed in, appended in per-session batches of "
        f"{BATCH} with the default bank config (a job every 5 undistilled turns), each session then "
        "closed (its last turns distilled). The worker was warm (model and dictionaries loaded) before "
        "the clock started.",
    )
    worker = docs.Table("", [""])
    worker.row(
        "events/s, first append → every watermark at the end",
        f"**{w['events_per_s']}** ({w['events']:,} events in {w['distilled_s']} s)",
    )
    worker.row(
        "events/s, first append → no pending unit left (resolution too)",
        f"{w['events_per_s_resolved']} ({w['resolved_s']} s)",
    )
    worker.row("appending alone", f"{w['append_s']} s")
    worker.row("worker CPU per event (until the watermarks)", f"{w['worker_cpu_ms_per_event']} ms")
    worker.row(
        "distillation jobs / units / active units at the end",
        f"{w['final']['jobs']} / {w['final']['units']:,} / {w['final']['active']:,}",
    )
    worker.row("worker RSS (MiB)", str(w["worker_rss_mib"]))
    worker.row(
        "CPU of the machine used by other processes during the run",
        f"{w['conditions']['other_cpu_percent']} %",
    )
    lines += worker.lines
    lines += [
        "",
        docs.wrap(
            f"**Target {'met' if met else 'not met'}**: {w['events_per_s']} events/s "
            f"(≥ {TARGET_EVENTS_PER_S:.0f})."
        ),
        "",
        docs.wrap(
            f"Where the time goes: the same distillation in process, the distill service called directly "
            f"per session under cProfile ({p['events']:,} events → {p['units']:,} units in {p['wall_s']} s, "
            f"{p['events_per_s']} events/s with the profiler on): heuristic distiller "
            f"{p['split_s']['distiller']} s, local embedder {p['split_s']['embedding']} s (a worker thread, "
            f"timed around its awaits), database and the rest {p['split_s']['database_and_rest']} s. Top 10 "
            "by cumulative time of the main thread (event-loop plumbing left out), the embedder's thread "
            "first:"
        ),
        "",
    ]
    top = docs.Table("function", ["calls", "own s", "cumulative s"])
    top.row(
        "`app/providers/embeddings.py LocalEmbedder.embed_sync` (in its worker thread, outside the "
        "profile; timed around the awaits)",
        "",
        "",
        str(p["embedding_s"]),
    )
    for r in p["top_cumulative"][:10]:
        top.row(f"`{r['function']}`", f"{r['calls']:,}", str(r["tottime_s"]), str(r["cumtime_s"]))
    lines += top.lines
    lines += docs.footer(report, "Raw figures and the profile")
    return "\n".join(lines)


def _processes(n: int) -> str:
    return "one process" if n == 1 else f"`--concurrency {n}`: {n} processes"
