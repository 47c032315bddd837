"""`hindsight eval locomo`: its flags, the evaluation of a file (`run_eval`), `--compare`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import shlex
import sys
from collections.abc import Sequence
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from app.eval.locomo.api import Api, make_client
from app.eval.locomo.dataset import load_dataset
from app.eval.locomo.errors import EvalError
from app.eval.locomo.report import build_report, format_comparison, format_report
from app.eval.locomo.run import Options, evaluate_conversation


async def run_eval(options: Options, client: httpx.AsyncClient | None = None) -> dict[str, Any]:
    """Evaluate every conversation of the file (one fresh bank each) and build the report.
    `client` may be injected (its base URL and auth are used as they are)."""
    conversations = load_dataset(options.data)[: options.limit_conversations]
    started = datetime.now(UTC)
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            client = await stack.enter_async_context(
                make_client(options.url, options.api_key, options.concurrency)
            )
        api = Api(client)
        reuse = _kept_banks(options.reuse_banks) if options.reuse_banks else None
        runs = [await evaluate_conversation(api, c, options, reuse) for c in conversations]
    return build_report(options, conversations, runs, started)


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma list of integers: {text!r}") from exc
    if not ks or not all(1 <= k <= 100 for k in ks):
        raise argparse.ArgumentTypeError("each k must be within 1..100")
    return ks


def redacted_command(argv: Sequence[str]) -> str:
    """The command line as typed, with the API key's value hidden."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--api-key" and i + 1 < len(words):
            words[i + 1] = "***"
        elif word.startswith("--api-key="):
            words[i] = "--api-key=***"
    return shlex.join(["hindsight", *words])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="the service's base URL, e.g. http://localhost:8000")
    parser.add_argument("--api-key", help="the admin key (one bank is created per conversation)")
    parser.add_argument(
        "--data",
        type=Path,
        help="a file in the public locomo10.json format (snap-research/locomo on GitHub: data/locomo10.json)",
    )
    parser.add_argument(
        "--k",
        dest="ks",
        type=parse_ks,
        default=(5, 10, 20),
        help="the k of recall@k, a comma list (default: 5,10,20)",
    )
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    parser.add_argument("--baseline", choices=["dense"], help="plain RAG: raw turns, semantic channel only")
    parser.add_argument(
        "--limit-conversations", type=int, metavar="N", help="only the first N conversations (default: all)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="queries in flight")
    parser.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds to wait for one conversation's distillation"
    )
    parser.add_argument("--keep-banks", action="store_true", help="keep the banks (default: delete them)")
    parser.add_argument(
        "--maintain-after-days",
        type=float,
        metavar="D",
        help="before asking, run expire, decay, promote and merge once with the clock D days after now",
    )
    parser.add_argument(
        "--min-similarity",
        type=float,
        metavar="S",
        help="send this relevance floor with every query (0: off; default: the bank's, 0.3)",
    )
    parser.add_argument(
        "--defaults",
        action="store_true",
        help="send the question and k alone: the bank's default query settings, as a user gets them "
        "(default: min_score 0 and `now` at the conversation's last turn)",
    )
    parser.add_argument(
        "--reuse-banks",
        type=Path,
        metavar="REPORT.json",
        help="ask the banks a run with --keep-banks wrote in this report again (no distillation)",
    )
    parser.add_argument(
        "--compare", nargs=2, type=Path, metavar=("A.json", "B.json"), help="compare two reports and exit"
    )


def _read_report(path: Path) -> dict[str, Any]:
    try:
        report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read the report {path}: {exc}") from exc
    return report


def _kept_banks(path: Path) -> dict[str, str]:
    """Sample id → bank of a report whose banks were kept."""
    entries = _read_report(path).get("per_conversation") or []
    kept = {str(e["sample_id"]): str(e["bank_id"]) for e in entries if e.get("bank_kept")}
    if not kept:
        raise EvalError(f"{path} kept no bank (run it with --keep-banks)")
    return kept


def _options(args: argparse.Namespace) -> Options:
    missing = [
        flag
        for flag, value in (("--url", args.url), ("--api-key", args.api_key), ("--data", args.data))
        if not value
    ]
    if missing:
        raise EvalError(f"missing {', '.join(missing)} (or use --compare A.json B.json)")
    if args.defaults and args.baseline:
        raise EvalError("--defaults is the product's mode (the dense baseline sets its own query)")
    if args.concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    # Every option but the command line is the flag of the same name.
    given = {f.name: getattr(args, f.name) for f in fields(Options) if f.name != "command"}
    return Options(**given, command=redacted_command(sys.argv[1:]))


def run_cli(args: argparse.Namespace) -> int:
    """`hindsight eval locomo`: print the table, write `--out`; or `--compare A.json B.json`."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request is noise here
    try:
        if args.compare:
            print(format_comparison(_read_report(args.compare[0]), _read_report(args.compare[1])))
            return 0
        options = _options(args)
        report = asyncio.run(run_eval(options))
    except EvalError as exc:
        print(f"hindsight eval locomo: {exc}", file=sys.stderr)
        return 1
    print(format_report(report))
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)  # bench/results/ is not in a fresh clone
        options.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"report written to {options.out}")
    return 0
