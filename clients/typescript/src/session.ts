// The agent loop in three calls: recall before answering, record each turn, reflect at the end of a
// task; `close()` (or `await using`) when the conversation ends.
import type { Hindsight, EventInput } from "./client.js";
import { withExternalId } from "./client.js";
import { NotFoundError } from "./errors.js";
import type { AppendResult, ClosedSession, EventIn, Job, QueryOptions, QueryResult } from "./types.js";

export interface MemorySessionOptions extends QueryOptions {
  /** Turns kept before they are sent (they are sent before a recall or reflect anyway); default 20. */
  bufferSize?: number;
}

/** The block for a system prompt: the distilled memory, then the session's turns not yet distilled. */
export function renderRecall(result: QueryResult): string {
  const parts = result.context.trim() ? [result.context.trim()] : [];
  if (result.working_memory && result.working_memory.length > 0) {
    const lines = ["Recent turns of this session, not yet distilled:"];
    for (const turn of result.working_memory) lines.push(`- ${turn.speaker || turn.role}: ${turn.content}`);
    parts.push(lines.join("\n"));
  }
  return parts.join("\n\n");
}

export class MemorySession {
  readonly bankId: string;
  readonly sessionId: string;
  private readonly hs: Hindsight;
  private readonly bufferSize: number;
  private readonly options: QueryOptions;
  private pending: EventIn[] = [];
  private closed = false;
  private sent = false;

  constructor(hs: Hindsight, bankId: string, sessionId: string, options: MemorySessionOptions = {}) {
    const { bufferSize = 20, ...queryOptions } = options;
    if (!Number.isInteger(bufferSize) || bufferSize < 1)
      throw new RangeError("bufferSize must be at least 1");
    this.hs = hs;
    this.bankId = bankId;
    this.sessionId = sessionId;
    this.bufferSize = bufferSize;
    this.options = queryOptions;
  }

  /** Record a turn (`speaker`, `occurred_at`, `metadata` in `fields`); sent in batches. */
  async record(role: EventIn["role"], content: string, fields: Partial<EventInput> = {}): Promise<void> {
    if (this.closed) throw new Error("the memory session is closed");
    // The id is given now, so a flush that fails and is tried again stores the turn once.
    this.pending.push(withExternalId({ ...fields, role, content }));
    if (this.pending.length >= this.bufferSize) await this.flush();
  }

  /** Send the buffered turns now. */
  async flush(): Promise<AppendResult | null> {
    if (this.pending.length === 0) return null;
    const batch = [...this.pending];
    const result = await this.hs.events.append(this.bankId, this.sessionId, batch);
    this.pending.splice(0, batch.length);
    this.sent = true;
    return result;
  }

  /** The context block for `text`, the session's undistilled turns included, ready for a system prompt. */
  async recall(text: string, options: QueryOptions = {}): Promise<string> {
    await this.flush();
    const merged = { ...this.options, ...options, session_id: this.sessionId, working_memory: true };
    return renderRecall(await this.hs.query(this.bankId, text, merged));
  }

  /** Distil the session's undistilled turns now: the job (finished, with `wait`), or null before any turn. */
  async reflect(options: { wait?: boolean; timeout?: number } = {}): Promise<Job | null> {
    await this.flush();
    let job: Job;
    try {
      job = await this.hs.sessions.distill(this.bankId, this.sessionId);
    } catch (error) {
      return this.unrecorded(error);
    }
    if (options.wait) job = await this.hs.jobs.wait(job.id, { timeout: options.timeout });
    return job;
  }

  /** Send what is buffered and close the session, which distils what is left. */
  async close(): Promise<ClosedSession | null> {
    if (this.closed) return null;
    await this.flush();
    this.closed = true;
    try {
      return await this.hs.sessions.close(this.bankId, this.sessionId);
    } catch (error) {
      return this.unrecorded(error);
    }
  }

  /** `await using mem = hs.memorySession(…)` (where the runtime has the syntax): closed as the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** After a 404 for the session: fine when no turn was ever sent, as long as the bank exists. */
  private async unrecorded(error: unknown): Promise<null> {
    if (!(error instanceof NotFoundError) || this.sent) throw error;
    await this.hs.banks.get(this.bankId);
    return null;
  }
}
