// Tools for LangChain.js and LangGraph.js (`@langchain/core`, an optional peer dependency):
//   const model = chatModel.bindTools(memoryTools(hs, "acme"));   new ToolNode(memoryTools(hs, "acme"))
import { DynamicStructuredTool } from "@langchain/core/tools";
import type { Hindsight } from "./client.js";
import { MEMORY_TOOLS, runTool } from "./tools.js";

/** The MCP server's five memory tools as LangChain structured tools, the bank bound. */
export function memoryTools(hs: Hindsight, bankId: string): DynamicStructuredTool[] {
  return MEMORY_TOOLS.map(
    (spec) =>
      new DynamicStructuredTool({
        name: spec.name,
        description: spec.description,
        schema: spec.parameters as Record<string, unknown>,
        func: async (input: unknown) => runTool(spec, hs, bankId, input as Record<string, unknown>),
      }),
  );
}

export { MEMORY_TOOLS };
