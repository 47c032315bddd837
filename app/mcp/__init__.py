"""MCP: the memory tools for MCP-capable agents, over Streamable HTTP at `/mcp` (`server`) and over stdio
(`stdio`, a proxy to a running service). Kept import-light: the stdio proxy needs only these names."""

PATH = "/mcp"
NAME = "hindsight"
TITLE = "Hindsight memory"
INSTRUCTIONS = (
    "Long-term memory for this user or agent. Query it before answering anything that may depend on "
    "earlier conversations; write durable facts, preferences and constraints as they come up; reflect at "
    "the end of a task."
)
