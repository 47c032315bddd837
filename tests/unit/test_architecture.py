"""The layout rules of issues 15 and 30 as tests that fail when the code breaks them: the import-linter
contracts of pyproject.toml (only `app.distill.entry` is imported from `app.distill` by the other
domains, bench/ is never imported by the app, no cycle between sibling packages, none whitelisted), no
import cycle between modules, SQLAlchemy's statement API (in app/ and worker/) and the OpenAI client
only where they belong, commits only in the unit of work, and no module of app/ or worker/ over 400
lines."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "worker", "bench")
# Outside app/db a module may name a session type or catch a driver error, never build a statement.
SQLALCHEMY_OUTSIDE_DB = ("from sqlalchemy.ext.asyncio import", "from sqlalchemy.exc import")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)


def test_import_contracts_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True) == 0


def test_no_module_import_cycle(graph: grimp.ImportGraph) -> None:
    internal = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    cycles = [
        (module, imported)
        for module in sorted(internal)
        for imported in graph.find_modules_directly_imported_by(module) & internal
        if graph.chain_exists(importer=imported, imported=module)
    ]
    assert cycles == []


def _importers_of(graph: grimp.ImportGraph, external: str) -> dict[str, list[str]]:
    """Each internal module importing `external`, with the import lines."""
    return {
        module: [d["line_contents"] for d in graph.get_import_details(importer=module, imported=external)]
        for module in sorted(graph.find_modules_that_directly_import(external))
    }


def test_statements_are_built_only_in_app_db(graph: grimp.ImportGraph) -> None:
    outside = {
        module: lines
        for module, lines in _importers_of(graph, "sqlalchemy").items()
        if not module.startswith(("app.db", "bench"))  # bench EXPLAINs the repositories' own statements
        and any(not line.startswith(SQLALCHEMY_OUTSIDE_DB) for line in lines)
    }
    assert outside == {}


def test_the_openai_client_is_built_only_in_providers() -> None:
    builds = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "AsyncOpenAI(" in path.read_text(encoding="utf-8")
        and not path.is_relative_to(ROOT / "app" / "providers")
    ]
    assert builds == []


# Where a transaction may be committed (issue 30): the unit of work, which the request dependency
# (`app.api.deps.get_db`), the MCP tools (`app.services.Services.session`) and the worker's task wrapper
# (`app.jobs.service.run`) all open. Nothing else calls `.commit()`; services flush and schedule jobs.
COMMIT_ALLOWED = {("app/jobs/unit_of_work.py", "UnitOfWork.session")}


def _commit_calls(path: Path) -> list[str]:
    """`Class.function` (or `function`) of every `.commit()` call in the module."""
    found: list[str] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            scope = [*scope, node.name]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "commit":
            found.append(".".join(scope) or "<module>")
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def test_only_the_unit_of_work_commits() -> None:
    calls = {
        (str(path.relative_to(ROOT)), where)
        for package in ("app", "worker")
        for path in sorted((ROOT / package).rglob("*.py"))
        for where in _commit_calls(path)
    }
    assert calls == COMMIT_ALLOWED


MAX_MODULE_LINES = 400  # split a module by responsibility before it grows past this (STYLE.md)


def test_no_module_is_over_400_lines() -> None:
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for package in ("app", "worker")
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {module: n for module, n in lengths.items() if n > MAX_MODULE_LINES} == {}


def test_no_package_cycle_is_whitelisted() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    acyclic = [c for c in contracts["contracts"] if c["type"] == "acyclic_siblings"]
    assert acyclic
    assert [c.get("ignore_imports", []) for c in acyclic] == [[] for _ in acyclic]
