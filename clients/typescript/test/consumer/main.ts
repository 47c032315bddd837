// A consumer of the packed package: type-checked in a fresh project by tests/client/test_typescript.py.
import { Hindsight, Keys, NotFoundError, type Memory, type QueryResult, type Usage } from "hindsight-memory";

const hs = new Hindsight({ baseURL: "http://127.0.0.1:8000", maxRetries: 1 });
export async function main(): Promise<string> {
  await hs.banks.create("acme", { config: { distill_every_n_turns: 10 } });
  await hs.events.append("acme", "chat-1", [{ role: "user", content: "I'm vegetarian." }]);
  const job = await hs.jobs.wait((await hs.sessions.distill("acme", "chat-1")).id);
  const options = { top_k: 5, tags: ["preference"] };
  const result: QueryResult = await hs.query("acme", "what does the user eat?", options);
  const units: Memory[] = [];
  for await (const unit of hs.memories.list("acme", { status: ["active", "superseded"] })) units.push(unit);
  const keys: Keys = hs.keys;
  const intern = await keys.create("acme", { scopes: ["read", "propose"], agent_id: "intern" });
  const proposer = new Hindsight({ apiKey: intern.key, agentId: "intern" });
  await proposer.memories.write("acme", "Ana's budget is 3000 EUR.", ["constraint.budget"], { wait: true });
  for await (const proposed of hs.memories.proposals("acme")) {
    await hs.memories.accept("acme", proposed.id, { reason: "confirmed" });
  }
  const usage: Usage = await hs.banks.usage("acme", { since: new Date(0), group_by: "operation" });
  const calls: number = usage.totals.calls + (await hs.usage()).totals.calls;
  const mem = hs.memorySession("acme", "chat-2");
  await mem.record("user", "My budget is 5000.");
  await mem.reflect({ wait: true });
  try {
    await hs.banks.get("nope");
  } catch (error) {
    if (error instanceof NotFoundError) return `${error.status} ${error.detail}`;
  }
  return `${job.status} ${result.context} ${units.length} ${calls} ${await mem.recall("budget?")}`;
}
