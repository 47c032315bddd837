"""Measuring: percentiles, the machine's facts, the CPU a run took and whose it was, waiting for a
quiet machine, a process's RSS."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    arr = np.asarray(values, dtype=float)
    return {
        "n": len(values),
        "p50": round(float(np.percentile(arr, 50)), 2),
        "p95": round(float(np.percentile(arr, 95)), 2),
        "p99": round(float(np.percentile(arr, 99)), 2),
        "mean": round(float(arr.mean()), 2),
        "max": round(float(arr.max()), 2),
    }


def machine() -> dict[str, Any]:
    import onnxruntime
    import psutil

    cpu = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
    }


class CpuAccount:
    """CPU the whole machine used from now on, split into ours (the API, its PostgreSQL backends,
    Redis, this process) and other processes', whose work skews the latencies."""

    def __init__(self, ours: Callable[[], list[int]]) -> None:
        self._ours = ours
        self._wall = time.monotonic()
        self._busy = self._machine_busy()
        self._procs = self._own_cpu()

    @staticmethod
    def _machine_busy() -> float:
        import psutil

        t = psutil.cpu_times()
        return float(sum(t) - t.idle - getattr(t, "iowait", 0.0))

    def _own_cpu(self) -> dict[int, float]:
        import psutil

        out: dict[int, float] = {}
        for pid in self._ours():
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                for p in (proc, *proc.children(recursive=True)):
                    with contextlib.suppress(psutil.Error):
                        t = p.cpu_times()
                        out[p.pid] = t.user + t.system
        return out

    def result(self) -> dict[str, float]:
        wall = time.monotonic() - self._wall
        busy = self._machine_busy() - self._busy
        now = self._own_cpu()
        ours = sum(v - self._procs.get(pid, 0.0) for pid, v in now.items())
        capacity = wall * (os.cpu_count() or 1)
        return {
            "run_s": round(wall, 1),
            "machine_cpu_percent": round(100 * busy / capacity, 1),
            "our_cpu_percent": round(100 * ours / capacity, 1),
            "other_cpu_percent": round(max(busy - ours, 0.0) * 100 / capacity, 1),
        }


def wait_for_quiet(max_percent: float, timeout: float) -> dict[str, Any]:
    """Wait (up to `timeout` s) until the machine's CPU use, sampled over 2 s, stays under
    `max_percent` three times in a row: other work on a 2-core machine skews every figure."""
    import psutil

    started, quiet, samples = time.monotonic(), 0, []
    while True:
        samples.append(psutil.cpu_percent(interval=2))
        quiet = quiet + 1 if samples[-1] <= max_percent else 0
        waited = time.monotonic() - started
        if quiet >= 3 or waited >= timeout:
            return {"cpu_percent_before": samples[-3:], "waited_s": round(waited, 1), "quiet": quiet >= 3}
        if len(samples) % 15 == 0:
            log(f"  waiting for a quiet machine: CPU {samples[-1]:.0f} % ({waited:.0f}s)")


def rss_mib(pid: int) -> float:
    import psutil

    return round(psutil.Process(pid).memory_info().rss / 2**20, 1)


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


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its children (a worker's prefork pool)."""
    return sum(process_cpu_s(p) for p in process_tree(pid))
