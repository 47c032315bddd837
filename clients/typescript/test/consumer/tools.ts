// The subpath entries of the packed package, type-checked with the optional peers installed (`ai`,
// `@langchain/core`): their declarations must compile against the frameworks' own types.
import type { ToolSet } from "ai";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Hindsight } from "hindsight-memory";
import { MEMORY_TOOLS, type MemoryToolName, memoryTools as aiTools } from "hindsight-memory/ai";
import { memoryTools as langchainTools } from "hindsight-memory/langchain";

const hs = new Hindsight();
export const tools: ToolSet = aiTools(hs, "acme");
export const names: MemoryToolName[] = MEMORY_TOOLS.map((spec) => spec.name);
export const query = tools["memory_query"];
export async function ask(question: string): Promise<string> {
  const structured: StructuredToolInterface[] = langchainTools(hs, "acme");
  const [first] = structured;
  if (!first) throw new Error("no tools");
  return String(await first.invoke({ query: question }));
}
