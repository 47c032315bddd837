"""Queries first: a worker process runs at a lower CPU priority than the API, so on shared cores a
query or an append waits less behind a distillation (docs/guides/throughput.md)."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def lower_cpu_priority(niceness: int) -> None:
    """Add `niceness` to this process's nice value (its pool's processes inherit it), and, when it
    leads a session of its own (a `hindsight dev` child does), to its autogroup's: with the kernel's
    autogroups on, sessions compete as groups, so its own nice value alone would weigh only within
    its group. Never the autogroup of a session it merely belongs to (a shell's: that would slow the
    shell and everything in it). Raising a nice value needs no privilege; in a container,
    `cpu_shares` weighs the containers."""
    if niceness <= 0:
        return
    value = os.nice(niceness)
    autogroup = Path("/proc/self/autogroup")
    if os.getsid(0) != os.getpid():
        log.info("worker CPU priority lowered: nice %d", value)
        return
    with contextlib.suppress(OSError, ValueError):
        current = int(autogroup.read_text().split("nice")[-1])
        autogroup.write_text(str(min(19, current + niceness)))
    log.info("worker CPU priority lowered: nice %d", value)
