"""The `hindsight` console script."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def api_workers(flag: int | None) -> int:
    """`--workers`, else HINDSIGHT_API_WORKERS, else one process per CPU core this process may use."""
    from app.config import get_settings

    return flag or get_settings().api_workers or len(os.sched_getaffinity(0)) or 1


def _api(args: argparse.Namespace) -> int:
    import shutil

    import uvicorn

    workers = api_workers(args.workers)
    made = None
    if workers > 1:
        from app.metrics import MULTIPROC_ENV, use_multiprocess_dir

        configured = bool(os.environ.get(MULTIPROC_ENV))
        path = use_multiprocess_dir()  # before uvicorn spawns the processes that inherit it
        made = None if configured else path
    try:
        uvicorn.run(
            "app.main:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=workers,
            log_level="info",
            proxy_headers=True,
        )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return 0


def _worker(args: argparse.Namespace) -> int:
    from worker.celery_app import app

    argv = [
        "worker",
        "--loglevel",
        "INFO",
        "-Q",
        args.queues,
        "--concurrency",
        str(args.concurrency),
    ]
    if args.name:
        argv += ["--hostname", args.name]
    app.worker_main(argv)
    return 0


def _beat(args: argparse.Namespace) -> int:
    from worker.celery_app import app

    argv = ["beat", "--loglevel", "INFO"]
    if args.schedule:
        argv += ["--schedule", args.schedule]
    app.start(argv)
    return 0


def _migrate(_: argparse.Namespace) -> int:
    from app.config import get_settings
    from app.migrate import upgrade

    upgrade(get_settings().database_url)
    return 0


def _dev(args: argparse.Namespace) -> int:
    from app.dev import run_dev

    return run_dev(port=args.port, data_dir=Path(args.data_dir))


def _mcp(args: argparse.Namespace) -> int:
    from app.mcp.stdio import run

    return run(args.url)


def _export(args: argparse.Namespace) -> int:
    from app.portability.cli import export_command

    return export_command(args)


def _import(args: argparse.Namespace) -> int:
    from app.portability.cli import import_command

    return import_command(args)


def _eval_locomo(args: argparse.Namespace) -> int:
    from app.eval.locomo import run_cli

    return run_cli(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hindsight", description="Agent memory as a service.")
    verbs = parser.add_subparsers(dest="verb", required=True)

    dev = verbs.add_parser("dev", help="run the whole embedded stack in the foreground")
    dev.add_argument("--port", type=int, default=8000)
    dev.add_argument("--data-dir", default=".hindsight")
    dev.set_defaults(func=_dev)

    verbs.add_parser("migrate", help="apply database migrations").set_defaults(func=_migrate)

    api = verbs.add_parser("api", help="serve the HTTP API")
    api.add_argument("--host", default=os.environ.get("HINDSIGHT_API_HOST", "0.0.0.0"))
    api.add_argument("--port", type=int, default=int(os.environ.get("HINDSIGHT_API_PORT", "8000")))
    api.add_argument(
        "--workers",
        type=int,
        default=None,
        help="uvicorn processes (default: HINDSIGHT_API_WORKERS, or cores)",
    )
    api.set_defaults(func=_api)

    from app.jobs.queue import QUEUES

    worker = verbs.add_parser("worker", help="run a Celery worker")
    worker.add_argument(
        "--queues",
        default=",".join(QUEUES),
        help="queues to consume (default: all; see the README's worker layout)",
    )
    worker.add_argument("--concurrency", type=int, default=1)
    worker.add_argument("--name", default=None, help="node name, e.g. distill@%%h")
    worker.set_defaults(func=_worker)

    beat = verbs.add_parser("beat", help="run Celery beat (the maintenance schedule)")
    beat.add_argument("--schedule", default=None, help="beat state file")
    beat.set_defaults(func=_beat)

    mcp = verbs.add_parser("mcp", help="serve the MCP tools over stdio, forwarding to a running service")
    mcp.add_argument("--url", default=None, help="service URL (default: $HINDSIGHT_URL or localhost:8000)")
    mcp.set_defaults(func=_mcp)

    export = verbs.add_parser("export", help="stream a bank of a running service to an NDJSON file")
    import_ = verbs.add_parser("import", help="create a bank on a running service from an NDJSON export")
    from app.portability.cli import add_arguments as portability_arguments

    portability_arguments(export, import_)
    export.set_defaults(func=_export)
    import_.set_defaults(func=_import)

    evaluation = verbs.add_parser("eval", help="evaluate a running service over its HTTP API")
    suites = evaluation.add_subparsers(dest="suite", required=True)
    locomo = suites.add_parser(
        "locomo", help="LoCoMo retrieval: evidence recall@k, context size, latency (or --compare A B)"
    )
    from app.eval.locomo import add_arguments

    add_arguments(locomo)
    locomo.set_defaults(func=_eval_locomo)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # prometheus_client writes there from its first import
        Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
