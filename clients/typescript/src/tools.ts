// The five memory tools of the MCP server — names, descriptions, flat JSON-schema arguments and the text
// results a model reads — for agent frameworks, over this client. `bankId` is bound by `memoryTools(hs,
// bankId)` instead of being an argument. A failure (bad arguments, an API error, the service unreachable)
// becomes a text the model can read and act on, as the MCP tools answer.
import type { Hindsight } from "./client.js";
import { APIConnectionError, APIError } from "./errors.js";
import type { Memory, QueryResult } from "./types.js";

/** A JSON schema as the tools use it: flat objects of scalars and string arrays. */
export type JsonSchema = { [key: string]: unknown };

export interface MemoryToolSpec {
  name: "memory_write" | "memory_query" | "memory_update" | "memory_forget" | "memory_reflect";
  description: string;
  parameters: JsonSchema;
  run: (hs: Hindsight, bankId: string, args: Record<string, unknown>) => Promise<string>;
}

const UNIT_FIELDS = (
  "id content tags status confidence importance supersedes superseded_by merged_into created_at " +
  "claim agent_id"
).split(" ");

/** A unit as the tools show it: its identity, content and place in its chain, as JSON. */
export function unitText(memory: Memory): string {
  const data = memory as unknown as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(UNIT_FIELDS.map((key) => [key, data[key] ?? null])));
}

/** A query's answer as the tools show it: the context block, then the ids to update or forget by. */
export function queryText(result: QueryResult): string {
  const lines = [result.context.trim() || "No stored memory matches."];
  if (result.memories.length > 0) {
    lines.push("", "Memory ids (for memory_update / memory_forget):");
    for (const m of result.memories) lines.push(`- ${m.id}: ${m.content}`);
  }
  if (result.working_memory && result.working_memory.length > 0) {
    lines.push("", "Recent turns of this session, not yet distilled:");
    for (const t of result.working_memory) lines.push(`- ${t.speaker || t.role}: ${t.content}`);
  }
  return lines.join("\n");
}

class InvalidArguments extends Error {}

/** Models often send a list as a JSON string, or one tag as a bare string: accept both. */
function list(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  let items = value;
  if (typeof value === "string") {
    const text = value.trim();
    if (text.startsWith("[")) {
      try {
        items = JSON.parse(text);
      } catch {
        throw new InvalidArguments(`${name}: Input should be a valid list`);
      }
    } else {
      items = text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean);
    }
  }
  if (!Array.isArray(items) || !items.every((item) => typeof item === "string")) {
    throw new InvalidArguments(`${name}: Input should be a list of strings`);
  }
  return items;
}

/** A number as models send it ("0.8" too), checked against the schema's bounds. */
function num(value: unknown, name: string, schema: JsonSchema): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new InvalidArguments(`${name}: Input should be a number`);
  if (schema.type === "integer" && !Number.isInteger(n))
    throw new InvalidArguments(`${name}: Input should be an integer`);
  if (typeof schema.minimum === "number" && n < schema.minimum) {
    throw new InvalidArguments(`${name}: Input should be greater than or equal to ${schema.minimum}`);
  }
  if (typeof schema.maximum === "number" && n > schema.maximum) {
    throw new InvalidArguments(`${name}: Input should be less than or equal to ${schema.maximum}`);
  }
  return n;
}

function str(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.trim() === "")
    throw new InvalidArguments(`${name}: Input should be a non-empty string`);
  return value;
}

/** The arguments read leniently, unknown ones refused and required ones demanded, as the MCP server does. */
function read(spec: MemoryToolSpec, args: Record<string, unknown>): Record<string, unknown> {
  const properties = spec.parameters.properties as Record<string, JsonSchema>;
  const required = (spec.parameters.required as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(args ?? {})) {
    if (!(name in properties)) throw new InvalidArguments(`${name}: Extra inputs are not permitted`);
  }
  for (const [name, schema] of Object.entries(properties)) {
    const value = args?.[name];
    const kind = schema.type;
    out[name] =
      kind === "array" ? list(value, name) : kind === "string" ? str(value, name) : num(value, name, schema);
    if (out[name] === undefined && required.includes(name))
      throw new InvalidArguments(`${name}: Field required`);
  }
  return out;
}

async function write(hs: Hindsight, bankId: string, a: Record<string, unknown>): Promise<string> {
  const fields = a.importance !== undefined ? { importance: a.importance as number } : {};
  const unit = await hs.memories.write(bankId, a.content as string, a.tags as string[], {
    wait: true,
    ...fields,
  });
  return unitText(unit);
}

async function query(hs: Hindsight, bankId: string, a: Record<string, unknown>): Promise<string> {
  const sessionId = a.session_id as string | undefined;
  const result = await hs.query(bankId, a.query as string, {
    top_k: a.top_k as number | undefined,
    tags: a.tags as string[] | undefined,
    session_id: sessionId,
    working_memory: sessionId !== undefined,
  });
  return queryText(result);
}

async function update(hs: Hindsight, bankId: string, a: Record<string, unknown>): Promise<string> {
  const { memory_id: memoryId, ...rest } = a;
  const changes = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (Object.keys(changes).length === 0) {
    throw new InvalidArguments("give at least one of content, tags, confidence, importance");
  }
  return unitText(await hs.memories.update(bankId, memoryId as string, changes));
}

async function forget(hs: Hindsight, bankId: string, a: Record<string, unknown>): Promise<string> {
  return unitText(await hs.memories.forget(bankId, a.memory_id as string));
}

async function reflect(hs: Hindsight, bankId: string, a: Record<string, unknown>): Promise<string> {
  const job = await hs.sessions.distill(bankId, a.session_id as string);
  return JSON.stringify({ job_id: job.id, session_id: a.session_id, status: job.status });
}

export const MEMORY_TOOLS: readonly MemoryToolSpec[] = [
  {
    name: "memory_write",
    description:
      "Call when the user states a lasting fact, preference, constraint or decision worth recalling in later sessions. One sentence per call.",
    parameters: {
      type: "object",
      properties: {
        content: {
          description: 'One self-contained sentence, e.g. "Ana\'s budget is 5000 EUR."',
          maxLength: 4000,
          minLength: 1,
          type: "string",
        },
        tags: {
          description:
            "Dotted kinds: fact, preference, constraint, task_state, correction, episode, or a child such as constraint.budget or preference.food.",
          items: { pattern: "^[a-z0-9_]+(?:\\.[a-z0-9_]+){0,4}$", type: "string" },
          maxItems: 16,
          minItems: 1,
          type: "array",
        },
        importance: { maximum: 1, minimum: 0, type: "number", description: "0 to 1; default 0.5." },
      },
      additionalProperties: false,
      required: ["content", "tags"],
    },
    run: write,
  },
  {
    name: "memory_query",
    description:
      "Call before answering anything that may depend on the user's facts, preferences or earlier sessions. Returns a prompt-ready context and memory ids.",
    parameters: {
      type: "object",
      properties: {
        query: {
          description: "What you want to know, in plain words.",
          maxLength: 2000,
          minLength: 1,
          type: "string",
        },
        top_k: {
          maximum: 100,
          minimum: 1,
          type: "integer",
          description: "At most this many memories; default 10.",
        },
        tags: {
          items: { pattern: "^[a-z0-9_]+(?:\\.[a-z0-9_]+){0,4}$", type: "string" },
          maxItems: 50,
          type: "array",
          description: "Only memories under these tag prefixes, e.g. constraint.",
        },
        session_id: {
          maxLength: 128,
          minLength: 1,
          pattern: "^[A-Za-z0-9._:-]*[A-Za-z0-9_:-][A-Za-z0-9._:-]*$",
          type: "string",
          description: "The current session: its recent turns not yet distilled are added.",
        },
      },
      additionalProperties: false,
      required: ["query"],
    },
    run: query,
  },
  {
    name: "memory_update",
    description:
      "Call when a memory returned by memory_query is wrong or out of date, to correct it by id. The old version stays in its history.",
    parameters: {
      type: "object",
      properties: {
        memory_id: {
          description: "The id of an active memory, from memory_query.",
          format: "uuid",
          type: "string",
        },
        content: { maxLength: 4000, minLength: 1, type: "string", description: "The corrected sentence." },
        tags: {
          items: { pattern: "^[a-z0-9_]+(?:\\.[a-z0-9_]+){0,4}$", type: "string" },
          maxItems: 16,
          minItems: 1,
          type: "array",
          description:
            "Dotted kinds: fact, preference, constraint, task_state, correction, episode, or a child such as constraint.budget or preference.food.",
        },
        importance: { maximum: 1, minimum: 0, type: "number", description: "0 to 1." },
        confidence: { maximum: 1, minimum: 0, type: "number", description: "0 to 1." },
      },
      additionalProperties: false,
      required: ["memory_id"],
    },
    run: update,
  },
  {
    name: "memory_forget",
    description:
      "Call when the user asks you to forget something, or a memory (by id from memory_query) must no longer be recalled.",
    parameters: {
      type: "object",
      properties: {
        memory_id: {
          description: "The id of the memory to forget, from memory_query.",
          format: "uuid",
          type: "string",
        },
      },
      additionalProperties: false,
      required: ["memory_id"],
    },
    run: forget,
  },
  {
    name: "memory_reflect",
    description:
      "Call at the end of a task or conversation to distil its turns (session_id) into memories now. Returns the job id.",
    parameters: {
      type: "object",
      properties: {
        session_id: {
          description: "The session whose conversation turns to distil now.",
          maxLength: 128,
          minLength: 1,
          pattern: "^[A-Za-z0-9._:-]*[A-Za-z0-9_:-][A-Za-z0-9._:-]*$",
          type: "string",
        },
      },
      additionalProperties: false,
      required: ["session_id"],
    },
    run: reflect,
  },
];

/** Run a tool: its result text, or the text of what went wrong (never a thrown error). */
export async function runTool(
  spec: MemoryToolSpec,
  hs: Hindsight,
  bankId: string,
  args: Record<string, unknown>,
): Promise<string> {
  try {
    return await spec.run(hs, bankId, read(spec, args));
  } catch (error) {
    if (error instanceof InvalidArguments) return `Invalid arguments: ${error.message}`;
    if (error instanceof APIError) return `${error.title} (${error.status}): ${error.detail}`;
    if (error instanceof APIConnectionError) {
      return `Service Unavailable: Hindsight could not be reached (${error.message}); retry shortly.`;
    }
    throw error;
  }
}
