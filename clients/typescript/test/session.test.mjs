// The agent loop: memorySession's record, reflect and recall against the live service.
import assert from "node:assert/strict";
import { test } from "node:test";
import { NotFoundError } from "../dist/index.js";
import { client, collect, newBank } from "./helpers.mjs";

test("record, reflect, recall: the newer budget is what the agent is told", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const mem = hs.memorySession(bankId, "chat-1");
  await mem.record("user", "My budget is 5000.");
  assert.equal((await mem.reflect({ wait: true })).searchable, true);
  await mem.record("user", "Actually my budget is 8000.");
  await mem.reflect({ wait: true });
  const recalled = await mem.recall("what is my budget?");
  assert.match(recalled, /8000/);
  assert.doesNotMatch(recalled, /5000/);
  const closed = await mem.close();
  assert.equal(closed.status, "closed");
  await assert.rejects(mem.record("user", "too late"), /closed/);
});

test("recall carries the turns not yet distilled; buffered turns are sent before it", async () => {
  const hs = client();
  const bankId = await newBank(hs, { distill_every_n_turns: 100 });
  const mem = hs.memorySession(bankId, "chat-2", { bufferSize: 10 });
  await mem.record("user", "I am travelling to Lisbon tomorrow.", { speaker: "Ana" });
  await assert.rejects(collect(hs.events.list(bankId, "chat-2")), NotFoundError); // still buffered: no session
  const recalled = await mem.recall("where am I going?");
  assert.match(
    recalled,
    /Recent turns of this session, not yet distilled:\n- Ana: I am travelling to Lisbon/,
  );
  assert.equal((await collect(hs.events.list(bankId, "chat-2"))).length, 1);
  await mem.close();
});

test("a session with no turn reflects and closes to nothing; a missing bank is still an error", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const mem = hs.memorySession(bankId, "empty");
  assert.equal(await mem.reflect(), null);
  assert.equal(await mem.close(), null);
  await assert.rejects(hs.memorySession("no-such-bank", "s").reflect(), NotFoundError);
});

test("disposing of the session (what leaving an `await using` block does) closes it", async () => {
  const hs = client();
  const bankId = await newBank(hs, { distill_every_n_turns: 100 });
  const mem = hs.memorySession(bankId, "chat-3", { bufferSize: 10 });
  await mem.record("user", "My sister lives in Porto.");
  await mem[Symbol.asyncDispose](); // (Node 20 has the symbol, not yet the `await using` syntax)
  const session = await hs.sessions.get(bankId, "chat-3");
  assert.equal(session.status, "closed");
  assert.equal((await collect(hs.events.list(bankId, "chat-3"))).length, 1);
});
