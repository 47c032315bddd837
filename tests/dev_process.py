"""`hindsight dev` as a test's own process: its own PostgreSQL, Redis, API, workers and beat in a data
dir of the test's, so a test may kill any of them without the rest of the suite noticing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil

from tests.conftest import ROOT


def start_dev(data_dir: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    """Start `hindsight dev`; its output goes to `<data_dir>/../dev.out`. `env`: extra variables."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    with open(dev_output(data_dir), "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", "dev", "--port", str(port), "--data-dir", str(data_dir)],
            env={**clean, **env},
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def dev_output(data_dir: Path) -> Path:
    return data_dir.parent / "dev.out"


def wait_dev_ready(proc: subprocess.Popen[bytes], data_dir: Path, within: float = 120) -> dict[str, str]:
    """Wait for `dev.json` and a 200 from /readyz; return dev.json (url, api_key, database_url, redis_url)."""
    deadline = time.monotonic() + within
    dev_json = data_dir / "dev.json"
    while True:
        assert proc.poll() is None, dev_output(data_dir).read_text()
        assert time.monotonic() < deadline, "hindsight dev did not become ready"
        if dev_json.exists():
            info: dict[str, str] = json.loads(dev_json.read_text())
            try:
                if httpx.get(f"{info['url']}/readyz", timeout=5).status_code == 200:
                    return info
            except httpx.TransportError:  # the API is restarting
                pass
        time.sleep(0.5)


def _command_line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):  # exited: not a running child
        return ""


def dev_child(proc: subprocess.Popen[bytes], command: str) -> psutil.Process:
    """The supervisor's one running direct child whose command line contains `command`."""
    [child] = [c for c in psutil.Process(proc.pid).children() if command in _command_line(c)]
    return child


def stop_dev(proc: subprocess.Popen[bytes], how: signal.Signals = signal.SIGTERM) -> list[psutil.Process]:
    """Signal the supervisor (SIGTERM as Ctrl-C would; SIGHUP as a closed terminal), expect exit code 0;
    return the processes it had."""
    family = psutil.Process(proc.pid).children(recursive=True)
    assert len(family) >= 6  # postgres, redis, api, two workers, beat
    proc.send_signal(how)
    assert proc.wait(90) == 0
    return family


def left_behind(family: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@contextmanager
def running_dev(
    data_dir: Path, port: int, stop: signal.Signals = signal.SIGTERM
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, str]]]:
    """`hindsight dev` started and ready (the process, dev.json); when the block ends it is stopped by
    `stop` (exit code 0) and none of its processes is left running; killed if the block failed."""
    proc = start_dev(data_dir, port)
    try:
        info = wait_dev_ready(proc, data_dir)
        yield proc, info
        family = stop_dev(proc, stop)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not left_behind(family)
