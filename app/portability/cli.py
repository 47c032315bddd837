"""`hindsight export BANK [FILE]` and `hindsight import BANK [FILE]`: the export and import routes of a
running service, over HTTP ($HINDSIGHT_URL, $HINDSIGHT_API_KEY). Both stream (a bank of any size goes
through in constant memory); a progress bar shows on a terminal. FILE `-` or none: stdout / stdin."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import IO, Any
from urllib.parse import quote

import httpx

DEFAULT_URL = "http://localhost:8000"
CHUNK = 256 * 1024
# No read timeout: an export of a big bank, or the import's last commit, may take a while.
TIMEOUT = httpx.Timeout(30.0, read=None)


def add_arguments(export: argparse.ArgumentParser, import_: argparse.ArgumentParser) -> None:
    for parser in (export, import_):
        parser.add_argument("bank", help="the bank id")
        parser.add_argument(
            "--url", default=None, help="service URL (default: $HINDSIGHT_URL or localhost:8000)"
        )
    export.add_argument("file", nargs="?", default="-", help="where to write the NDJSON (default: stdout)")
    export.add_argument("--no-events", action="store_true", help="leave the raw events out")
    import_.add_argument("file", nargs="?", default="-", help="the NDJSON to read (default: stdin)")


def _client(args: argparse.Namespace) -> httpx.Client:
    url = (args.url or os.environ.get("HINDSIGHT_URL") or DEFAULT_URL).rstrip("/")
    key = os.environ.get("HINDSIGHT_API_KEY", "")
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)


def _progress(what: str, total: int | None = None) -> Any:
    """A byte counter on stderr, shown only when stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=what,
        disable=not sys.stderr.isatty(),
        file=sys.stderr,
    )


def _failed(response: httpx.Response) -> int:
    try:
        problem = response.json()
        message = f"{problem.get('title', response.status_code)}: {problem.get('detail', '')}"
    except ValueError:
        message = f"HTTP {response.status_code}: {response.text[:500]}"
    print(f"hindsight: {message}", file=sys.stderr)
    return 1


def _unreachable(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command that says so, and exits 1, when the service cannot be reached."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except httpx.TransportError as exc:
            print(f"hindsight: cannot reach the service: {exc!r}", file=sys.stderr)
            return 1

    return run


@_unreachable
def export_command(args: argparse.Namespace) -> int:
    params = {"events": "false"} if args.no_events else {}
    with ExitStack() as stack:
        client = stack.enter_context(_client(args))
        path = f"/v1/banks/{quote(args.bank, safe='')}/export"
        response = stack.enter_context(client.stream("GET", path, params=params))
        if response.status_code != 200:
            response.read()
            return _failed(response)
        out: IO[bytes] = sys.stdout.buffer if args.file == "-" else stack.enter_context(open(args.file, "wb"))
        bar = stack.enter_context(_progress(f"export {args.bank}"))
        last = b""
        for chunk in response.iter_bytes(CHUNK):
            out.write(chunk)
            bar.update(len(chunk))
            last = (last + chunk)[-4096:]
        out.flush()
    end = json.loads(last.rstrip(b"\n").rsplit(b"\n", 1)[-1] or b"{}")
    if end.get("type") != "end":
        print("hindsight: the export stream was cut short", file=sys.stderr)
        return 1
    print(f"exported {args.bank}: {json.dumps(end['counts'])}", file=sys.stderr)
    return 0


def _chunks(source: IO[bytes], bar: Any) -> Iterator[bytes]:
    while chunk := source.read(CHUNK):
        bar.update(len(chunk))
        yield chunk


@_unreachable
def import_command(args: argparse.Namespace) -> int:
    with ExitStack() as stack:
        source: IO[bytes] = (
            sys.stdin.buffer if args.file == "-" else stack.enter_context(open(args.file, "rb"))
        )
        size = os.fstat(source.fileno()).st_size if args.file != "-" else None
        bar = stack.enter_context(_progress(f"import {args.bank}", size))
        client = stack.enter_context(_client(args))
        response = client.post(
            f"/v1/banks/{quote(args.bank, safe='')}/import",
            content=_chunks(source, bar),
            headers={"Content-Type": "application/x-ndjson"},
        )
    if response.status_code != 201:
        return _failed(response)
    print(json.dumps(response.json()))
    return 0
