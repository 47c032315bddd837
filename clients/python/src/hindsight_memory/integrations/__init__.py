"""Agent-framework tools over the client: `openai_agents.memory_tools` (extra `[openai-agents]`) and
`langchain.memory_tools` (extra `[langchain]`), the MCP server's five memory tools."""
