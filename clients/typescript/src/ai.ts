// Tools for the Vercel AI SDK (`ai`, an optional peer dependency):
//   const result = await generateText({ model, tools: memoryTools(hs, "acme"), prompt });
import { jsonSchema, tool, type Tool } from "ai";
import type { Hindsight } from "./client.js";
import { MEMORY_TOOLS, type MemoryToolSpec, runTool } from "./tools.js";

export type MemoryToolName = MemoryToolSpec["name"];

/** The MCP server's five memory tools as AI SDK `tool()`s, the bank bound: `{ memory_query, … }`. */
export function memoryTools(hs: Hindsight, bankId: string): Record<MemoryToolName, Tool> {
  const tools = {} as Record<MemoryToolName, Tool>;
  for (const spec of MEMORY_TOOLS) {
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema<Record<string, unknown>>(spec.parameters as Parameters<typeof jsonSchema>[0]),
      execute: (args: Record<string, unknown>) => runTool(spec, hs, bankId, args),
    });
  }
  return tools;
}

export { MEMORY_TOOLS };
