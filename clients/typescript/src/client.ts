// The client: every operation of the API, grouped as the Python client groups them (`hs.banks`,
// `hs.events`, `hs.memories`, …). Lists are async iterators that follow `next_cursor` by themselves.
// randomUUID from node:crypto: Node 18 has no global `crypto` without a flag.
import { randomUUID } from "node:crypto";
import { JobTimeoutError } from "./errors.js";
import { type ClientOptions, type Query, type Request, Transport, seg } from "./http.js";
import { MemorySession, type MemorySessionOptions } from "./session.js";
import type {
  ApiKey,
  AppendResult,
  Bank,
  BankConfig,
  BankStats,
  ClosedSession,
  Entity,
  EntityDetail,
  Event,
  EventIn,
  ImportResult,
  Job,
  KeyScope,
  KnowledgePage,
  Memory,
  MemoryFields,
  MemoryHistory,
  MemoryPatch,
  QueryOptions,
  QueryResult,
  ReviewDecision,
  Session,
  TimelineItem,
  Usage,
  WrittenMemory,
} from "./types.js";

const DEFAULT_PAGE_SIZE = 100;
const POLL_FIRST_MS = 100;
const POLL_MAX_MS = 2000;

/** An event to append: the server's fields; `external_id` is filled in when left out. */
export type EventInput = Omit<EventIn, "external_id"> & { external_id?: string | null };

/** A new `external_id` for an event the caller gave none, so a retried append stores it once. */
export function withExternalId(event: EventInput): EventIn {
  return { ...event, external_id: event.external_id ?? `hsc-${randomUUID().replaceAll("-", "")}` };
}

/** Failed, or succeeded and (a distillation) searchable: what waiting for a job waits for. */
export function jobFinished(job: Job): boolean {
  return job.status === "failed" || (job.status === "succeeded" && job.searchable !== false);
}

export interface PageOptions {
  /** Items fetched per request (at most 500); default 100. */
  pageSize?: number;
}

/** The window and grouping of a usage report; the window defaults to the last 30 days. */
export interface UsageOptions {
  /** Start of the window, inclusive (a timestamp without an offset is read in the bank's timezone). */
  since?: string | Date;
  /** End of the window, exclusive; default now. */
  until?: string | Date;
  /** Cut the window by UTC `day` (the default), `operation` or `model`. */
  group_by?: "day" | "operation" | "model";
}

function usageQuery(options: UsageOptions): Query {
  return { since: iso(options.since), until: iso(options.until), group_by: options.group_by };
}

abstract class Resource {
  constructor(protected readonly http: Transport) {}

  protected async *pages<T>(path: string, query: Query, key: string): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const request: Request = { method: "GET", path, query: { ...query, cursor }, idempotent: true };
      const page = await this.http.json<Record<string, unknown>>(request);
      const items = (page[key] ?? []) as T[];
      yield* items;
      const next = page.next_cursor;
      if (typeof next !== "string" || items.length === 0) return;
      cursor = next;
    }
  }
}

export class Banks extends Resource {
  create(bankId: string, options: { name?: string; config?: Partial<BankConfig> } = {}): Promise<Bank> {
    return this.http.json({ method: "POST", path: "/v1/banks", json: { bank_id: bankId, ...options } });
  }

  get(bankId: string): Promise<Bank> {
    return this.http.json({ method: "GET", path: `/v1/banks/${seg(bankId)}`, idempotent: true });
  }

  list(options: PageOptions = {}): AsyncGenerator<Bank, void, undefined> {
    return this.pages("/v1/banks", { limit: options.pageSize ?? DEFAULT_PAGE_SIZE }, "banks");
  }

  /** Change the name or config; the config is merged into the current one. */
  update(bankId: string, changes: { name?: string; config?: Partial<BankConfig> }): Promise<Bank> {
    const path = `/v1/banks/${seg(bankId)}`;
    return this.http.json({ method: "PATCH", path, json: changes, idempotent: true });
  }

  /** Delete the bank and erase every row of it (admin key). */
  delete(bankId: string): Promise<void> {
    return this.http.none({ method: "DELETE", path: `/v1/banks/${seg(bankId)}`, idempotent: true });
  }

  stats(bankId: string): Promise<BankStats> {
    return this.http.json({ method: "GET", path: `/v1/banks/${seg(bankId)}/stats`, idempotent: true });
  }

  /** The bank's LLM calls in a window: tokens, latency, cost (with a price table) and today's budget. */
  usage(bankId: string, options: UsageOptions = {}): Promise<Usage> {
    const path = `/v1/banks/${seg(bankId)}/usage`;
    return this.http.json({ method: "GET", path, query: usageQuery(options), idempotent: true });
  }

  /** The bank as an NDJSON stream from one snapshot (`events: false` leaves the raw turns out). */
  async export(bankId: string, options: { events?: boolean } = {}): Promise<ReadableStream<Uint8Array>> {
    const query = options.events === false ? { events: "false" } : {};
    const path = `/v1/banks/${seg(bankId)}/export`;
    const response = await this.http.send({
      method: "GET",
      path,
      query,
      headers: { accept: "application/x-ndjson" },
    });
    if (!response.body) throw new TypeError("the export answered without a body");
    return response.body;
  }

  /** Create `bankId` from an export (a string, bytes, a Blob or a stream of NDJSON); all or nothing. */
  import(
    bankId: string,
    ndjson: string | Uint8Array | Blob | ReadableStream<Uint8Array>,
  ): Promise<ImportResult> {
    const path = `/v1/banks/${seg(bankId)}/import`;
    const headers = { "content-type": "application/x-ndjson" };
    return this.http.json({ method: "POST", path, body: ndjson as RequestInit["body"], headers });
  }
}

export class Keys extends Resource {
  /** A bank key (scopes `read`, `write`, `propose`, `review`); its secret (`key`) is shown only in this
   *  answer. `agent_id`: the agent its writes are recorded as. */
  create(
    bankId: string,
    options: { scopes?: KeyScope[]; name?: string; agent_id?: string } = {},
  ): Promise<ApiKey> {
    const json = {
      scopes: options.scopes ?? ["read", "write"],
      name: options.name,
      agent_id: options.agent_id,
    };
    return this.http.json({ method: "POST", path: `/v1/banks/${seg(bankId)}/keys`, json });
  }

  revoke(bankId: string, keyId: string): Promise<void> {
    const path = `/v1/banks/${seg(bankId)}/keys/${seg(keyId)}`;
    return this.http.none({ method: "DELETE", path, idempotent: true });
  }
}

export class Events extends Resource {
  /** Append turns; each without an `external_id` gets one, so a retry stores nothing twice. `agent_id`:
   *  the agent that wrote them, when neither the key nor the client names one. */
  append(
    bankId: string,
    sessionId: string,
    events: EventInput[],
    options: { agent_id?: string } = {},
  ): Promise<AppendResult> {
    const path = `/v1/banks/${seg(bankId)}/sessions/${seg(sessionId)}/events`;
    const json = { events: events.map(withExternalId), agent_id: options.agent_id };
    return this.http.json({ method: "POST", path, json, idempotent: true });
  }

  list(
    bankId: string,
    sessionId: string,
    options: PageOptions & { afterSeq?: number } = {},
  ): AsyncGenerator<Event, void, undefined> {
    const path = `/v1/banks/${seg(bankId)}/sessions/${seg(sessionId)}/events`;
    const query = { after_seq: options.afterSeq, limit: options.pageSize ?? DEFAULT_PAGE_SIZE };
    return this.pages(path, query, "events");
  }
}

export class Jobs extends Resource {
  get(jobId: string): Promise<Job> {
    return this.http.json({ method: "GET", path: `/v1/jobs/${seg(jobId)}`, idempotent: true });
  }

  /** The job once finished (failed, or succeeded and searchable); `JobTimeoutError` after `timeout` ms. */
  async wait(jobId: string, options: { timeout?: number } = {}): Promise<Job> {
    const deadline = Date.now() + (options.timeout ?? 120_000);
    let pause = POLL_FIRST_MS;
    for (;;) {
      const job = await this.get(jobId);
      if (jobFinished(job)) return job;
      const left = deadline - Date.now();
      if (left <= 0) throw new JobTimeoutError(`Job ${jobId} is still ${job.status} after the timeout.`, job);
      await this.http.sleep(Math.min(pause, left));
      pause = Math.min(pause * 2, POLL_MAX_MS);
    }
  }
}

export class Sessions extends Resource {
  constructor(
    http: Transport,
    private readonly jobs: Jobs,
  ) {
    super(http);
  }

  get(bankId: string, sessionId: string): Promise<Session> {
    const path = `/v1/banks/${seg(bankId)}/sessions/${seg(sessionId)}`;
    return this.http.json({ method: "GET", path, idempotent: true });
  }

  list(bankId: string, options: PageOptions = {}): AsyncGenerator<Session, void, undefined> {
    const query = { limit: options.pageSize ?? DEFAULT_PAGE_SIZE };
    return this.pages(`/v1/banks/${seg(bankId)}/sessions`, query, "sessions");
  }

  /** Close the session and distil what is left (`job_id`, null when nothing is). */
  close(bankId: string, sessionId: string): Promise<ClosedSession> {
    const path = `/v1/banks/${seg(bankId)}/sessions/${seg(sessionId)}/close`;
    return this.http.json({ method: "POST", path, idempotent: true });
  }

  /** Distil the session's undistilled turns now: the job, queued or already running. */
  async distill(bankId: string, sessionId: string): Promise<Job> {
    const path = `/v1/banks/${seg(bankId)}/sessions/${seg(sessionId)}/distill`;
    // Concurrent or repeated requests share one job: safe to send again.
    const accepted = await this.http.json<{ job_id: string }>({ method: "POST", path, idempotent: true });
    return this.jobs.get(accepted.job_id);
  }
}

export interface MemoryFilters extends PageOptions {
  status?: string | string[];
  tag?: string;
  entity?: string;
  session_id?: string;
  since?: string | Date;
  until?: string | Date;
  as_of?: string | Date;
  /** Only units this agent wrote. */
  agent_id?: string;
}

function iso(value: string | Date | undefined): string | undefined {
  return value instanceof Date ? value.toISOString() : value;
}

export class Memories extends Resource {
  /** Write a unit: `pending` with its resolution `job_id`, or resolved at once with `wait: true`; with a
   *  propose-only key, `proposed` (waiting for a review). `agent_id` among the fields: the writer. */
  async write(
    bankId: string,
    content: string,
    tags: string[],
    options: MemoryFields & { wait?: boolean } = {},
  ): Promise<WrittenMemory> {
    const { wait, ...fields } = options;
    const path = `/v1/banks/${seg(bankId)}/memories`;
    const query = wait ? { wait: "true" } : {};
    const accepted = await this.http.json<{ memory: Memory; job_id: string | null }>({
      method: "POST",
      path,
      query,
      json: { content, tags, ...fields },
    });
    return { ...accepted.memory, job_id: accepted.job_id ?? null };
  }

  /** Newest first; `status` one or several (default active), `tag` covers its sub-tags. */
  list(bankId: string, filters: MemoryFilters = {}): AsyncGenerator<Memory, void, undefined> {
    const { pageSize, since, until, as_of, status, ...rest } = filters;
    const query: Query = {
      ...rest,
      status,
      since: iso(since),
      until: iso(until),
      as_of: iso(as_of),
      limit: pageSize ?? DEFAULT_PAGE_SIZE,
    };
    return this.pages(`/v1/banks/${seg(bankId)}/memories`, query, "memories");
  }

  private path(bankId: string, memoryId: string): string {
    return `/v1/banks/${seg(bankId)}/memories/${seg(memoryId)}`;
  }

  /** The unit, with its source turns' text. */
  get(bankId: string, memoryId: string): Promise<Memory> {
    return this.http.json({ method: "GET", path: this.path(bankId, memoryId), idempotent: true });
  }

  /** Its supersede chain (oldest → newest), merges and every action. */
  history(bankId: string, memoryId: string): Promise<MemoryHistory> {
    const path = `${this.path(bankId, memoryId)}/history`;
    return this.http.json({ method: "GET", path, idempotent: true });
  }

  /** A new unit with the changes, superseding this one (kept in its history). */
  update(bankId: string, memoryId: string, changes: MemoryPatch): Promise<Memory> {
    return this.http.json({ method: "PATCH", path: this.path(bankId, memoryId), json: changes });
  }

  /** Forget by the bank's policy (deleted and restorable, or downweighted). */
  forget(bankId: string, memoryId: string): Promise<Memory> {
    return this.http.json({ method: "DELETE", path: this.path(bankId, memoryId), idempotent: true });
  }

  restore(bankId: string, memoryId: string): Promise<Memory> {
    return this.http.json({ method: "POST", path: `${this.path(bankId, memoryId)}/restore` });
  }

  /** Erase its content and vectors for good (admin key); the history keeps a tombstone. */
  purge(bankId: string, memoryId: string): Promise<Memory> {
    const request: Request = {
      method: "DELETE",
      path: this.path(bankId, memoryId),
      query: { purge: "true" },
    };
    return this.http.json({ ...request, idempotent: true });
  }

  /** The proposed units (of propose-only keys) waiting for a review, newest first. */
  proposals(bankId: string, options: PageOptions = {}): AsyncGenerator<Memory, void, undefined> {
    return this.list(bankId, { ...options, status: "proposed" });
  }

  /** Accept a proposed unit (a `review` key): resolved now, returned as resolved. */
  accept(bankId: string, memoryId: string, decision: ReviewDecision = {}): Promise<Memory> {
    return this.http.json({ method: "POST", path: `${this.path(bankId, memoryId)}/accept`, json: decision });
  }

  /** Reject a proposed unit (a `review` key): `rejected`, never recalled; the `reason` is kept. */
  reject(bankId: string, memoryId: string, decision: ReviewDecision = {}): Promise<Memory> {
    return this.http.json({ method: "POST", path: `${this.path(bankId, memoryId)}/reject`, json: decision });
  }
}

export class Entities extends Resource {
  list(
    bankId: string,
    options: PageOptions & { q?: string; type?: string } = {},
  ): AsyncGenerator<Entity, void, undefined> {
    const query = { q: options.q, type: options.type, limit: options.pageSize ?? DEFAULT_PAGE_SIZE };
    return this.pages(`/v1/banks/${seg(bankId)}/entities`, query, "entities");
  }

  /** The entity, its relations both ways and the units that mention it. */
  get(
    bankId: string,
    entityId: string,
    options: { statuses?: string[]; limit?: number } = {},
  ): Promise<EntityDetail> {
    const path = `/v1/banks/${seg(bankId)}/entities/${seg(entityId)}`;
    return this.http.json({ method: "GET", path, query: options, idempotent: true });
  }

  /** What is true of the entity now, grouped by tag, every line citing its unit. */
  page(bankId: string, entityId: string): Promise<KnowledgePage> {
    const path = `/v1/banks/${seg(bankId)}/entities/${seg(entityId)}/page`;
    return this.http.json({ method: "GET", path, idempotent: true });
  }

  /** The page of the bank's main subject (its user). */
  profile(bankId: string): Promise<KnowledgePage> {
    return this.http.json({ method: "GET", path: `/v1/banks/${seg(bankId)}/profile`, idempotent: true });
  }
}

export interface TimelineFilters extends PageOptions {
  from?: string | Date;
  to?: string | Date;
  kinds?: ("event" | "memory" | "query" | "job")[];
  session_id?: string;
}

/** The Hindsight client. `new Hindsight()` reads `$HINDSIGHT_URL` and `$HINDSIGHT_API_KEY`. */
export class Hindsight extends Resource {
  readonly banks: Banks;
  readonly keys: Keys;
  readonly events: Events;
  readonly sessions: Sessions;
  readonly jobs: Jobs;
  readonly memories: Memories;
  readonly entities: Entities;

  constructor(options: ClientOptions = {}) {
    super(new Transport(options));
    this.banks = new Banks(this.http);
    this.keys = new Keys(this.http);
    this.events = new Events(this.http);
    this.jobs = new Jobs(this.http);
    this.sessions = new Sessions(this.http, this.jobs);
    this.memories = new Memories(this.http);
    this.entities = new Entities(this.http);
  }

  /** The service's URL this client talks to. */
  get baseURL(): string {
    return this.http.baseURL;
  }

  /** The agent this client writes as (`agentId`, else `$HINDSIGHT_AGENT_ID`), when one is set. */
  get agentId(): string | undefined {
    return this.http.agentId;
  }

  /** Every bank's LLM calls (admin key), as `banks.usage` counts them, with the service-wide budget. */
  usage(options: UsageOptions = {}): Promise<Usage> {
    return this.http.json({
      method: "GET",
      path: "/v1/admin/usage",
      query: usageQuery(options),
      idempotent: true,
    });
  }

  /** Recall: the units that matter for `query` and the prompt-ready `context` block. */
  query(bankId: string, query: string, options: QueryOptions = {}): Promise<QueryResult> {
    const path = `/v1/banks/${seg(bankId)}/query`;
    return this.http.json({ method: "POST", path, json: { ...options, query }, idempotent: true });
  }

  /** Every write and read of the bank in time order (the memory replay). */
  timeline(bankId: string, filters: TimelineFilters = {}): AsyncGenerator<TimelineItem, void, undefined> {
    const { pageSize, from, to, ...rest } = filters;
    const query: Query = { ...rest, from: iso(from), to: iso(to), limit: pageSize ?? DEFAULT_PAGE_SIZE };
    return this.pages(`/v1/banks/${seg(bankId)}/timeline`, query, "items");
  }

  /** Replay distillation over the raw events; the job's result is the diff (a dry run by default). */
  async redistill(bankId: string, options: { sessionIds?: string[]; dryRun?: boolean } = {}): Promise<Job> {
    const json = { session_ids: options.sessionIds, dry_run: options.dryRun ?? true };
    const path = `/v1/banks/${seg(bankId)}/redistill`;
    const accepted = await this.http.json<{ job_id: string }>({ method: "POST", path, json });
    return this.jobs.get(accepted.job_id);
  }

  /** The agent loop: `recall` before answering, `record` each turn, `reflect` at the end of a task. */
  memorySession(bankId: string, sessionId: string, options: MemorySessionOptions = {}): MemorySession {
    return new MemorySession(this, bankId, sessionId, options);
  }
}
