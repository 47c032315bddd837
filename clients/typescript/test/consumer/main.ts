// A consumer of the packed package: type-checked in a fresh project by tests/client/test_typescript.py.
import { Hindsight, NotFoundError, type Memory, type QueryResult } from "hindsight-memory";

const hs = new Hindsight({ baseURL: "http://127.0.0.1:8000", maxRetries: 1 });
export async function main(): Promise<string> {
  await hs.banks.create("acme", { config: { distill_every_n_turns: 10 } });
  await hs.events.append("acme", "chat-1", [{ role: "user", content: "I'm vegetarian." }]);
  const job = await hs.jobs.wait((await hs.sessions.distill("acme", "chat-1")).id);
  const options = { top_k: 5, tags: ["preference"] };
  const result: QueryResult = await hs.query("acme", "what does the user eat?", options);
  const units: Memory[] = [];
  for await (const unit of hs.memories.list("acme", { status: ["active", "superseded"] })) units.push(unit);
  const mem = hs.memorySession("acme", "chat-2");
  await mem.record("user", "My budget is 5000.");
  await mem.reflect({ wait: true });
  try {
    await hs.banks.get("nope");
  } catch (error) {
    if (error instanceof NotFoundError) return `${error.status} ${error.detail}`;
  }
  return `${job.status} ${result.context} ${units.length} ${await mem.recall("budget?")}`;
}
