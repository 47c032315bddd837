"""Versioned MCP tools (seed 000: a version number in the tool name, the old version kept for a while):
every tool's input schema is pinned by tests/mcp_tool_schemas.json. A change that would break an agent
(an argument removed, renamed, retyped or newly required) ships as `<tool>_v2` beside the old tool, which
stays listed, marked deprecated, until its window ends. A compatible change (a new optional argument, a
better description) is pinned again on purpose:

    python -m tests.unit.test_mcp_versions      # rewrites the snapshot from the tools as they are
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from app.mcp.tools import DEPRECATION_WINDOW_DAYS, TOOLS

SNAPSHOT = Path(__file__).resolve().parents[1] / "mcp_tool_schemas.json"
REFRESH = "python -m tests.unit.test_mcp_versions"


def current() -> dict[str, dict[str, Any]]:
    """Each listed tool's input schema and deprecation, as the snapshot holds them."""
    tools: dict[str, dict[str, Any]] = {}
    for name, spec in TOOLS.items():
        d = spec.deprecation
        deprecated = (
            {"replaced_by": d.replaced_by, "since": str(d.since), "until": str(d.until)} if d else None
        )
        tools[name] = {"input_schema": spec.tool().input_schema, "deprecated": deprecated}
    return tools


def pinned() -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["tools"]
    return tools


def _shape(prop: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in prop.items() if k != "description"}


def incompatibilities(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What in `new` would break a caller of `old`: an argument gone, retyped or newly constrained, a newly
    required one, unknown arguments refused where they were allowed. New optional arguments and
    descriptions are compatible."""
    problems: list[str] = []
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for name, prop in old_props.items():
        if name not in new_props:
            problems.append(f"argument {name!r} removed")
        elif _shape(prop) != _shape(new_props[name]):
            problems.append(f"argument {name!r} changed: {_shape(prop)} → {_shape(new_props[name])}")
    for name in sorted(set(new.get("required", [])) - set(old.get("required", []))):
        problems.append(f"argument {name!r} is now required")
    if old.get("additionalProperties", True) and new.get("additionalProperties", True) is False:
        problems.append("unknown arguments are now refused")
    return problems


def test_every_tool_is_pinned_and_matches_its_snapshot() -> None:
    now, snapshot = current(), pinned()
    assert set(now) - set(snapshot) == set(), f"new tools: pin their schemas ({REFRESH})"
    for name in sorted(set(now) & set(snapshot)):
        old, new = snapshot[name]["input_schema"], now[name]["input_schema"]
        broken = incompatibilities(old, new)
        assert not broken, f"{name}: an incompatible change ships as a new tool ({name}_v2): {broken}"
        assert new == old, f"{name}: a compatible change to the input schema; pin it again ({REFRESH})"
        assert now[name]["deprecated"] == snapshot[name]["deprecated"], f"{name}: pin its deprecation"


def test_no_tool_is_removed_before_its_window_ends() -> None:
    now, today = current(), date.today()
    for name, entry in pinned().items():
        if name in now:
            continue
        deprecated = entry["deprecated"]
        assert deprecated is not None, f"{name} was removed without being deprecated first"
        assert today > date.fromisoformat(deprecated["until"]), (
            f"{name} must stay until {deprecated['until']}"
        )


def test_a_deprecated_tool_names_a_listed_successor_and_a_window() -> None:
    deprecated = {name: spec.deprecation for name, spec in TOOLS.items() if spec.deprecation}
    assert set(deprecated) == {"memory_query"}
    for name, d in deprecated.items():
        assert d is not None
        assert d.replaced_by in TOOLS
        assert TOOLS[d.replaced_by].deprecation is None
        assert d.until - d.since >= timedelta(days=DEPRECATION_WINDOW_DAYS)
        assert "Deprecated" in TOOLS[name].tool().description
        assert d.replaced_by in TOOLS[name].tool().description


def test_the_v2_query_keeps_every_v1_argument() -> None:
    v1, v2 = current()["memory_query"]["input_schema"], current()["memory_query_v2"]["input_schema"]
    assert incompatibilities(v1, v2) == []
    assert set(v2["properties"]) - set(v1["properties"]) == {"context_why"}


def test_what_breaks_a_caller_is_told_apart_from_what_does_not() -> None:
    old = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "a"}, "top_k": {"type": "integer"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    assert incompatibilities(old, old) == []
    added = {**old, "properties": {**old["properties"], "why": {"type": "boolean"}}}
    assert incompatibilities(old, added) == []
    described = {**old, "properties": {**old["properties"], "query": {"type": "string", "description": "b"}}}
    assert incompatibilities(old, described) == []
    gone = {**old, "properties": {"query": old["properties"]["query"]}}
    assert incompatibilities(old, gone) == ["argument 'top_k' removed"]
    retyped = {**old, "properties": {**old["properties"], "top_k": {"type": "string"}}}
    assert len(incompatibilities(old, retyped)) == 1
    required = {**added, "required": ["query", "why"]}
    assert incompatibilities(old, required) == ["argument 'why' is now required"]


def write_snapshot() -> None:
    tools = current()
    SNAPSHOT.write_text(
        json.dumps({"tools": tools}, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"pinned {len(tools)} tools in {SNAPSHOT}")


if __name__ == "__main__":
    write_snapshot()
