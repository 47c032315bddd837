"""The flags every benchmark with a section of docs/benchmark-runs.md takes, and what its run leaves:
the JSON report (`--out`) and that section, rewritten from the report (`--docs-only` does only that)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness.docs import DOCS, FINDINGS, write_section
from bench.harness.measure import log
from bench.harness.services import ROOT

Render = Callable[[dict[str, Any]], str]  # a report → its docs section


def parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of `python -m <module>`, described by the first line of its docstring."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n")[0])


def parse(
    parser: argparse.ArgumentParser, argv: list[str] | None, out: str, database_help: str | None = None
) -> argparse.Namespace:
    """`argv` parsed with the program's own flags (`parser`'s) followed by the shared ones."""
    add_flags(parser, out, database_help)
    return parser.parse_args(argv)


def parse_program(
    parser: argparse.ArgumentParser,
    argv: list[str] | None,
    out: str,
    docs: tuple[str, Render],
    database_help: str | None = None,
) -> argparse.Namespace | None:
    """A benchmark's flags (`parse`); None once `--docs-only` rewrote its docs section (`docs`: the
    section's title and renderer), the program's whole work. The local model runs offline."""
    args = parse(parser, argv, out, database_help)
    if args.docs_only:
        rewrite_docs(*docs, args.out)
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return args


def add_flags(parser: argparse.ArgumentParser, out: str, database_help: str | None = None) -> None:
    """The stack's URLs (embedded services without them), the report and docs flags, and the wait
    for a quiet machine."""
    parser.add_argument("--database-url", default=None, help=database_help)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--out", default=out)
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmark-runs.md")
    parser.add_argument("--docs-only", action="store_true", help="rewrite the docs section from --out")
    parser.add_argument("--quiet-cpu", type=float, default=25.0, help="CPU %% counted as a quiet machine")
    parser.add_argument("--quiet-wait", type=float, default=0.0, help="wait up to this long for it (s)")


def command_line(module: str, argv: list[str] | None) -> str:
    return f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:])


def rewrite_docs(title: str, render: Render, out: str) -> int:
    """`--docs-only`: the `title` section again from the report the last run wrote to `out`."""
    write_section(title, render(json.loads(Path(out).read_text())), FINDINGS)
    log(f"rewrote the '{title}' section of {DOCS.relative_to(ROOT)} from {out}")
    return 0


def write_json(path: str | Path, report: dict[str, Any]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return out


def publish(args: argparse.Namespace, title: str, render: Render, report: dict[str, Any]) -> None:
    """After a run (its report written to `--out`): the `title` section, unless `--no-docs`."""
    if not args.no_docs:
        write_section(title, render(report), FINDINGS)
        log(f"wrote {args.out} and the '{title}' section of {DOCS.relative_to(ROOT)}")
