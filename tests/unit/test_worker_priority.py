"""Queries first: a worker lowers its own CPU priority, and its autogroup's (a `hindsight dev` child
leads a session of its own, and sessions compete as groups)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import os
from pathlib import Path
from worker.priority import lower_cpu_priority
lower_cpu_priority(5)
group = Path("/proc/self/autogroup")
print(os.nice(0), group.read_text().split("nice")[-1].strip() if group.exists() else "-")
"""


def test_a_worker_lowers_its_nice_value_and_its_session_group() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
        start_new_session=True,  # as `hindsight dev` starts it: a session, so an autogroup, of its own
    )
    nice, group = result.stdout.split()
    assert int(nice) == min(19, os.nice(0) + 5)
    if group != "-":  # kernels with autogroups
        assert int(group) >= 5


def test_a_worker_in_someone_elses_session_leaves_its_group_alone() -> None:
    """Started from a shell (or a test), it must not lower the priority of the shell's whole group."""
    group = Path("/proc/self/autogroup")
    before = group.read_text() if group.exists() else None
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(result.stdout.split()[0]) == min(19, os.nice(0) + 5)
    assert (group.read_text() if group.exists() else None) == before
