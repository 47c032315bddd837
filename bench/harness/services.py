"""The services a benchmark runs against: PostgreSQL and Redis (embedded in a temporary directory
unless URLs are given), and `hindsight api` / `hindsight worker` / `hindsight dev` as child
processes of this one."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness.measure import log

ROOT = Path(__file__).resolve().parents[2]
MODEL, DIM = "all-MiniLM-L6-v2-int8", 384  # the local embedder the services run with: the default
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"  # realistic conversation turns


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


def admin_key() -> str:
    """Make a fresh admin key for the services a benchmark starts."""
    return "bench-admin-" + uuid.uuid4().hex


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
def child(
    argv: list[str], env: dict[str, str], log_path: Path, profile: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m app.cli <argv>` (the `hindsight` console script) as a child process; with `profile`,
    under pyinstrument, which writes its text report there when the process ends (SIGTERM: uvicorn
    shuts down cleanly and returns)."""
    from app.embedded import stop_process

    profiler = ["-m", "pyinstrument", "-r", "text", "-o", str(profile)] if profile else []
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, *profiler, "-m", "app.cli", *argv],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield proc
    finally:
        # uvicorn re-raises the signal that stopped it; pyinstrument writes its report after a
        # KeyboardInterrupt (SIGINT), not after a death by SIGTERM.
        stop_process(proc, signal.SIGINT if profile else signal.SIGTERM, timeout=300 if profile else 30)


@contextlib.contextmanager
def api(
    env: dict[str, str], log_path: Path, workers: int | None = None, profile: Path | None = None
) -> Iterator[tuple[str, int]]:
    """`hindsight api` with its own defaults (or `--workers N`; under pyinstrument with `profile`);
    yields (base URL, pid)."""
    import httpx

    from app.embedded import free_port

    port = free_port()
    argv = ["api", "--host", "127.0.0.1", "--port", str(port)]
    if workers is not None:
        argv += ["--workers", str(workers)]
    with child(argv, env, log_path, profile) as proc:
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


@contextlib.contextmanager
def dev(
    port: int, env: dict[str, str], keep: bool = False, prefix: str = "hindsight-dev-"
) -> Iterator[tuple[dict[str, str], subprocess.Popen[bytes], Path]]:
    """`hindsight dev` in a temporary data dir (removed after, unless `keep`), until it answers
    /readyz (a worker is up); yields (its dev.json: url and api_key, the process, the data dir)."""
    import httpx

    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    out = open(data_dir / "dev.out", "ab")  # closed in the finally below
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "dev", "--port", str(port), "--data-dir", str(data_dir / "data")],
        env=env,
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 180
        info_path = data_dir / "data" / "dev.json"
        while True:
            if proc.poll() is not None:
                raise RuntimeError("hindsight dev exited:\n" + (data_dir / "dev.out").read_text()[-3000:])
            if time.monotonic() > deadline:
                raise TimeoutError("hindsight dev did not become ready within 180 s")
            if info_path.exists():
                info: dict[str, str] = json.loads(info_path.read_text())
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{info['url']}/readyz", timeout=5).status_code == 200:
                        break
            time.sleep(0.5)
        yield info, proc, data_dir
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()
        if keep:
            print(f"data and logs kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
