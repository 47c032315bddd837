// Shared memory and usage against the live service: keys that name an agent, a client that writes as an
// agent, proposals listed, accepted and rejected, the agent filters; a bank's LLM usage and every bank's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PermissionDeniedError, UnprocessableEntityError } from "../dist/index.js";
import { client, collect, newBank } from "./helpers.mjs";

test("proposals are listed, accepted and rejected; the reviewer and the reason are in the history", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const proposer = await hs.keys.create(bankId, { scopes: ["read", "propose"], agent_id: "intern" });
  const reviewer = await hs.keys.create(bankId, { scopes: ["read", "review"], agent_id: "lead" });
  assert.deepEqual([proposer.agent_id, proposer.scopes], ["intern", ["propose", "read"]]);
  const intern = client({ apiKey: proposer.key });
  const lead = client({ apiKey: reviewer.key });

  const kept = await intern.memories.write(bankId, "Ana's budget is 3000 EUR.", ["constraint.budget"], {
    wait: true,
  });
  const dropped = await intern.memories.write(bankId, "Ana's shoe size is 38.", ["fact"], { wait: true });
  assert.deepEqual([kept.status, kept.agent_id, kept.job_id], ["proposed", "intern", null]);
  const waiting = await collect(lead.memories.proposals(bankId, { pageSize: 1 }));
  assert.deepEqual(waiting.map((m) => m.id).sort(), [kept.id, dropped.id].sort());

  await assert.rejects(intern.memories.accept(bankId, kept.id), PermissionDeniedError);
  const accepted = await lead.memories.accept(bankId, kept.id);
  const rejected = await lead.memories.reject(bankId, dropped.id, { reason: "not confirmed" });
  assert.deepEqual([accepted.status, rejected.status], ["active", "rejected"]);
  assert.deepEqual(await collect(hs.memories.proposals(bankId)), []);

  const history = await hs.memories.history(bankId, dropped.id);
  const refusal = history.actions.find((a) => a.action === "rejected");
  assert.deepEqual([refusal?.agent_id, refusal?.details.reason], ["lead", "not confirmed"]);
  const byIntern = await collect(hs.memories.list(bankId, { agent_id: "intern", status: "active" }));
  assert.deepEqual(
    byIntern.map((m) => m.id),
    [kept.id],
  );
  const found = await hs.query(bankId, "What is Ana's budget?", { agents: ["intern"] });
  assert.deepEqual(
    found.memories.map((m) => m.id),
    [kept.id],
  );
});

test("agent_id on writes: the client's agentId, the append's agent_id, and a key that names another", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const key = await hs.keys.create(bankId, { scopes: ["read", "write"] });
  assert.equal(key.agent_id ?? null, null);

  const planner = client({ apiKey: key.key, agentId: "planner" });
  assert.equal(planner.agentId, "planner");
  const unit = await planner.memories.write(bankId, "Ana flies to Oslo on Friday.", ["fact"], { wait: true });
  assert.equal(unit.agent_id, "planner");
  assert.equal((await hs.memories.history(bankId, unit.id)).actions[0].agent_id, "planner");

  const other = await hs.memories.write(bankId, "Ana likes jazz.", ["preference"], {
    wait: true,
    agent_id: "critic",
  });
  assert.equal(other.agent_id, "critic");
  await client({ apiKey: key.key }).events.append(bankId, "s", [{ role: "user", content: "Hello" }], {
    agent_id: "scribe",
  });
  const [event] = await collect(hs.events.list(bankId, "s"));
  assert.equal(event.agent_id, "scribe");
  const byCritic = await collect(hs.memories.list(bankId, { agent_id: "critic" }));
  assert.deepEqual(
    byCritic.map((m) => m.id),
    [other.id],
  );

  const named = await hs.keys.create(bankId, { scopes: ["read", "write"], agent_id: "intern" });
  const impostor = client({ apiKey: named.key, agentId: "lead" });
  const refused = await impostor.memories.write(bankId, "Ana is 30.", ["fact"]).catch((e) => e);
  assert.ok(refused instanceof PermissionDeniedError, String(refused));
  assert.equal(refused.status, 403);
});

test("usage: a bank's LLM calls grouped by operation and by model, and every bank's (admin key)", async () => {
  const hs = client();
  const fresh = await hs.banks.usage(await newBank(hs));
  assert.deepEqual([fresh.group_by, fresh.totals.calls, fresh.groups], ["day", 0, []]);

  // A bank whose ledger holds three calls an hour old (seeded by tests/client/test_typescript.py: the test
  // stack's heuristic distiller makes none): distill m1 300+10 and 200+10 tokens, judge m2 40+10.
  const bankId = process.env.HINDSIGHT_USAGE_BANK;
  assert.ok(bankId, "HINDSIGHT_USAGE_BANK names a bank with LLM calls in its ledger");
  const usage = await hs.banks.usage(bankId, { group_by: "operation" });
  assert.deepEqual(
    [usage.bank_id, usage.group_by, usage.totals.calls, usage.totals.prompt_tokens],
    [bankId, "operation", 3, 540],
  );
  assert.deepEqual(
    usage.groups.map((g) => [g.key, g.calls, g.total_tokens]),
    [
      ["distill", 2, 520],
      ["judge", 1, 50],
    ],
  );
  assert.equal(usage.totals.cost, null); // the test service has no price table
  assert.equal(usage.budget.exhausted, null);
  const byModel = await hs.banks.usage(bankId, {
    since: new Date("2000-01-01T00:00:00Z"),
    group_by: "model",
  });
  assert.deepEqual(
    byModel.groups.map((g) => g.key),
    ["m1", "m2"],
  );
  const before = await hs.banks.usage(bankId, {
    since: "2000-01-01T00:00:00Z",
    until: "2000-02-01T00:00:00Z",
  });
  assert.equal(before.totals.calls, 0);
  await assert.rejects(hs.banks.usage(bankId, { group_by: "week" }), UnprocessableEntityError);

  const all = await hs.usage({ group_by: "operation" });
  assert.equal(all.bank_id, null);
  assert.ok(all.totals.calls >= 3, JSON.stringify(all.totals));
  const key = await hs.keys.create(bankId, { scopes: ["read"] });
  const reader = client({ apiKey: key.key });
  assert.equal((await reader.banks.usage(bankId)).totals.calls, 3);
  await assert.rejects(reader.usage(), PermissionDeniedError); // every bank's: the admin key only
});
