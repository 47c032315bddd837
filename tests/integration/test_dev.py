"""`hindsight dev` (what `make up` runs): the whole embedded stack, and a clean stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from app.embedded import free_port
from tests.conftest import ROOT


def _start(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    with open(data_dir.parent / "dev.out", "ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.cli",
                "dev",
                "--port",
                str(port),
                "--data-dir",
                str(data_dir),
            ],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _wait_ready(proc: subprocess.Popen[bytes], data_dir: Path) -> dict[str, str]:
    deadline = time.monotonic() + 120
    dev_json = data_dir / "dev.json"
    while True:
        assert proc.poll() is None, (data_dir.parent / "dev.out").read_text()
        assert time.monotonic() < deadline, "hindsight dev did not become ready"
        if dev_json.exists():
            info: dict[str, str] = json.loads(dev_json.read_text())
            ready = httpx.get(f"{info['url']}/readyz", timeout=5)
            if ready.status_code == 200:
                return info
        time.sleep(0.5)


def _stop(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    family = psutil.Process(proc.pid).children(recursive=True)
    assert len(family) >= 5  # postgres, redis, api, worker, beat
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(90) == 0
    return family


def test_dev_serves_the_stack_keeps_data_and_stops_cleanly(tmp_path: Path) -> None:
    data_dir = tmp_path / "hindsight"
    port = free_port()
    proc = _start(data_dir, port)
    try:
        info = _wait_ready(proc, data_dir)
        assert set(info) == {"url", "api_key", "database_url", "redis_url"}
        assert httpx.get(f"{info['url']}/docs", timeout=5).status_code == 200
        headers = {"Authorization": f"Bearer {info['api_key']}"}
        created = httpx.post(f"{info['url']}/v1/banks", json={"bank_id": "kept"}, headers=headers)
        assert created.status_code == 201
        family = _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not (data_dir / "dev.json").exists()

    proc = _start(data_dir, port)  # data and the dev key persist across restarts
    try:
        again = _wait_ready(proc, data_dir)
        assert again["api_key"] == info["api_key"]
        bank = httpx.get(
            f"{again['url']}/v1/banks/kept", headers={"Authorization": f"Bearer {again['api_key']}"}
        )
        assert bank.status_code == 200
        family = _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
