"""A support agent as a LangGraph graph (model ⇄ tools) with the Hindsight memory tools.

    make up    # prints the URL and a dev API key
    HINDSIGHT_API_KEY=<dev key> OPENAI_BASE_URL=<any OpenAI-compatible /v1> OPENAI_API_KEY=<its key> \\
        MODEL=<model> python examples/langgraph_agent.py
"""

import os
import sys

from hindsight_memory import ConflictError, Hindsight
from hindsight_memory.integrations.langchain import memory_tools
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

BANK, MODEL = os.environ.get("HINDSIGHT_BANK", "support-demo"), os.environ.get("MODEL", "gpt-4o-mini")
SYSTEM = SystemMessage(
    "You are a friendly support agent. Call memory_query before answering anything about the user; "
    "call memory_write when they state a lasting fact, preference or constraint."
)

with Hindsight() as hs:  # HINDSIGHT_URL (default http://127.0.0.1:8000), HINDSIGHT_API_KEY
    try:
        hs.banks.create(BANK)
    except ConflictError:
        pass
    tools = memory_tools(hs, BANK)
    model = ChatOpenAI(model=MODEL, base_url=os.environ.get("OPENAI_BASE_URL")).bind_tools(tools)

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke([SYSTEM, *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)  # tool calls → tools, else the end
    graph.add_edge("tools", "agent")
    app = graph.compile()

    messages: list = []
    for line in sys.stdin:
        if line.strip():
            messages = app.invoke({"messages": [*messages, HumanMessage(line.strip())]})["messages"]
            print(messages[-1].content, flush=True)
