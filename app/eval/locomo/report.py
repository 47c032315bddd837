"""The report: the JSON of a run, the table `hindsight eval locomo` prints, the comparison of two
reports."""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from app.eval.locomo.bodies import DENSE_BANK_CONFIG, PRODUCT_BANK_CONFIG, query_settings
from app.eval.locomo.dataset import CATEGORIES, Conversation
from app.eval.locomo.metrics import aggregate, question_details
from app.eval.locomo.run import ConversationRun, Options


def machine_info() -> dict[str, Any]:
    import psutil

    return {
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _conversation_entry(run: ConversationRun, keep_banks: bool) -> dict[str, Any]:
    prepared = run.prepared
    return {
        "sample_id": run.sample_id,
        "bank_id": prepared.bank_id,
        "bank_kept": keep_banks,
        "sessions": run.sessions,
        "items": prepared.items,
        "ingest_seconds": round(prepared.ingest_seconds, 3),
        "distill_wait_seconds": round(prepared.wait_seconds, 3),
        "units_by_status": run.units_by_status,
        "questions": len({o.question.index for o in run.outcomes}),
    }


def build_report(
    options: Options,
    conversations: Sequence[Conversation],
    runs: Sequence[ConversationRun],
    started: datetime,
) -> dict[str, Any]:
    outcomes = [o for run in runs for o in run.outcomes]
    items = sum(run.prepared.items for run in runs)
    ingest_seconds = sum(run.prepared.ingest_seconds for run in runs)
    by_status: dict[str, int] = {}
    for run in runs:
        for status, count in run.units_by_status.items():
            by_status[status] = by_status.get(status, 0) + count
    return {
        "benchmark": "locomo",
        "mode": options.mode,
        "date": started.isoformat(timespec="seconds"),
        "command": options.command,
        "url": options.url,
        "data": str(options.data),
        "machine": machine_info(),
        "ks": list(options.ks),
        "concurrency": options.concurrency,
        "bank_config": DENSE_BANK_CONFIG if options.dense else PRODUCT_BANK_CONFIG,
        "query_settings": query_settings(options.dense, options.min_similarity, options.defaults),
        "conversations": len(runs),
        "sessions": sum(run.sessions for run in runs),
        "questions": len({(o.sample_id, o.question.index) for o in outcomes}),
        "ingest": {
            "items": items,
            "unit": "units" if options.dense else "events",
            "seconds": round(ingest_seconds, 3),
            "per_second": round(items / ingest_seconds, 1) if ingest_seconds else None,
        },
        "distill_wait_seconds": round(sum(run.prepared.wait_seconds for run in runs), 3),
        "units": {"active": by_status.get("active", 0), "by_status": by_status},
        "results": aggregate(outcomes, options.ks),
        "per_conversation": [
            _conversation_entry(run, options.keep_banks or options.reuse_banks is not None) for run in runs
        ],
        "data_notes": [note for c in conversations for note in c.notes],
        "question_details": question_details(outcomes),
    }


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_results_table(report: Mapping[str, Any]) -> list[str]:
    categories = "".join(f"{name:>13}" for name in CATEGORIES.values())
    lines = [f"{'k':>4}{'recall':>9}{categories}{'ctx words':>11}{'p50 ms':>9}{'p95 ms':>9}{'srv p50':>9}"]
    for k, row in report["results"].items():
        cats = "".join(f"{_cell(c['recall']):>7} ({c['questions']:>3})" for c in row["by_category"].values())
        client, server = row["latency_ms"]["client"], row["latency_ms"]["server"]
        lines.append(
            f"{k:>4}{_cell(row['recall']):>9}{cats}{_cell(row['context_words'], 1):>11}"
            f"{_cell(client['p50'], 1):>9}{_cell(client['p95'], 1):>9}{_cell(server['p50'], 1):>9}"
        )
    return lines


def _time_filter_line(report: Mapping[str, Any]) -> str:
    rows = report["results"]
    counts = {row["with_time_filter"]["questions"] for row in rows.values()}
    recalls = ", ".join(f"@{k} {_cell(row['with_time_filter']['recall'])}" for k, row in rows.items())
    return (
        f"questions the server read a time filter in: {'/'.join(map(str, sorted(counts)))} (recall {recalls})"
    )


def format_report(report: Mapping[str, Any]) -> str:
    ingest = report["ingest"]
    lines = [
        f"LoCoMo retrieval ({report['mode']}): {report['conversations']} conversations, "
        f"{report['sessions']} sessions, {report['questions']} questions (categories 1-4)",
        *format_results_table(report),
        f"ingest: {ingest['items']} {ingest['unit']} in {ingest['seconds']:.1f} s "
        f"({_cell(ingest['per_second'], 1)}/s); distill wait {report['distill_wait_seconds']:.1f} s; "
        f"units {report['units']['by_status']}",
        _time_filter_line(report),
    ]
    if report["data_notes"]:
        lines.append(f"data notes ({len(report['data_notes'])}):")
        lines.extend(f"  - {note}" for note in report["data_notes"])
    return "\n".join(lines)


def _metric_rows(report: Mapping[str, Any], k: str) -> dict[str, tuple[Any, int]]:
    """Name → (value, decimals) of one k's row, for the comparison."""
    row = report["results"].get(k)
    if row is None:
        return {}
    rows: dict[str, tuple[Any, int]] = {"recall": (row["recall"], 3)}
    rows.update({f"  {c['name']}": (c["recall"], 3) for c in row["by_category"].values()})
    rows["context words"] = (row["context_words"], 1)
    rows["client p50 ms"] = (row["latency_ms"]["client"]["p50"], 1)
    rows["client p95 ms"] = (row["latency_ms"]["client"]["p95"], 1)
    rows["server p50 ms"] = (row["latency_ms"]["server"]["p50"], 1)
    return rows


def _ratio(a: Any, b: Any) -> float | None:
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return a / b if numbers and b else None


def format_comparison(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """Side by side per k, then recall@10 of A over B."""
    label_a, label_b = f"A: {a['mode']}", f"B: {b['mode']}"
    lines = [f"{'':<22}{label_a:>14}{label_b:>14}{'A/B':>8}"]
    for k in dict.fromkeys([*a["results"], *b["results"]]):
        lines.append(f"@{k}")
        rows_a, rows_b = _metric_rows(a, k), _metric_rows(b, k)
        for name in dict.fromkeys([*rows_a, *rows_b]):
            (va, digits), (vb, _) = rows_a.get(name, (None, 3)), rows_b.get(name, (None, 3))
            lines.append(
                f"  {name:<20}{_cell(va, digits):>14}{_cell(vb, digits):>14}{_cell(_ratio(va, vb), 2):>8}"
            )
    recall_a = (a["results"].get("10") or {}).get("recall")
    recall_b = (b["results"].get("10") or {}).get("recall")
    if recall_a is not None and recall_b:
        lines.append(f"recall@10 ratio A/B = {recall_a / recall_b:.3f} ({recall_a:.3f} / {recall_b:.3f})")
    else:
        lines.append("recall@10 ratio A/B: not available (both reports need k=10)")
    return "\n".join(lines)
