"""A benchmark's section of docs/benchmark-runs.md: its head, its tables, its footer, and writing it in
place of the old one (keeping the old one's hand-written findings)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from bench.harness.services import ROOT

DOCS = ROOT / "docs" / "benchmark-runs.md"
FINDINGS = "### Findings"  # the hand-written part of a section, kept when it is rewritten

Run = dict[str, Any]  # one run of a report: a size, an API configuration


def wrap(text: str) -> str:
    return textwrap.fill(text, width=110, break_on_hyphens=False)


def section_head(title: str, target: str, command: str, run: str) -> list[str]:
    """A section's first lines: its heading, the target it measures against, the command that made
    it and what the run was (the two paragraphs wrapped)."""
    return [f"## {title}", "", wrap(target), "", "```", command, "```", "", wrap(run), ""]


def p50_p95(p: dict[str, float] | None) -> str:
    """Percentiles (`measure.percentiles`) as a cell: "p50 / p95", "-" without any."""
    return f"{p['p50']} / {p['p95']}" if p else "-"


def p50_p95_p99(p: dict[str, float]) -> str:
    return f"{p['p50']} / {p['p95']} / {p['p99']}"


def _line(cells: Sequence[str]) -> str:
    return "|" + "".join(f" {c} |" if c else " |" for c in cells)


class Table:
    """A Markdown table: a label column, then `columns`; `lines` so far."""

    def __init__(self, label: str, columns: Sequence[str]) -> None:
        self.lines = [_line([label, *columns]), "|---|" + "---|" * len(columns)]

    def row(self, label: str, *cells: str) -> None:
        self.lines.append(_line([label, *cells]))


class RunTable(Table):
    """A table with a column per run of the report, headed `head(run)`."""

    def __init__(self, runs: Sequence[Run], head: Callable[[Run], str], label: str = "") -> None:
        super().__init__(label, [head(r) for r in runs])
        self.runs = runs

    def each(self, label: str, cell: Callable[[Run], str]) -> None:
        """A row: `cell(run)` of every run."""
        self.row(label, *(cell(r) for r in self.runs))


def footer(report: dict[str, Any], what: str) -> list[str]:
    """A docs section's last lines: the report's notes, then where its raw figures are (`what`)."""
    notes = [
        textwrap.fill(f"- {n}", width=110, subsequent_indent="  ", break_on_hyphens=False)
        for n in report.get("notes") or []
    ]
    return (["", *notes] if notes else []) + ["", f"{what}: `{report['out']}` (written by the run).", ""]


def write_section(title: str, section: str, keep: str | None = None) -> None:
    """Replace (or append) the `## title` section of docs/benchmark-runs.md, keeping a hand-written
    `keep` subsection ("### Findings") of the old one."""
    heading = f"## {title}"
    current = DOCS.read_text() if DOCS.exists() else "# Benchmark runs of record\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    found = pattern.search(current)
    if found:
        if keep:
            kept = found.group(0).partition(f"\n{keep}")
            section = section.rstrip("\n") + ("\n\n" + keep + kept[2].rstrip("\n") if kept[1] else "")
        updated = current[: found.start()] + section.rstrip("\n") + "\n\n" + current[found.end() :]
    else:
        updated = current.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    DOCS.write_text(updated.rstrip("\n") + "\n")
