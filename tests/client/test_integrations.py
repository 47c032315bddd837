"""The agent-framework tools on the live stack: the MCP server's five tools (same names, descriptions and
flat arguments), run by the OpenAI Agents SDK's `Runner` against the fake OpenAI-compatible server
scripted to call them, and by LangGraph's `ToolNode`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from hindsight_memory import AsyncHindsight, Hindsight
from hindsight_memory.integrations import langchain as lc_tools
from hindsight_memory.integrations import openai_agents as agents_tools
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from openai import AsyncOpenAI

from app.mcp.tools import UNIT_FIELDS
from tests.client.conftest import new_bank
from tests.conftest import ADMIN_KEY
from tests.fake_openai import chat_bodies, reply, script, tool_call

# The integrations carry the MCP server's five write and query tools; the read-only `memory_profile`
# (issue 17), `memory_query_v2` and the review tools of shared memory (issue 33) are the MCP server's
# only, for now. The server's deprecation of `memory_query` is about MCP tool names: the integrations are
# versioned with the client package, so they carry the tool's own description, without the server's
# deprecation note.
SERVER_ONLY = {"memory_profile", "memory_query_v2", "memory_proposals", "memory_review"}


def mcp_tools() -> dict[str, dict[str, Any]]:
    """The MCP server's tools as it lists them, less `bank_id` (which `memory_tools` binds)."""
    from app.mcp.server import TOOLS

    listed = {}
    for name, spec in TOOLS.items():
        if name in SERVER_ONLY:
            continue
        tool = spec.tool()
        schema = json.loads(json.dumps(tool.input_schema))
        del schema["properties"]["bank_id"]
        listed[name] = {"description": spec.description, "parameters": schema}
    return listed


def test_the_tools_are_the_mcp_tools(hs: Hindsight) -> None:
    expected = mcp_tools()
    agents = {
        t.name: {"description": t.description, "parameters": t.params_json_schema}
        for t in agents_tools.memory_tools(hs, "any")
    }
    assert agents == expected
    langchain = {
        t.name: {"description": t.description, "parameters": t.args_schema}
        for t in lc_tools.memory_tools(hs, "any")
    }
    assert langchain == expected


async def test_an_agents_sdk_run_writes_and_queries_memory(
    hs: Hindsight, service: str, server: tuple[Any, str]
) -> None:
    fake, llm_url = server
    bank_id = new_bank(hs)
    script(
        fake,
        tool_call("memory_write", {"content": "Ana's budget is 5000 EUR.", "tags": ["constraint.budget"]}),
        tool_call("memory_query", {"query": "What is Ana's budget?", "top_k": 3}),
        reply("Your budget is 5000 EUR."),
    )
    fake.state.requests.clear()
    async with (
        AsyncHindsight(service, ADMIN_KEY) as ahs,
        AsyncOpenAI(base_url=llm_url, api_key="test") as llm,
    ):
        agent = Agent(
            name="support",
            instructions="You help Ana plan trips. Remember what matters.",
            model=OpenAIChatCompletionsModel(model="fake-model", openai_client=llm),
            tools=agents_tools.memory_tools(ahs, bank_id),
        )
        result = await Runner.run(
            agent, "My budget is 5000 EUR; what is it?", run_config=RunConfig(tracing_disabled=True)
        )
    assert result.final_output == "Your budget is 5000 EUR."
    [unit] = list(hs.memories.list(bank_id))
    assert (unit.content, unit.status, unit.tags) == (
        "Ana's budget is 5000 EUR.",
        "active",
        ["constraint.budget"],
    )

    bodies = chat_bodies(fake)
    assert len(bodies) == 3
    assert {t["function"]["name"] for t in bodies[0]["tools"]} == set(mcp_tools())
    outputs = [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"]
    written, found = (json.dumps(o) if not isinstance(o, str) else o for o in outputs)
    assert json.loads(written)["id"] == unit.id
    assert "- [" in found
    assert "Ana's budget is 5000 EUR." in found
    assert f"- {unit.id}: Ana's budget is 5000 EUR." in found


def tool_graph(tools: list[Any]) -> Any:
    """The smallest LangGraph graph around a ToolNode: the tool calls of the last AI message, run."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def tool_messages(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


def calls(*steps: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [{"name": name, "args": args, "id": f"call-{i}"} for i, (name, args) in enumerate(steps)]
    return {"messages": [AIMessage(content="", tool_calls=tool_calls)]}


def test_langchain_tools_through_a_tool_node(hs: Hindsight, worker: Any) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    node = tool_graph(lc_tools.memory_tools(hs, bank_id))
    [written] = tool_messages(
        node.invoke(calls(("memory_write", {"content": "Bo drinks tea.", "tags": "preference.food"})))
    )
    unit_id = json.loads(written)["id"]
    assert set(json.loads(written)) == UNIT_FIELDS  # the unit as the MCP tools show it
    [found] = tool_messages(node.invoke(calls(("memory_query", {"query": "What does Bo drink?"}))))
    assert f"- {unit_id}: Bo drinks tea." in found
    [updated] = tool_messages(
        node.invoke(calls(("memory_update", {"memory_id": unit_id, "content": "Bo drinks coffee."})))
    )
    new_id = json.loads(updated)["id"]
    assert json.loads(updated)["supersedes"] == unit_id
    [forgotten] = tool_messages(node.invoke(calls(("memory_forget", {"memory_id": new_id}))))
    assert json.loads(forgotten)["status"] == "deleted"
    hs.events.append(bank_id, "tea", [{"role": "user", "content": "I'm allergic to peanuts."}])
    [reflected] = tool_messages(node.invoke(calls(("memory_reflect", {"session_id": "tea"}))))
    job = hs.jobs.wait(json.loads(reflected)["job_id"], timeout=60)
    assert job.status == "succeeded"
    [refused] = tool_messages(node.invoke(calls(("memory_query", {"query": "x", "top_k": "lots"}))))
    assert refused.startswith("Invalid arguments: top_k")
    [missing] = tool_messages(node.invoke(calls(("memory_reflect", {"session_id": "nope"}))))
    assert missing.startswith("Not Found (404)")


async def test_langchain_tools_on_the_async_client(hs: Hindsight, service: str) -> None:
    bank_id = new_bank(hs)
    async with AsyncHindsight(service, ADMIN_KEY) as ahs:
        tools = lc_tools.memory_tools(ahs, bank_id)
        written = await tools[0].ainvoke({"content": "Ana lives in Porto.", "tags": ["fact"]})
        found = await tools[1].ainvoke({"query": "Where does Ana live?"})
        with pytest.raises(NotImplementedError):
            tools[1].invoke({"query": "Where does Ana live?"})
    assert f"- {json.loads(written)['id']}: Ana lives in Porto." in found
