"""The tables: a column per half × language, a row per metric ("0.83 (40/48)"), then each kind's
precision and recall; and the failing turns of the dev half."""

from __future__ import annotations

from typing import Any

from bench.distill_quality.score import METRICS, Failure, Tally
from bench.distill_quality.suite import KINDS

TARGETS = {  # the bar on the holdout half, per language
    "noise_precision": 0.95,
    "noise_recall": 0.95,
    "atomic": 0.90,
    "clean": 0.97,
    "kind": 0.85,
}


def _cell(hit: int, total: int) -> str:
    return f"{hit / total:.2f} ({hit}/{total})" if total else "—"


def _pct(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def table(columns: dict[str, Tally]) -> str:
    """The metrics (rate and counts) and the kinds' precision / recall, as two markdown tables."""
    names = list(columns)
    head = "| metric | " + " | ".join(names) + " | target |\n|---|" + "---|" * (len(names) + 1) + "\n"
    rows = ["| turns | " + " | ".join(str(t.turns) for t in columns.values()) + " | |"]
    rows.append("| units | " + " | ".join(str(t.units) for t in columns.values()) + " | |")
    for metric in METRICS:
        cells = " | ".join(_cell(*t.counts[metric]) for t in columns.values())
        target = TARGETS.get(metric)
        rows.append(f"| {metric} | {cells} | {f'≥ {target:.2f}' if target else ''} |")
    kinds_head = (
        "| kind: claims, precision / recall | " + " | ".join(names) + " |\n|---|" + "---|" * len(names)
    )
    kind_rows = []
    for kind in KINDS:
        figures = [t.per_kind()[kind] for t in columns.values()]
        kind_cells = [f"{k['claims']}: {_pct(k['precision'])} / {_pct(k['recall'])}" for k in figures]
        kind_rows.append(f"| {kind} | " + " | ".join(kind_cells) + " |")
    units_row = "| units by kind | " + " | ".join(
        ", ".join(f"{k} {n}" for k, n in sorted(t.unit_kinds.items())) or "—" for t in columns.values()
    ) + " |"  # fmt: skip
    return head + "\n".join(rows) + "\n\n" + kinds_head + "\n" + "\n".join([*kind_rows, units_row]) + "\n"


def as_json(columns: dict[str, Tally]) -> dict[str, Any]:
    """Counts and rates only (never a case's text): safe for the holdout."""
    return {
        name: {
            "turns": t.turns,
            "units": t.units,
            "metrics": {
                m: {"hit": t.counts[m][0], "total": t.counts[m][1], "rate": t.rate(m)} for m in METRICS
            },
            "kinds": t.per_kind(),
            "unit_kinds": dict(t.unit_kinds),
        }
        for name, t in columns.items()
    }


def failures_text(failures: list[Failure]) -> str:
    """Each faulted dev turn: what was said, what is wrong, the units its turn left."""
    lines: list[str] = []
    for f in failures:
        lines.append(f"{f.conversation} #{f.seq} [{f.role}] {f.text}")
        lines += [f"    ✗ {p}" for p in f.problems]
        lines += [f"    → [{', '.join(u.tags)}] {u.content}" for u in f.units] or ["    → (no unit)"]
    return "\n".join(lines)
