"""The memory tools as LangChain tools (extra `[langchain]`), usable from LangGraph (`ToolNode`,
`bind_tools`):

    from hindsight_memory import Hindsight
    from hindsight_memory.integrations.langchain import memory_tools

    tools = memory_tools(Hindsight(), "acme")

The five tools of the MCP server, with its names, descriptions and flat arguments; `bank_id` is bound
here. With a `Hindsight` the tools run sync and async (`invoke`, `ainvoke`; async in a worker
thread), with an `AsyncHindsight` async only."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from hindsight_memory._async_client import AsyncHindsight
from hindsight_memory.integrations._tools import TOOLS, Client, ToolSpec

__all__ = ["memory_tools"]


def memory_tools(hs: Client, bank_id: str) -> list[BaseTool]:
    """`memory_write`, `memory_query`, `memory_update`, `memory_forget`, `memory_reflect` on `bank_id`."""
    return [_structured_tool(hs, bank_id, spec) for spec in TOOLS]


def _structured_tool(hs: Client, bank_id: str, spec: ToolSpec) -> StructuredTool:
    async def arun(**arguments: Any) -> str:
        plan = spec.plan(hs._ops, bank_id, arguments)
        if isinstance(hs, AsyncHindsight):
            return await hs._run(plan)
        return await asyncio.to_thread(hs._run, plan)

    def run(**arguments: Any) -> str:
        assert not isinstance(hs, AsyncHindsight)
        return hs._run(spec.plan(hs._ops, bank_id, arguments))

    return StructuredTool.from_function(
        func=None if isinstance(hs, AsyncHindsight) else run,
        coroutine=arun,
        name=spec.name,
        description=spec.description,
        args_schema=spec.parameters,  # the flat JSON schema as is; the tool validates the arguments
    )
