// The seeds' scenario end to end, and the rest of the surface, against the live service.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConflictError, NotFoundError } from "../dist/index.js";
import { SEED_TURNS, client, collect, newBank } from "./helpers.mjs";

test("the seeds' scenario: the newest budget wins, the old one is superseded", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const appended = await hs.events.append(bankId, "chat-1", SEED_TURNS);
  assert.equal(appended.appended, 7);
  assert.equal(appended.last_seq, 7);
  const job = await hs.jobs.wait((await hs.sessions.distill(bankId, "chat-1")).id);
  assert.equal(job.status, "succeeded");
  assert.equal(job.searchable, true);

  const result = await hs.query(bankId, "What is my budget?");
  assert.match(result.context, /## constraint\.budget/);
  const budget = result.context.split("## constraint.budget")[1];
  assert.match(budget, /8000/);
  assert.doesNotMatch(budget, /5000/);

  const superseded = await collect(hs.memories.list(bankId, { status: "superseded" }));
  const old = superseded.find((m) => m.content.includes("5000"));
  assert.ok(old, JSON.stringify(superseded));
  const history = await hs.memories.history(bankId, old.id);
  assert.ok(history.chain.length >= 2);
  assert.match(history.chain.at(-1).content, /8000/);

  const off = await hs.query(bankId, "What is the weather on Mars?");
  assert.deepEqual([off.memories, off.context], [[], ""]);
});

test("lists follow next_cursor page after page", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const turns = Array.from({ length: 7 }, (_, i) => ({ role: "user", content: `turn ${i + 1}` }));
  await hs.events.append(bankId, "s", turns);
  const events = await collect(hs.events.list(bankId, "s", { pageSize: 2 }));
  assert.deepEqual(
    events.map((e) => e.seq),
    [1, 2, 3, 4, 5, 6, 7],
  );
  const after = await collect(hs.events.list(bankId, "s", { afterSeq: 5, pageSize: 1 }));
  assert.deepEqual(
    after.map((e) => e.content),
    ["turn 6", "turn 7"],
  );
  const sessions = await collect(hs.sessions.list(bankId));
  assert.deepEqual(
    sessions.map((s) => s.session_id),
    ["s"],
  );
});

test("a retried append with the client's external ids stores every turn once", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const turns = [
    { role: "user", content: "one", external_id: "fixed-1" },
    { role: "user", content: "two" },
  ];
  const first = await hs.events.append(bankId, "s", turns);
  assert.equal(first.appended, 2);
  const again = await hs.events.append(bankId, "s", [turns[0]]);
  assert.deepEqual([again.appended, again.duplicates], [0, 1]);
  const stored = await collect(hs.events.list(bankId, "s"));
  assert.equal(stored.length, 2);
  assert.ok(stored[1].external_id.startsWith("hsc-"), stored[1].external_id);
});

test("memories: write, update, history, forget, restore, purge", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const unit = await hs.memories.write(bankId, "Ana's budget is 5000 EUR.", ["constraint.budget"], {
    wait: true,
    importance: 0.8,
  });
  assert.equal(unit.status, "active");
  assert.equal(unit.job_id, null);
  const newer = await hs.memories.update(bankId, unit.id, { content: "Ana's budget is 8000 EUR." });
  assert.equal(newer.supersedes, unit.id);
  const history = await hs.memories.history(bankId, newer.id);
  assert.deepEqual(
    history.chain.map((m) => m.id),
    [unit.id, newer.id],
  );
  const got = await hs.memories.get(bankId, newer.id);
  assert.equal(got.content, "Ana's budget is 8000 EUR.");
  assert.equal((await hs.memories.forget(bankId, newer.id)).status, "deleted");
  assert.equal((await hs.memories.restore(bankId, newer.id)).status, "active");
  const purged = await hs.memories.purge(bankId, newer.id);
  assert.deepEqual([purged.status, purged.content], ["deleted", ""]);
  const pending = await hs.memories.write(bankId, "Ana lives in Oslo.", ["fact.location"]);
  assert.equal(pending.status, "pending");
  assert.equal((await hs.jobs.wait(pending.job_id)).status, "succeeded");
});

test("banks, keys, stats, entities, timeline, redistill", async () => {
  const hs = client();
  const bankId = await newBank(hs, { distill_every_n_turns: 50 });
  assert.equal((await hs.banks.get(bankId)).config.distill_every_n_turns, 50);
  const updated = await hs.banks.update(bankId, { name: "TS", config: { timezone: "Asia/Shanghai" } });
  assert.deepEqual(
    [updated.name, updated.config.timezone, updated.config.distill_every_n_turns],
    ["TS", "Asia/Shanghai", 50],
  );
  await assert.rejects(hs.banks.create(bankId), ConflictError);
  assert.ok((await collect(hs.banks.list())).some((b) => b.bank_id === bankId));

  await hs.memories.write(bankId, "Carl works at Acme.", ["fact.work"], { wait: true });
  const entities = await collect(hs.entities.list(bankId, { q: "carl" }));
  assert.ok(entities.length >= 1, JSON.stringify(entities));
  const detail = await hs.entities.get(bankId, entities[0].id);
  assert.ok(detail.memories.length >= 1);
  const timeline = await collect(hs.timeline(bankId, { kinds: ["memory"] }));
  assert.ok(timeline.length >= 1 && timeline.every((item) => item.kind === "memory"));
  assert.ok((await hs.banks.stats(bankId)).memories_by_status.active >= 1);

  const key = await hs.keys.create(bankId, { scopes: ["read"] });
  const reader = client({ apiKey: key.key });
  assert.equal((await reader.banks.get(bankId)).bank_id, bankId);
  const other = await newBank(hs);
  await assert.rejects(reader.banks.get(other), NotFoundError); // another bank: 404, never 403
  await hs.keys.revoke(bankId, key.id);
  await assert.rejects(reader.banks.get(bankId), (error) => error.status === 401);

  await hs.events.append(bankId, "s", [{ role: "user", content: "My budget is 3000." }]);
  await hs.jobs.wait((await hs.sessions.distill(bankId, "s")).id);
  const replay = await hs.jobs.wait((await hs.redistill(bankId)).id);
  assert.equal(replay.status, "succeeded");
  assert.ok(replay.result && "counts" in replay.result, JSON.stringify(replay.result));
});

test("a bank exported as a stream imports under a new id", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  await hs.memories.write(bankId, "Ana prefers tea.", ["preference.food"], { wait: true });
  const stream = await hs.banks.export(bankId);
  const text = await new Response(stream).text();
  const lines = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  assert.equal(lines[0].type, "bank");
  assert.equal(lines.at(-1).type, "end");
  const copy = `${bankId}-copy`;
  const imported = await hs.banks.import(copy, text);
  assert.equal(imported.bank_id, copy);
  assert.equal(imported.counts.memory, 1);
  const units = await collect(hs.memories.list(copy));
  assert.deepEqual(
    units.map((m) => m.content),
    ["Ana prefers tea."],
  );
  // …and from a stream, as a file would be read
  const again = await hs.banks.import(`${bankId}-stream`, await hs.banks.export(bankId));
  assert.equal(again.counts.memory, 1);
});
