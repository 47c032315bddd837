"""Our distributions have names of our own: the client is `hindsight-memory` (import `hindsight_memory`),
the service `hindsight-memory-server` (import packages `app` and `worker`, console script `hindsight`).
`hindsight-client` / `hindsight_client` are another project's names on PyPI: none is left in the tree but
the clients guide's one line for users of the old name (and `make install` uninstalling it)."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from tests.conftest import ROOT

RENAME_NOTE = ROOT / "docs" / "guides" / "clients.md"  # the one place that names the old client

OLD = re.compile(r"hindsight[-_]client", re.IGNORECASE)
# Generated, installed or ignored (.gitignore): not the project's sources.
SKIP_DIRS = {
    ".git",
    ".venv",
    "__pycache__",
    ".hindsight",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "build",
    "site",  # the docs site `mkdocs build` writes
    "node_modules",
}


def _tree() -> list[Path]:
    files = []
    for top, dirs, names in os.walk(ROOT):
        here = Path(top)
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIP_DIRS and not d.endswith(".egg-info") and here / d != ROOT / "bench" / "results"
        ]
        files.extend(here / name for name in names)
    return files


def _mentions(path: Path) -> list[str]:
    data = path.read_bytes()
    if b"\0" in data:  # images and other binaries
        return []
    return [line for line in data.decode("utf-8", "replace").splitlines() if OLD.search(line)]


def test_no_old_client_name_is_left_in_the_tree() -> None:
    """Sources, tests, examples, docs, build files: no `hindsight_client` import, no `hindsight-client`
    but the Makefile's uninstall of it."""
    here = Path(__file__).resolve()
    files = [p for p in _tree() if p.resolve() != here and p != RENAME_NOTE]
    # The walk saw the client's sources (a walk that saw nothing would pass).
    assert any(p.suffix == ".py" and p.is_relative_to(ROOT / "clients") for p in files)
    hits = {str(p.relative_to(ROOT)): lines for p in files if (lines := _mentions(p))}
    # `make install` takes the old distribution out of a venv made before the rename.
    makefile = hits.pop("Makefile", [])
    assert all(re.search(r"\$\(PIP\) uninstall .* hindsight-client$", line) for line in makefile), makefile
    assert hits == {}


def test_the_clients_guide_names_the_old_client_once_to_explain_the_rename() -> None:
    lines = _mentions(RENAME_NOTE)
    assert len(lines) <= 1, lines
    assert not any(re.search(r"\b(import|from)\s+hindsight_client\b", line) for line in lines)


def test_the_client_distribution_and_package_are_hindsight_memory() -> None:
    project = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())
    assert project["project"]["name"] == "hindsight-memory"
    src = ROOT / "clients" / "python" / "src"
    packages = {p.name for p in src.iterdir() if (p / "__init__.py").exists()}
    assert packages == {"hindsight_memory"}


def test_the_service_distribution_is_hindsight_memory_server() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["name"] == "hindsight-memory-server"
    assert project["project"]["scripts"] == {"hindsight": "app.cli:main"}
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["app*", "worker*"]
