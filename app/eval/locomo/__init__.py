"""LoCoMo retrieval evaluation, over the public HTTP API only (`hindsight eval locomo`).

The protocol is the one of `data/locomo/README.md`: every turn of a conversation becomes an event of
its session (`external_id` = the turn's `dia_id`), the service distils them, and each question of
categories 1-4 is asked with `top_k = k`; its evidence recall@k is the share of its evidence turns
found among the source events of the returned units. `--baseline dense` measures plain RAG instead:
each raw turn written as one unit, retrieved by the semantic channel alone.

The package: `dataset` (reading the file), `bodies` (the requests), `api` (the HTTP client),
`run` (one conversation), `metrics`, `report`, and `cli` (the command and `run_eval`).
"""

from __future__ import annotations

from app.eval.locomo.api import Api, make_client, raise_for_status, run_all
from app.eval.locomo.bodies import (
    DENSE_BANK_CONFIG,
    DENSE_QUERY,
    PRODUCT_BANK_CONFIG,
    bank_id_for,
    dense_memory,
    query_body,
    query_settings,
    session_batches,
    turn_event,
)
from app.eval.locomo.cli import add_arguments, parse_ks, redacted_command, run_cli, run_eval
from app.eval.locomo.dataset import (
    CATEGORIES,
    Conversation,
    Question,
    Session,
    Turn,
    load_conversation,
    load_dataset,
    normalise_dia_id,
    normalise_evidence,
    parse_session_datetime,
    split_evidence,
    turn_text,
)
from app.eval.locomo.errors import EvalError
from app.eval.locomo.metrics import (
    QueryOutcome,
    aggregate,
    context_words,
    latency_summary,
    percentile,
    question_details,
    recall,
    retrieved_dia_ids,
    summarize,
    unit_dia_ids,
)
from app.eval.locomo.report import (
    build_report,
    format_comparison,
    format_report,
    format_results_table,
    machine_info,
)
from app.eval.locomo.run import ConversationRun, Options, Prepared, evaluate_conversation

__all__ = [
    "CATEGORIES",
    "DENSE_BANK_CONFIG",
    "DENSE_QUERY",
    "PRODUCT_BANK_CONFIG",
    "Api",
    "Conversation",
    "ConversationRun",
    "EvalError",
    "Options",
    "Prepared",
    "QueryOutcome",
    "Question",
    "Session",
    "Turn",
    "add_arguments",
    "aggregate",
    "bank_id_for",
    "build_report",
    "context_words",
    "dense_memory",
    "evaluate_conversation",
    "format_comparison",
    "format_report",
    "format_results_table",
    "latency_summary",
    "load_conversation",
    "load_dataset",
    "machine_info",
    "make_client",
    "normalise_dia_id",
    "normalise_evidence",
    "parse_ks",
    "parse_session_datetime",
    "percentile",
    "query_body",
    "query_settings",
    "question_details",
    "raise_for_status",
    "recall",
    "redacted_command",
    "retrieved_dia_ids",
    "run_all",
    "run_cli",
    "run_eval",
    "session_batches",
    "split_evidence",
    "summarize",
    "turn_event",
    "turn_text",
    "unit_dia_ids",
]
