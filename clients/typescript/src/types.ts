// The service's models, by the names its OpenAPI document gives them (src/openapi.ts is generated).
import type { components } from "./openapi.js";

type Schemas = components["schemas"];

export type Bank = Schemas["BankRead"];
export type BankConfig = Schemas["BankConfig"];
export type BankStats = Schemas["BankStats"];
export type ApiKey = Schemas["KeyCreated"];
/** `read`, `write`, `propose` (writes become proposals waiting for a review), `review`. */
export type KeyScope = Schemas["KeyCreate"]["scopes"][number];
export type EventIn = Schemas["EventIn"];
export type Event = Schemas["EventRead"];
export type AppendResult = Schemas["AppendResult"];
export type Session = Schemas["SessionRead"];
export type ClosedSession = Schemas["SessionClosed"];
export type WorkingMemory = Schemas["WorkingMemoryRead"];
export type Job = Schemas["JobRead"];
export type QueryRequest = Schemas["QueryRequest"];
export type QueryResult = Schemas["QueryResult"];
export type ScoredMemory = Schemas["ScoredMemory"];
export type Memory = Schemas["MemoryRead"];
export type MemoryCreate = Schemas["MemoryCreate"];
export type MemoryPatch = Schemas["MemoryPatch"];
export type MemoryHistory = Schemas["MemoryHistoryRead"];
export type Entity = Schemas["EntityRead"];
export type EntityDetail = Schemas["EntityDetailRead"];
export type KnowledgePage = Schemas["KnowledgePage"];
export type TimelineItem = Schemas["TimelinePage"]["items"][number];
export type ImportResult = Schemas["ImportResult"];
/** LLM calls in a window: `totals`, `groups` (by day, operation or model) and today's `budget`. */
export type Usage = Schemas["UsageReport"];
export type UsageGroup = Schemas["UsageGroup"];
export type UsageTotals = Schemas["UsageTotals"];
/** The review of a proposed unit: the `reason` is kept in its history. */
export type ReviewDecision = Schemas["ReviewDecision"];

/** A written unit: as the server answered it, with the `job_id` of its resolution (null when resolved). */
export type WrittenMemory = Memory & { job_id: string | null };

/** What `query` takes beside the question (the server's fields; defaults apply when left out). */
export type QueryOptions = Partial<Omit<QueryRequest, "query">>;

/** A memory's fields beside its content and tags (`confidence`, `importance`, `entities`, …). */
export type MemoryFields = Partial<Omit<MemoryCreate, "content" | "tags">>;
