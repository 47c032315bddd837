"""`hindsight dev`: the embedded default in the foreground.

Starts PostgreSQL and Redis (embedded), migrates, then runs the API, one worker and beat as child
processes; writes `<data-dir>/dev.json` once the API answers; on Ctrl-C or SIGTERM stops every
child, then Redis, then PostgreSQL, and leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType

from app.embedded import EmbeddedPostgres, EmbeddedRedis, start_postgres, start_redis, stop_process
from app.migrate import upgrade


class _Stop(Exception):
    pass


def _raise_stop(signum: int, _: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def _admin_key(data_dir: Path) -> str:
    """A random dev admin key, made once and kept in the data dir (0600)."""
    path = data_dir / "admin_key"
    if path.exists():
        return path.read_text().strip()
    key = "hs_admin_" + secrets.token_urlsafe(24)
    path.write_text(key)
    path.chmod(0o600)
    return key


def _spawn(verb: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    # Own process group: Ctrl-C reaches only the supervisor, which stops children in order.
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *verb],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the API exited with code {proc.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1) as response:
            if response.status == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s")


def run_dev(port: int, data_dir: Path) -> int:
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = data_dir / "logs"
    logs.mkdir(exist_ok=True)
    dev_json = data_dir / "dev.json"
    dev_json.unlink(missing_ok=True)
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)

    postgres: EmbeddedPostgres | None = None
    redis: EmbeddedRedis | None = None
    children: list[subprocess.Popen[bytes]] = []
    try:
        postgres = start_postgres(data_dir / "pgdata")
        redis = start_redis(data_dir / "redis")
        upgrade(postgres.url())
        admin_key = _admin_key(data_dir)
        env = {
            **os.environ,
            "HINDSIGHT_ENV": "dev",
            "HINDSIGHT_DATABASE_URL": postgres.url(),
            "HINDSIGHT_REDIS_URL": redis.url,
            "HINDSIGHT_ADMIN_KEY": admin_key,
            "HF_HUB_OFFLINE": "1",
        }
        url = f"http://127.0.0.1:{port}"
        api = _spawn(["api", "--host", "127.0.0.1", "--port", str(port)], env, logs / "api.log")
        children.append(api)
        children.append(_spawn(["worker"], env, logs / "worker.log"))
        children.append(
            _spawn(
                ["beat", "--schedule", str(data_dir / "celerybeat-schedule")],
                env,
                logs / "beat.log",
            )
        )
        _wait_http(f"{url}/healthz", api, timeout=60)
        dev_json.write_text(
            json.dumps(
                {
                    "url": url,
                    "api_key": admin_key,
                    "database_url": postgres.url(),
                    "redis_url": redis.url,
                },
                indent=2,
            )
        )
        print(
            f"Hindsight is up at {url}\n  docs:    {url}/docs\n  api key: {admin_key}\n"
            f"  data:    {data_dir} (logs in {logs})\nCtrl-C stops everything.",
            flush=True,
        )
        while True:
            for child in children:
                if child.poll() is not None:
                    print(
                        f"a child process exited with code {child.returncode}; stopping",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
            time.sleep(0.5)
    except _Stop:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for child in reversed(children):  # beat, worker (warm shutdown), then the API
            stop_process(child, signal.SIGTERM, timeout=20)
        if redis is not None:
            redis.stop()
        if postgres is not None:
            postgres.stop()
        dev_json.unlink(missing_ok=True)
        print("Hindsight stopped.", flush=True)
