"""The memory tools as OpenAI Agents SDK function tools (extra `[openai-agents]`):

    from agents import Agent
    from hindsight_memory import AsyncHindsight
    from hindsight_memory.integrations.openai_agents import memory_tools

    agent = Agent(name="support", tools=memory_tools(AsyncHindsight(), "acme"))

The five tools of the MCP server, with its names, descriptions and flat arguments; `bank_id` is bound
here. A sync `Hindsight` works too (its calls run in a worker thread)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from hindsight_memory._async_client import AsyncHindsight
from hindsight_memory.integrations._tools import TOOLS, Client, ToolSpec

__all__ = ["memory_tools"]


def memory_tools(hs: Client, bank_id: str) -> list[FunctionTool]:
    """`memory_write`, `memory_query`, `memory_update`, `memory_forget`, `memory_reflect` on `bank_id`."""
    return [_function_tool(hs, bank_id, spec) for spec in TOOLS]


def _function_tool(hs: Client, bank_id: str, spec: ToolSpec) -> FunctionTool:
    async def invoke(ctx: ToolContext[Any], raw: str) -> str:
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return "Invalid arguments: not a JSON object."
        if not isinstance(arguments, dict):
            return "Invalid arguments: not a JSON object."
        plan = spec.plan(hs._ops, bank_id, arguments)
        if isinstance(hs, AsyncHindsight):
            return await hs._run(plan)
        return await asyncio.to_thread(hs._run, plan)

    # Not strict: OpenAI's strict mode wants every property required, and most of these are optional.
    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
