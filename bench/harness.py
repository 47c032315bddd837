"""What the benchmarks share: the embedded stack in a temporary directory (or the URLs given),
`hindsight api` / `hindsight worker` as child processes, the machine's facts, and writing one
section of docs/benchmarks.md. The measuring helpers (percentiles, CPU accounting,
the quiet-machine wait) are those of bench/query_latency.py, so every report reads the same way."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.query_latency import (  # noqa: F401 (re-exported for the benchmarks)
    DIM,
    DOCS,
    MODEL,
    ROOT,
    CpuAccount,
    log,
    machine,
    percentiles,
    rss_mib,
    wait_for_quiet,
)


@dataclass
class Stack:
    """PostgreSQL and Redis for one run: embedded in `work` unless URLs are given."""

    database_url: str
    redis_url: str
    work: Path
    pids: list[int] = field(default_factory=list)  # our service processes, for CPU accounting


@contextlib.contextmanager
def stack(database_url: str | None, redis_url: str | None) -> Iterator[Stack]:
    from app.embedded import start_postgres, start_redis
    from app.migrate import upgrade

    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-"))
    with contextlib.ExitStack() as services:
        services.callback(shutil.rmtree, work, True)
        pids: list[int] = []
        if not database_url:
            log(f"starting embedded PostgreSQL and Redis in {work}")
            postgres = start_postgres(work / "pgdata")
            services.callback(postgres.stop)
            database_url = postgres.url()
            pids.append(postgres.process.pid)
        if not redis_url:
            redis = start_redis(work / "redis")
            services.callback(redis.stop)
            redis_url = redis.url
            pids.append(redis.process.pid)
        upgrade(database_url)
        yield Stack(database_url, redis_url, work, pids)


def service_env(database_url: str, redis_url: str, admin_key: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "HINDSIGHT_ENV": "test",
        "HINDSIGHT_DATABASE_URL": database_url,
        "HINDSIGHT_REDIS_URL": redis_url,
        "HINDSIGHT_ADMIN_KEY": admin_key,
        "HINDSIGHT_EMBEDDING_PROVIDER": "local",
        "HINDSIGHT_EMBEDDING_MODEL": MODEL,
        "HINDSIGHT_EMBEDDING_DIM": str(DIM),
        "HINDSIGHT_DISTILLER": "heuristic",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        **extra,
    }


@contextlib.contextmanager
def child(argv: list[str], env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m app.cli <argv>` (the `hindsight` console script) as a child process."""
    from app.embedded import stop_process

    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", *argv], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield proc
    finally:
        stop_process(proc, signal.SIGTERM, timeout=30)


@contextlib.contextmanager
def api(env: dict[str, str], log_path: Path, workers: int | None = None) -> Iterator[tuple[str, int]]:
    """`hindsight api` with its own defaults (or `--workers N`); yields (base URL, pid)."""
    import httpx

    from app.embedded import free_port

    port = free_port()
    argv = ["api", "--host", "127.0.0.1", "--port", str(port)]
    if workers is not None:
        argv += ["--workers", str(workers)]
    with child(argv, env, log_path) as proc:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the API exited ({proc.returncode}): {tail(log_path)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the API did not answer within 90 s: {tail(log_path)}")
            time.sleep(0.2)
        yield base, proc.pid


def tail(path: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def process_tree(pid: int) -> list[int]:
    import psutil

    with contextlib.suppress(psutil.Error):
        proc = psutil.Process(pid)
        return [pid, *(c.pid for c in proc.children(recursive=True))]
    return []


def uvicorn_processes(pid: int) -> int:
    """How many processes serve requests under `hindsight api` (1 unless --workers > 1)."""
    import psutil

    with contextlib.suppress(psutil.Error):
        children = psutil.Process(pid).children(recursive=True)
        # uvicorn --workers N: a supervisor plus N workers (plus a multiprocessing tracker).
        serving = [c for c in children if "multiprocessing.resource_tracker" not in " ".join(c.cmdline())]
        return len(serving) or 1
    return 1


def process_cpu_s(pid: int | None = None) -> float:
    import psutil

    t = psutil.Process(pid).cpu_times()
    return float(t.user + t.system)


def write_section(title: str, section: str, keep: str | None = None) -> None:
    """Replace (or append) the `## title` section of docs/benchmarks.md, keeping a hand-written
    `keep` subsection ("### Findings") of the old one."""
    heading = f"## {title}"
    current = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    found = pattern.search(current)
    if found:
        if keep:
            kept = found.group(0).partition(f"\n{keep}")
            section = section.rstrip("\n") + ("\n\n" + keep + kept[2].rstrip("\n") if kept[1] else "")
        updated = current[: found.start()] + section.rstrip("\n") + "\n\n" + current[found.end() :]
    else:
        updated = current.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    DOCS.write_text(updated.rstrip("\n") + "\n")


def footer(report: dict[str, Any], what: str) -> list[str]:
    """A docs section's last lines: the report's notes, then where its raw figures are (`what`)."""
    notes = [
        textwrap.fill(f"- {n}", width=110, subsequent_indent="  ", break_on_hyphens=False)
        for n in report.get("notes") or []
    ]
    return (["", *notes] if notes else []) + ["", f"{what}: `{report['out']}` (written by the run).", ""]


def write_json(path: str | Path, report: dict[str, Any]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return out


def command_line(module: str, argv: list[str] | None) -> str:
    return f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:])
