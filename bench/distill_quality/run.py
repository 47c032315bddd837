"""The command: `python -m bench.distill_quality [--split dev|holdout|all] [--json] [--show-failures]`."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from bench import distill_quality
from bench.distill_quality import report
from bench.distill_quality.distill import distill_all
from bench.distill_quality.score import Failure, Tally, score_conversation
from bench.distill_quality.suite import HALVES, LANGS, SUITE_DIR, load


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.distill_quality", description=(distill_quality.__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="all")
    parser.add_argument("--json", action="store_true", help="counts and rates as JSON")
    parser.add_argument(
        "--show-failures", action="store_true", help="the dev half's failing turns with their units"
    )
    parser.add_argument("--suite", type=Path, default=SUITE_DIR, help="the directory of the suite's YAML")
    args = parser.parse_args(argv)
    if args.show_failures and args.split == "holdout":
        parser.error("--show-failures lists dev turns only (the holdout's texts are never printed)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    conversations = load(args.suite)
    halves = HALVES if args.split == "all" else (args.split,)
    chosen = [c for c in conversations if c.half in halves]
    units = asyncio.run(distill_all(chosen))
    columns = {f"{h} {lang}": Tally() for h in halves for lang in LANGS}
    dev_failures: list[Failure] = []
    for conv in chosen:
        tally, failures = score_conversation(conv, units[conv.id])
        columns[f"{conv.half} {conv.lang}"].merge(tally)
        if conv.half == "dev":
            dev_failures += failures
    if args.json:
        print(json.dumps(report.as_json(columns), indent=2, ensure_ascii=False))
    else:
        turns = sum(len(c.turns) for c in chosen)
        print(f"{len(chosen)} conversations, {turns} turns (heuristic distiller, in process)\n")
        print(report.table(columns))
    if args.show_failures:  # dev turns only, whatever the split: the holdout's texts are never printed
        print(report.failures_text(dev_failures))
    return 0
