"""Starting `hindsight dev` (what `make up` runs) the way a newcomer does: a busy port or an instance
already running gives one clear line and no traceback, never a second banner with a key nobody
accepts; the start-up output is quiet; every verb's `--help` explains every option."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import _env_port, build_parser
from app.embedded import free_port
from tests.conftest import ROOT
from tests.dev_process import dev_output, start_dev, stop_dev, wait_dev_ready


def dev(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "dev", *args],
        env={**clean, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_one_clear_line(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert "api key" not in result.stdout  # no banner
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("hindsight dev: ")
    for word in words:
        assert word in line, line
    return line


def test_a_busy_port_is_one_line_naming_the_way_out(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = dev("--port", str(port), "--data-dir", str(tmp_path / "d"))
        line = assert_one_clear_line(result, f"port {port} is in use", "another program", f"PORT={port + 1}")
        assert "HINDSIGHT_PORT" in line
        # HINDSIGHT_PORT is the default port
        by_env = dev("--data-dir", str(tmp_path / "d"), HINDSIGHT_PORT=str(port))
        assert_one_clear_line(by_env, f"port {port} is in use")
    assert not (tmp_path / "d" / "dev.json").exists()


def test_a_second_instance_is_refused_and_the_first_starts_quietly(tmp_path: Path) -> None:
    data_dir, port = tmp_path / "first", free_port()
    proc = start_dev(data_dir, port)
    try:
        info = wait_dev_ready(proc, data_dir)
        same_port = dev("--port", str(port), "--data-dir", str(tmp_path / "second"))
        assert_one_clear_line(same_port, f"port {port} is in use", "another Hindsight")
        same_dir = dev("--port", str(free_port()), "--data-dir", str(data_dir))
        assert_one_clear_line(same_dir, "already running from", str(data_dir))
        assert (data_dir / "dev.json").exists()  # the running one's file is left alone
        output = dev_output(data_dir).read_text()
        assert info["api_key"] in output
        assert "alembic" not in output
        assert "Warning" not in output
        assert output.count("Hindsight is up") == 1
        stop_dev(proc)
    finally:
        if proc.poll() is None:
            proc.kill()


def _verbs(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((name, sub))
                found += [(f"{name} {n}", p) for n, p in _verbs(sub)]
    return found


def test_every_verb_explains_every_option_and_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_PORT", "8123")
    verbs = dict(_verbs(build_parser()))
    assert {"dev", "migrate", "api", "worker", "beat", "mcp", "eval", "eval locomo"} <= set(verbs)
    for name, parser in verbs.items():
        assert parser.description, name
        text = parser.format_help()
        for action in parser._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            assert action.help, (name, action.option_strings)
            if action.default not in (None, False, argparse.SUPPRESS):
                assert "default" in parser._get_formatter()._format_action(action), (name, action.dest)
        assert "show this help" in text
    # (the port's variables are read by the verb that listens, when it runs: tests/unit/test_cli_ports.py)
    assert verbs["dev"].parse_args([]).port is None
    assert _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT") == 8123
    assert "$HINDSIGHT_PORT" in verbs["dev"].format_help()
