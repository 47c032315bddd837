// What the tests share: a client on the live stack `make test` started (HINDSIGHT_URL, HINDSIGHT_API_KEY
// set by tests/client/test_typescript.py), fresh banks, polling without fixed sleeps.
import { randomUUID } from "node:crypto";
import { Hindsight } from "../dist/index.js";

export const URL = process.env.HINDSIGHT_URL;
export const KEY = process.env.HINDSIGHT_API_KEY;
if (!URL || !KEY) throw new Error("HINDSIGHT_URL and HINDSIGHT_API_KEY must point at a running service");

export function client(options = {}) {
  return new Hindsight({ baseURL: URL, apiKey: KEY, ...options });
}

export async function newBank(hs, config) {
  const bankId = `ts-${randomUUID().slice(0, 12)}`;
  await hs.banks.create(bankId, config ? { config } : {});
  return bankId;
}

export async function collect(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Call `probe` until it returns something other than undefined/null/false, within `ms`. */
export async function poll(probe, ms = 120_000) {
  const deadline = Date.now() + ms;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** The seeds' conversation: a budget of 5000 raised to 8000. */
export const SEED_TURNS = [
  { role: "user", content: "Hello!" },
  { role: "assistant", content: "Hello! How can I help you today?" },
  { role: "user", content: "I want to buy a laptop, my budget is 5000." },
  { role: "assistant", content: "Got it, a laptop within 5000." },
  { role: "user", content: "Actually, if the configuration can be upgraded, I can go up to 8000." },
  { role: "assistant", content: "Great, that opens up more options." },
  { role: "user", content: "I prefer short answers, and my order number is ORD-12345." },
];
