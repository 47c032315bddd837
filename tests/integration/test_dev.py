"""`hindsight dev` (what `make up` runs): the whole embedded stack, supervised, and a clean stop."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import psutil

from app.embedded import free_port
from tests.dev_process import dev_child, dev_output, running_dev, wait_dev_ready


def test_dev_serves_the_stack_keeps_data_and_stops_cleanly(tmp_path: Path) -> None:
    data_dir = tmp_path / "hindsight"
    port = free_port()
    with running_dev(data_dir, port) as (_, info):
        assert set(info) == {"url", "api_key", "database_url", "redis_url"}
        assert httpx.get(f"{info['url']}/docs", timeout=5).status_code == 200
        headers = {"Authorization": f"Bearer {info['api_key']}"}
        created = httpx.post(f"{info['url']}/v1/banks", json={"bank_id": "kept"}, headers=headers)
        assert created.status_code == 201
    assert not (data_dir / "dev.json").exists()

    # data and the dev key persist across restarts; a closed terminal (SIGHUP) stops it all as cleanly
    with running_dev(data_dir, port, stop=signal.SIGHUP) as (_, again):
        assert again["api_key"] == info["api_key"]
        bank = httpx.get(
            f"{again['url']}/v1/banks/kept", headers={"Authorization": f"Bearer {again['api_key']}"}
        )
        assert bank.status_code == 200


def _replaced(
    proc: subprocess.Popen[bytes], command: str, victim: psutil.Process, data_dir: Path
) -> psutil.Process:
    """Wait until the supervisor runs a new `command` in place of the killed `victim`."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, dev_output(data_dir).read_text()
        assert time.monotonic() < deadline, f"{command} was not restarted"
        try:
            child = dev_child(proc, command)
        except ValueError:  # none yet (it is between backoff and restart)
            child = None
        if child is not None and child.pid != victim.pid:
            return child
        time.sleep(0.2)


def _memories_of_a_new_session(url: str, headers: dict[str, str], bank: str) -> list[dict[str, object]]:
    assert httpx.post(f"{url}/v1/banks", json={"bank_id": bank}, headers=headers).status_code == 201
    turns = [
        {"role": "user", "content": "I moved to Lisbon last spring and I work as a pharmacist."},
        {"role": "assistant", "content": "Noted."},
    ]
    appended = httpx.post(f"{url}/v1/banks/{bank}/sessions/s/events", json={"events": turns}, headers=headers)
    assert appended.status_code == 202, appended.text
    closed = httpx.post(f"{url}/v1/banks/{bank}/sessions/s/close", headers=headers)
    assert closed.status_code == 200, closed.text
    deadline = time.monotonic() + 90
    while True:
        job = httpx.get(f"{url}/v1/jobs/{closed.json()['job_id']}", headers=headers).json()
        memories: list[dict[str, object]] = httpx.get(
            f"{url}/v1/banks/{bank}/memories", headers=headers
        ).json()["memories"]
        if job["status"] == "succeeded" and memories and all(m["status"] == "active" for m in memories):
            return memories
        assert job["status"] != "failed", job
        assert time.monotonic() < deadline, (job, memories)
        time.sleep(0.5)


def _said(data_dir: Path, line: str, within: float = 30.0) -> str:
    """The dev console's output once it says `line` (or as it is when `within` seconds have passed)."""
    deadline = time.monotonic() + within
    output = dev_output(data_dir).read_text()
    while line not in output and time.monotonic() < deadline:
        time.sleep(0.2)
        output = dev_output(data_dir).read_text()
    return output


def test_dev_restarts_a_killed_worker_and_redis_and_stops_only_when_asked(tmp_path: Path) -> None:
    """kill -9 of a worker or of Redis is a restart, said so on the console, never a stop."""
    data_dir = tmp_path / "hindsight"
    with running_dev(data_dir, free_port()) as (proc, info):
        headers = {"Authorization": f"Bearer {info['api_key']}"}
        for name, command in (("worker realtime", "--name realtime@"), ("redis", "redis-server")):
            victim = dev_child(proc, command)
            victim.kill()
            victim.wait(10)
            _replaced(proc, command, victim, data_dir)
            wait_dev_ready(proc, data_dir)  # database, Redis and a worker heartbeat again
            # (the supervisor says "restarted" once its launch returns, which may be after the new process
            # is up and ready: the line is waited for)
            output = _said(data_dir, f"{name} restarted (pid ")
            assert f"{name} exited with code -9; restarting in" in output
            assert f"{name} restarted (pid " in output
            # The restarted stack distils and resolves: the broker, the worker and the API all work.
            bank = f"after-{name.replace(' ', '-')}"
            assert _memories_of_a_new_session(info["url"], headers, bank)
        assert proc.poll() is None
    assert not (data_dir / "dev.json").exists()
