// hindsight-memory: the TypeScript client of Hindsight, agent memory as a service.
export {
  Banks,
  Entities,
  Events,
  type EventInput,
  Hindsight,
  Jobs,
  Keys,
  Memories,
  type MemoryFilters,
  type PageOptions,
  Sessions,
  type TimelineFilters,
  type UsageOptions,
  jobFinished,
} from "./client.js";
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  HindsightError,
  JobTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  type ProblemEntry,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableEntityError,
} from "./errors.js";
export { type ClientOptions, VERSION } from "./http.js";
export { MemorySession, type MemorySessionOptions, renderRecall } from "./session.js";
export { MEMORY_TOOLS, type MemoryToolSpec, queryText, runTool, unitText } from "./tools.js";
export type * from "./types.js";
export type { components, paths } from "./openapi.js";
