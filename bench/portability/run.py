"""The run: per size, seed a bank, export it over HTTP to a file, import the file under a new id, each
timed with the API's RSS sampled; the JSON report and the docs section (`python -m bench.portability`)."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import portability
from bench.harness import cli, docs, measure, services
from bench.harness.measure import log
from bench.portability.seed import count_units, seed_bank

SECTION = "Bank export and import"
WARM_UP_UNITS = 1000
CHUNK = 256 * 1024


class RssSampler:
    """The peak RSS of a process while a block runs, sampled every `interval` s in a thread."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval = pid, interval
        self.before = self.peak = measure.rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, measure.rss_mib(self.pid))

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, measure.rss_mib(self.pid))

    def result(self) -> dict[str, float]:
        return {
            "rss_before_mib": self.before,
            "rss_peak_mib": self.peak,
            "rss_growth_mib": round(self.peak - self.before, 1),
        }


def timed(pid: int, work: Callable[[], int]) -> dict[str, Any]:
    with RssSampler(pid) as rss:
        start = time.perf_counter()
        size = work()
        wall = time.perf_counter() - start
    return {"wall_s": round(wall, 2), "bytes": size, **rss.result()}


def export_to(base: str, key: str, bank_id: str, path: Path) -> int:
    import httpx

    size = 0
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.stream("GET", f"{base}/v1/banks/{bank_id}/export", headers=headers, timeout=None) as response:
        response.raise_for_status()
        with open(path, "wb") as out:
            for chunk in response.iter_bytes(CHUNK):
                out.write(chunk)
                size += len(chunk)
    return size


def import_from(base: str, key: str, bank_id: str, path: Path) -> int:
    import httpx

    def chunks() -> Iterator[bytes]:
        with open(path, "rb") as source:
            while chunk := source.read(CHUNK):
                yield chunk

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    response = httpx.post(
        f"{base}/v1/banks/{bank_id}/import", content=chunks(), headers=headers, timeout=None
    )
    if response.status_code != 201:
        raise RuntimeError(f"import failed: {response.status_code} {response.text[:500]}")
    return path.stat().st_size


def _summary(runs: list[dict[str, Any]], lines: int) -> dict[str, Any]:
    """Median rate and RSS growth of the repeats, the largest growth too, and every run."""
    walls = sorted(r["wall_s"] for r in runs)
    growth = sorted(r["rss_growth_mib"] for r in runs)
    wall = walls[len(walls) // 2]
    return {
        "lines_per_s": round(lines / wall),
        "mib_per_s": round(runs[0]["bytes"] / 2**20 / wall, 1),
        "bytes": runs[0]["bytes"],
        "rss_growth_mib": growth[len(growth) // 2],
        "rss_growth_max_mib": growth[-1],
        "rss_before_mib": runs[0]["rss_before_mib"],
        "runs": runs,
    }


def round_trip(s: services.Stack, base: str, pid: int, key: str, units: int, repeat: int) -> dict[str, Any]:
    """Seed a bank of `units`, export it `repeat` times and import the export `repeat` times (each under
    a new id)."""
    bank = f"bench-export-{uuid.uuid4().hex[:8]}"
    seeded = asyncio.run(seed_bank(s.database_url, bank, units))
    path = s.work / f"{bank}.ndjson"
    exports = [timed(pid, lambda: export_to(base, key, bank, path)) for _ in range(repeat)]
    lines = sum(1 for _ in open(path, "rb"))
    copies = [f"bench-import-{uuid.uuid4().hex[:8]}" for _ in range(repeat)]
    imports = [timed(pid, functools.partial(import_from, base, key, copy, path)) for copy in copies]
    check = asyncio.run(count_units(s.database_url, copies[-1]))
    exported, imported = _summary(exports, lines), _summary(imports, lines)
    log(
        f"  {units:,} units, {lines:,} lines: export {exported['lines_per_s']:,} lines/s, "
        f"import {imported['lines_per_s']:,} lines/s (medians of {repeat})"
    )
    return {"seeded": seeded, "lines": lines, "export": exported, "import": imported, "imported_units": check}


def docs_section(report: dict[str, Any]) -> str:
    m, runs = report["machine"], report["results"]
    lines = docs.section_head(
        SECTION,
        "Target (issue 20): an export of a 50,000-unit bank streams with flat memory: the API's RSS "
        "growth bounded and not growing with the bank's size.",
        report["command"],
        f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
        f"{m['python']}; embedded PostgreSQL and Redis; one `hindsight api` process; the client (httpx, "
        "streaming both ways through a file) on the same machine. The machine was shared with other "
        f"work (CPU {report['conditions'].get('machine_cpu_percent', '-')} % busy over the run): rates "
        f"are indicative, memory is not affected. Synthetic banks (see `bench/portability`); a "
        f"{WARM_UP_UNITS:,}-unit bank went through first. Each bank exported and imported "
        f"{report.get('repeat', 1)} times: medians. RSS growth = the API process's peak RSS during a "
        "request minus its RSS just before; its RSS after everything: "
        f"{report.get('api_rss_after_mib', '-')} MiB.",
    )
    table = docs.RunTable(runs, lambda r: f"{r['seeded']['units']:,} units")
    table.each(
        "lines (bank, sessions, events, units, entities, links, relations, history, end)",
        lambda r: f"{r['lines']:,}",
    )
    table.each("export size (MiB)", lambda r: f"{r['export']['bytes'] / 2**20:.1f}")
    table.each(
        "export: lines/s (MiB/s)",
        lambda r: f"**{r['export']['lines_per_s']:,}** ({r['export']['mib_per_s']})",
    )
    table.each(
        "export: API RSS growth, median (largest) (MiB)",
        lambda r: f"**{r['export']['rss_growth_mib']}** ({r['export']['rss_growth_max_mib']})",
    )
    table.each(
        "import: lines/s (MiB/s)",
        lambda r: f"**{r['import']['lines_per_s']:,}** ({r['import']['mib_per_s']})",
    )
    table.each(
        "import: API RSS growth, median (largest) (MiB)",
        lambda r: f"**{r['import']['rss_growth_mib']}** ({r['import']['rss_growth_max_mib']})",
    )
    table.each("units in the imported bank", lambda r: f"{r['imported_units']:,}")
    lines += table.lines
    lines += docs.footer(report, "Raw figures")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.portability", portability.__doc__)
    parser.add_argument("--units", default="5000,50000", help="bank sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="exports and imports per size (medians)")
    args = cli.parse_program(parser, argv, "bench/results/portability.json", (SECTION, docs_section))
    if args is None:
        return 0
    if args.quiet_wait:
        measure.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
    sizes = [int(n) for n in args.units.split(",")]
    key = services.admin_key()
    with services.stack(args.database_url, args.redis_url) as s:
        env = services.service_env(s.database_url, s.redis_url, key)
        with services.api(env, s.work / "api.log") as (base, pid):
            account = measure.CpuAccount(lambda: [pid, *s.pids])
            log(f"warm-up: {WARM_UP_UNITS:,} units")
            round_trip(s, base, pid, key, WARM_UP_UNITS, 1)
            results = [round_trip(s, base, pid, key, n, args.repeat) for n in sizes]
            rss_after = measure.rss_mib(pid)
            conditions = account.result()
    report = {
        "command": cli.command_line("bench.portability", argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": measure.machine(),
        "conditions": conditions,
        "repeat": args.repeat,
        "api_rss_after_mib": rss_after,
        "results": results,
        "out": args.out,
        "notes": [
            "No worker runs: each import's `reembed` job stays queued, so the import figures are the "
            "request alone (validation, id remapping, inserts, one commit).",
        ],
    }
    cli.write_json(args.out, report)
    cli.publish(args, SECTION, docs_section, report)
    return 0
