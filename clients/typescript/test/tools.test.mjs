// The agent-framework tools: the MCP server's five write and query tools, and a Vercel AI SDK tool call
// and a LangChain.js tool run executed against the live service.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { memoryTools as aiTools } from "../dist/ai.js";
import { MEMORY_TOOLS, runTool } from "../dist/index.js";
import { memoryTools as langchainTools } from "../dist/langchain.js";
import { client, collect, newBank } from "./helpers.mjs";

test("the tools are the MCP server's: names, descriptions and arguments", () => {
  const path = process.env.HINDSIGHT_MCP_TOOLS;
  assert.ok(path, "HINDSIGHT_MCP_TOOLS names the MCP server's tool list (written by the pytest test)");
  const expected = JSON.parse(readFileSync(path, "utf8"));
  const ours = Object.fromEntries(
    MEMORY_TOOLS.map((t) => [t.name, { description: t.description, parameters: t.parameters }]),
  );
  assert.deepEqual(ours, expected);
  const lc = Object.fromEntries(langchainTools(client(), "b").map((t) => [t.name, t.description]));
  assert.deepEqual(Object.keys(lc).sort(), Object.keys(expected).sort());
  assert.deepEqual(Object.keys(aiTools(client(), "b")).sort(), Object.keys(expected).sort());
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

test("a Vercel AI SDK tool call writes to the bank, and the next one reads it back", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const calls = [
    { toolName: "memory_write", input: { content: "Ana's budget is 5000 EUR.", tags: "constraint.budget" } },
    { toolName: "memory_query", input: { query: "What is Ana's budget?", top_k: "5" } },
  ];
  const seen = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options.prompt);
      const next = calls.shift();
      if (!next) {
        return {
          content: [{ type: "text", text: "Done." }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      const call = {
        type: "tool-call",
        toolCallId: `call-${seen.length}`,
        toolName: next.toolName,
        input: JSON.stringify(next.input),
      };
      return {
        content: [call],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
  const result = await generateText({
    model,
    tools: aiTools(hs, bankId),
    prompt: "Remember my budget, then tell me what it is.",
    stopWhen: stepCountIs(5),
  });
  assert.equal(result.text, "Done.");
  const outputs = result.steps.flatMap((step) => step.toolResults.map((r) => [r.toolName, r.output]));
  assert.equal(outputs.length, 2);
  const [written, answered] = outputs;
  assert.equal(written[0], "memory_write");
  assert.equal(JSON.parse(written[1]).status, "active");
  assert.equal(answered[0], "memory_query");
  assert.match(answered[1], /Ana's budget is 5000 EUR\./);
  assert.match(answered[1], /Memory ids \(for memory_update \/ memory_forget\):/);
  const units = await collect(hs.memories.list(bankId, { tag: "constraint.budget" }));
  assert.deepEqual(
    units.map((u) => u.content),
    ["Ana's budget is 5000 EUR."],
  );
});

test("tool failures are texts the model can act on", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const [write, , update] = MEMORY_TOOLS;
  assert.equal(await runTool(write, hs, bankId, { content: "x" }), "Invalid arguments: tags: Field required");
  assert.match(
    await runTool(write, hs, bankId, { content: "x", tags: ["fact"], mood: 1 }),
    /mood: Extra inputs/,
  );
  const missing = await runTool(update, hs, bankId, {
    memory_id: "00000000-0000-0000-0000-000000000000",
    content: "y",
  });
  assert.match(missing, /^Not Found \(404\): /);
});

test("LangChain.js tools run against the live service", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const tools = Object.fromEntries(langchainTools(hs, bankId).map((t) => [t.name, t]));
  const written = JSON.parse(
    await tools.memory_write.invoke({ content: "Carl works at Globex.", tags: ["fact.work"] }),
  );
  assert.equal(written.status, "active");
  // the unit as the MCP tools show it (app/mcp/tools.py UNIT_FIELDS)
  assert.deepEqual(Object.keys(written).sort(), [
    "agent_id",
    "claim",
    "confidence",
    "content",
    "created_at",
    "id",
    "importance",
    "merged_into",
    "status",
    "superseded_by",
    "supersedes",
    "tags",
  ]);
  const answer = await tools.memory_query.invoke({ query: "Where does Carl work?" });
  assert.match(answer, /Carl works at Globex\./);
  const forgotten = JSON.parse(await tools.memory_forget.invoke({ memory_id: written.id }));
  assert.equal(forgotten.status, "deleted");
});
