// A support agent with long-term memory: any OpenAI-compatible chat API and `memorySession`, one user
// turn per stdin line.
//
//   make up                                            # prints the URL and a dev API key
//   cd examples/typescript && npm install              # the client from ../../clients/typescript
//   HINDSIGHT_API_KEY=<dev key> OPENAI_BASE_URL=<any OpenAI-compatible /v1> OPENAI_API_KEY=<its key> \
//     MODEL=<model> node support-agent.mjs
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { ConflictError, Hindsight } from "hindsight-memory";

const BANK = process.env.HINDSIGHT_BANK ?? "support-demo";
const MODEL = process.env.MODEL ?? "gpt-4o-mini";
const LLM = (
  process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1"
).replace(/\/+$/, "");

async function chat(messages) {
  const response = await fetch(`${LLM}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${process.env.OPENAI_API_KEY}`,
    },
    body: JSON.stringify({ model: MODEL, messages }),
  });
  if (!response.ok)
    throw new Error(
      `the LLM answered ${response.status}: ${await response.text()}`,
    );
  return (await response.json()).choices[0].message.content ?? "";
}

const hs = new Hindsight(); // HINDSIGHT_URL (default http://127.0.0.1:8000), HINDSIGHT_API_KEY
await hs.banks.create(BANK).catch((error) => {
  if (!(error instanceof ConflictError)) throw error; // the bank remembers earlier conversations
});
const mem = hs.memorySession(BANK, `chat-${randomUUID().slice(0, 8)}`);
try {
  for await (const line of createInterface({ input: process.stdin })) {
    const question = line.trim();
    if (!question) continue;
    const memory = (await mem.recall(question)) || "(nothing yet)";
    const system = `You are a friendly support agent. What you know about the user:\n${memory}`;
    const answer = await chat([
      { role: "system", content: system },
      { role: "user", content: question },
    ]);
    console.log(answer);
    await mem.record("user", question);
    await mem.record("assistant", answer);
  }
} finally {
  await mem.close(); // distils the rest of the conversation
}
