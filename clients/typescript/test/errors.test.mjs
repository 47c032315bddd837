// Errors built from the service's problem+json, and retries that honour Retry-After: against the live
// service, and through a local proxy in front of it that answers 503/429 first or drops a reply.
import assert from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import { test } from "node:test";
import {
  APIConnectionError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableEntityError,
} from "../dist/index.js";
import { URL, client, collect, newBank } from "./helpers.mjs";

test("each status is its own error class, with the problem's fields", async () => {
  const hs = client();
  const missing = await hs.banks.get("no-such-bank").catch((error) => error);
  assert.ok(missing instanceof NotFoundError && missing instanceof APIError);
  assert.equal(missing.status, 404);
  assert.equal(missing.title, "Not Found");
  assert.match(missing.detail, /no-such-bank/);

  const bankId = await newBank(hs);
  const duplicate = await hs.banks.create(bankId).catch((error) => error);
  assert.ok(duplicate instanceof ConflictError);
  assert.equal(duplicate.status, 409);

  const invalid = await hs.events.append(bankId, "s", [{ role: "robot", content: "hi" }]).catch((e) => e);
  assert.ok(invalid instanceof UnprocessableEntityError);
  assert.ok(invalid.errors.length >= 1);
  assert.ok(
    invalid.errors.some((entry) => entry.loc.includes("role")),
    JSON.stringify(invalid.errors),
  );

  const stranger = client({ apiKey: "hs_not-a-key" });
  await assert.rejects(stranger.banks.get(bankId), AuthenticationError);
});

test("a 400 (a body that is not JSON) is a BadRequestError; a key without the scope a PermissionDeniedError", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  // The client always sends JSON: a fetch that spoils the body on its way out.
  const garbling = client({ fetch: (url, init) => fetch(url, { ...init, body: "{not json" }) });
  const malformed = await garbling.memories.write(bankId, "Ana likes jazz.", ["preference"]).catch((e) => e);
  assert.ok(malformed instanceof BadRequestError && malformed instanceof APIError, String(malformed));
  assert.equal(malformed.status, 400);
  assert.match(malformed.detail, /not valid JSON/);

  const key = await hs.keys.create(bankId, { scopes: ["read"] });
  const reader = client({ apiKey: key.key });
  assert.equal((await collect(reader.memories.list(bankId))).length, 0); // reading is in its scope
  const denied = await reader.memories.write(bankId, "Ana likes jazz.", ["preference"]).catch((e) => e);
  assert.ok(denied instanceof PermissionDeniedError && denied instanceof APIError, String(denied));
  assert.equal(denied.status, 403);
  await assert.rejects(
    reader.events.append(bankId, "s", [{ role: "user", content: "hi" }]),
    PermissionDeniedError,
  );
  await assert.rejects(reader.banks.delete(bankId), PermissionDeniedError); // admin only
});

test("a service that cannot be reached is an APIConnectionError, after the retries", async () => {
  const waits = [];
  const closed = await new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  const hs = client({
    baseURL: `http://127.0.0.1:${closed}`,
    maxRetries: 2,
    sleep: async (ms) => waits.push(ms),
  });
  await assert.rejects(hs.memories.write("b", "x", ["fact"]), APIConnectionError);
  assert.equal(waits.length, 2); // a connection that never opened is retried even for a write
});

/** A proxy to the service that answers the first `plan` requests itself (`{status, retryAfter}`), forwards
 *  them (`null`) or, with `drop`, forwards the request and then breaks the connection instead of passing the reply on. */
function flakyProxy(plan) {
  const upstream = new globalThis.URL(URL);
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push(`${req.method} ${req.url}`);
      const step = plan.shift();
      if (step && !step.drop) {
        res.writeHead(step.status, {
          "content-type": "application/problem+json",
          ...(step.retryAfter !== undefined ? { "retry-after": String(step.retryAfter) } : {}),
        });
        res.end(
          JSON.stringify({ type: "about:blank", title: "Flaky", status: step.status, detail: "try again" }),
        );
        return;
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          if (step?.drop) {
            answer.resume();
            answer.on("end", () => req.socket.destroy()); // the server did the work; the client never hears
            return;
          }
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      forward.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}`, seen, server }),
    ),
  );
}

test("a 503 then 200: an append is retried after the server's Retry-After, and stored once", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const proxy = await flakyProxy([{ status: 503, retryAfter: 2 }]);
  const waits = [];
  try {
    const flaky = client({ baseURL: proxy.url, sleep: async (ms) => waits.push(ms) });
    const result = await flaky.events.append(bankId, "s", [{ role: "user", content: "hello" }]);
    assert.equal(result.appended, 1);
    assert.deepEqual(waits, [2000]);
    assert.equal(proxy.seen.length, 2);
  } finally {
    proxy.server.close();
  }
  assert.equal((await collect(hs.events.list(bankId, "s"))).length, 1);
});

test("a lost reply: the append is sent again and its external ids keep it from being stored twice", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const proxy = await flakyProxy([{ drop: true }]);
  const waits = [];
  try {
    const flaky = client({ baseURL: proxy.url, sleep: async (ms) => waits.push(ms) });
    const result = await flaky.events.append(bankId, "s", [{ role: "user", content: "once" }]);
    assert.deepEqual([result.appended, result.duplicates], [0, 1]); // the first attempt stored it
    assert.equal(waits.length, 1);
  } finally {
    proxy.server.close();
  }
  assert.deepEqual(
    (await collect(hs.events.list(bankId, "s"))).map((e) => e.content),
    ["once"],
  );
});

test("a 429 is retried for any call; a 503 never for a write that may have happened", async () => {
  const hs = client();
  const bankId = await newBank(hs);
  const proxy = await flakyProxy([{ status: 429, retryAfter: 1 }, null, { status: 503 }]);
  const waits = [];
  try {
    const flaky = client({ baseURL: proxy.url, sleep: async (ms) => waits.push(ms) });
    const written = await flaky.memories.write(bankId, "Ana likes jazz.", ["preference"], { wait: true });
    assert.equal(written.status, "active");
    assert.deepEqual(waits, [1000]);
    const refused = await flaky.memories.write(bankId, "Ana likes blues.", ["preference"]).catch((e) => e);
    assert.ok(refused instanceof ServiceUnavailableError);
    assert.equal(proxy.seen.length, 3); // the 503 write was sent once
  } finally {
    proxy.server.close();
  }
});

test("without retries left, a 429 is a RateLimitError carrying Retry-After", async () => {
  const proxy = await flakyProxy([{ status: 429, retryAfter: 7 }]);
  try {
    const error = await client({ baseURL: proxy.url, maxRetries: 0 })
      .banks.get("any")
      .catch((e) => e);
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 7);
  } finally {
    proxy.server.close();
  }
});

test("a streamed import answered 429 is a RateLimitError: its body is never sent again", async () => {
  const proxy = await flakyProxy([{ status: 429, retryAfter: 0 }]);
  try {
    const flaky = client({ baseURL: proxy.url, sleep: async () => {} });
    const body = new Blob(['{"type":"bank"}\n']).stream();
    await assert.rejects(flaky.banks.import("any-bank", body), RateLimitError);
    assert.equal(proxy.seen.length, 1);
  } finally {
    proxy.server.close();
  }
});

test("the timeout bounds the wait for an answer, not the reading of a streamed export", async () => {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    let sent = 0;
    const tick = setInterval(() => {
      res.write(`{"line":${sent}}\n`);
      if (++sent === 6) {
        clearInterval(tick);
        res.end();
      }
    }, 100);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const hs = client({ baseURL: `http://127.0.0.1:${server.address().port}`, timeout: 250 });
    const text = await new Response(await hs.banks.export("any-bank")).text();
    assert.equal(text.trim().split("\n").length, 6); // 600 ms of body after an answer within 250 ms
  } finally {
    server.close();
  }
});
