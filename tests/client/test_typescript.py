"""The TypeScript client (clients/typescript, npm package `hindsight-memory`) against the live stack:
its `node --test` suite with the service's URL and key in the environment, its generated types against
the running service's /openapi.json, its packed tarball type-checked in a fresh project, and the example
agent run as a user runs it. The npm packages come from the committed lockfile (`npm ci`, once)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hindsight_memory import Hindsight

from tests.client.conftest import new_bank, poll
from tests.client.test_integrations import mcp_tools
from tests.conftest import ADMIN_KEY, ROOT
from tests.fake_openai import chat_bodies, reply, script

TS = ROOT / "clients" / "typescript"
EXAMPLE = ROOT / "examples" / "typescript" / "support-agent.mjs"


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 600) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, (command, done.stdout[-6000:], done.stderr[-6000:])
    return done.stdout


@pytest.fixture(scope="module")
def built() -> Path:
    """The client installed from its lockfile and compiled (dist/)."""
    assert shutil.which("node"), "Node.js 18+ is needed"
    assert shutil.which("npm"), "npm is needed"
    run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"], TS)
    run(["npm", "run", "format:check"], TS)  # prettier, as `npm run format` leaves the sources
    run(["npm", "run", "build"], TS)
    return TS


async def test_the_node_suite_passes_against_the_live_service(
    built: Path, hs: Hindsight, service: str, worker: Any, sql: Any, tmp_path: Path
) -> None:
    tools = tmp_path / "mcp_tools.json"
    tools.write_text(json.dumps(mcp_tools()))
    files = sorted(str(p.relative_to(built)) for p in (built / "test").glob("*.test.mjs"))
    assert len(files) >= 5
    # The test stack distils heuristically and makes no LLM call: a bank with three calls in its ledger
    # for the usage test (test/shared.test.mjs), as tests/client/test_surface.py seeds them.
    usage_bank = new_bank(hs)
    for operation, model, prompt in (("distill", "m1", 300), ("distill", "m1", 200), ("judge", "m2", 40)):
        await sql(
            "INSERT INTO llm_calls (bank_id, operation, model, prompt_tokens, completion_tokens, estimated,"
            " latency_ms, outcome, created_at) VALUES (:bank, :operation, :model, :prompt, 10, false, 100,"
            " 'ok', now() - interval '1 hour')",
            bank=usage_bank,
            operation=operation,
            model=model,
            prompt=prompt,
        )
    env = {
        "HINDSIGHT_URL": service,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_MCP_TOOLS": str(tools),
        "HINDSIGHT_USAGE_BANK": usage_bank,
    }
    out = run(["node", "--test", *files], built, env)
    passed = int(re.search(r"^# pass (\d+)$", out, re.M).group(1))  # type: ignore[union-attr]
    assert re.search(r"^# fail 0$", out, re.M), out[-6000:]
    assert passed >= 23, out[-6000:]


def test_the_generated_types_are_those_of_the_running_service(built: Path, service: str) -> None:
    """src/openapi.ts is what openapi-typescript makes of this service's /openapi.json: the client's types
    cannot drift from the server (regenerate with `npm run gen:types` against a running service)."""
    out = run(["node", "scripts/gen-types.mjs", "--check", "--url", service], built)
    assert "matches" in out


def test_the_packed_package_type_checks_in_a_fresh_project(built: Path, tmp_path: Path) -> None:
    packed = run(["npm", "pack", "--json", "--pack-destination", str(tmp_path)], built)
    [info] = json.loads(packed)
    tarball = tmp_path / info["filename"]
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
    assert {"package/dist/index.js", "package/dist/index.d.ts", "package/dist/ai.d.ts"} <= names
    assert not any(n.startswith(("package/src/", "package/test/", "package/node_modules/")) for n in names)

    project = tmp_path / "app"
    project.mkdir()
    # The optional peers as a user adds them, at the client's locked versions, from its lockfile's entries
    # (npm ci put their tarballs in the cache, and an offline install needs no registry metadata).
    lock = peers_lock(built / "package-lock.json")
    (project / "package-lock.json").write_text(json.dumps(lock, indent=1))
    dependencies = {**lock["packages"][""]["dependencies"], "hindsight-memory": f"file:{tarball}"}
    (project / "package.json").write_text(
        json.dumps({"name": "fresh", "private": True, "type": "module", "dependencies": dependencies})
    )
    run(["npm", "install", "--offline", "--no-audit", "--no-fund"], project)
    (project / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2022",
                    "module": "NodeNext",
                    "moduleResolution": "NodeNext",
                    "strict": True,
                    "noEmit": True,
                    "types": ["node"],
                    "typeRoots": [str(built / "node_modules" / "@types")],
                },
                "files": ["main.ts", "tools.ts"],
            }
        )
    )
    # main.ts uses the main entry; tools.ts the /ai and /langchain entries with the frameworks' types.
    for name in ("main.ts", "tools.ts"):
        shutil.copy(built / "test" / "consumer" / name, project / name)
    # A type error fails the test; so does the package resolving to anything but its declarations.
    tsc = str(built / "node_modules" / ".bin" / "tsc")
    run([tsc, "-p", "tsconfig.json"], project)
    (project / "wrong.ts").write_text(
        'import { Hindsight } from "hindsight-memory";\n'
        'new Hindsight().query("acme", "q", { top_k: "five" });\n'
    )
    (project / "tsconfig.wrong.json").write_text(
        json.dumps({"extends": "./tsconfig.json", "files": ["wrong.ts"]})
    )
    wrong = subprocess.run(
        [tsc, "-p", "tsconfig.wrong.json"], cwd=project, capture_output=True, text=True, check=False
    )
    assert wrong.returncode != 0
    # Refused for the reason meant (top_k is a number), not for the command line or a missing module.
    assert re.search(r"^wrong\.ts\(2,\d+\): error TS2322", wrong.stdout, re.M), wrong.stdout


# What the consumer project installs beside the package: the optional peers, zod (ai's peer) and the
# json-schema types that ai's declarations import (a strict project without skipLibCheck needs them).
PEERS = ("ai", "@langchain/core", "zod", "@types/json-schema")


def peers_lock(lockfile: Path) -> dict[str, Any]:
    """A lockfile (v3) of a project depending on PEERS at the versions `lockfile` pins, with the entries
    of everything they need, copied from it."""
    packages: dict[str, Any] = json.loads(lockfile.read_text())["packages"]

    def where(name: str, parent: str) -> str:
        # Node's resolution over the lockfile's paths: nested under the parent first, then up.
        while True:
            path = f"{parent}/node_modules/{name}" if parent else f"node_modules/{name}"
            if path in packages:
                return path
            assert parent, f"{name} is not in the lockfile"
            parent = parent.rpartition("/node_modules/")[0]

    needed: dict[str, Any] = {}
    todo = [where(name, "") for name in PEERS]
    while todo:
        path = todo.pop()
        if path in needed:
            continue
        entry = {k: v for k, v in packages[path].items() if k != "dev"}
        needed[path] = entry
        optional = entry.get("peerDependenciesMeta", {})
        peers = [p for p in entry.get("peerDependencies", {}) if not optional.get(p, {}).get("optional")]
        todo += [where(name, path) for name in [*entry.get("dependencies", {}), *peers]]
    root = {
        "name": "fresh",
        "dependencies": {name: needed[f"node_modules/{name}"]["version"] for name in PEERS},
    }
    return {"name": "fresh", "lockfileVersion": 3, "requires": True, "packages": {"": root, **needed}}


def test_the_example_agent_remembers_across_turns(
    built: Path, hs: Hindsight, service: str, server: tuple[Any, str], worker: Any, tmp_path: Path
) -> None:
    """examples/typescript/support-agent.mjs as a user runs it after `npm install` (the client linked
    where npm puts it), with the fake OpenAI-compatible server as its LLM."""
    fake, llm_url = server
    bank_id = new_bank(hs)
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "hindsight-memory").symlink_to(built, target_is_directory=True)
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    shutil.copy(EXAMPLE.parent / "package.json", tmp_path / "package.json")
    script(fake, reply("Noted, 5000 EUR."), reply("Your budget is 5000 EUR."))
    fake.state.requests.clear()
    env = {
        "HINDSIGHT_URL": service,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_BANK": bank_id,
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "test",
        "MODEL": "fake-model",
    }
    done = subprocess.run(
        ["node", EXAMPLE.name],
        cwd=tmp_path,
        input="My budget is 5000 EUR.\nWhat is my budget?\n",
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.splitlines() == ["Noted, 5000 EUR.", "Your budget is 5000 EUR."]
    second = chat_bodies(fake)[1]["messages"][0]
    assert second["role"] == "system"
    assert "- user: My budget is 5000 EUR." in second["content"]  # recalled from working memory
    [session] = list(hs.sessions.list(bank_id))
    assert (session.status, session.last_seq) == ("closed", 4)
    poll(
        lambda: [m for m in hs.memories.list(bank_id, tag="constraint.budget") if "5000" in m.content] or None
    )
