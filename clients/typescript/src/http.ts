// The transport: one request, its retries and its errors. A 429 is retried for any call (the server did
// nothing); a 503 or a lost reply only for a call that is safe to send again (reads, deletes, appends
// whose events carry external ids, a session's distill and close); a connection that never opened,
// always. Waits follow the server's `Retry-After`, else back off exponentially with jitter.
import {
  APIConnectionError,
  APITimeoutError,
  HindsightError,
  errorFromResponse,
  retryAfterSeconds,
} from "./errors.js";

export const VERSION = "0.1.0";
export const DEFAULT_URL = "http://127.0.0.1:8000"; // `make up`
const BACKOFF_BASE = 0.5;
const BACKOFF_MAX = 8;
const RETRY_AFTER_MAX = 60;
// Error codes of a connection that never opened: nothing reached the server.
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

export interface ClientOptions {
  /** The service's URL; default `$HINDSIGHT_URL`, else http://127.0.0.1:8000. */
  baseURL?: string;
  /** An admin or bank key; default `$HINDSIGHT_API_KEY`. */
  apiKey?: string;
  /** The agent this client writes as when its key names none (the `X-Agent-Id` header); default
   *  `$HINDSIGHT_AGENT_ID`. A key that names another agent is refused (403). */
  agentId?: string;
  /** Milliseconds to wait for an answer (per attempt); default 30 000. */
  timeout?: number;
  /** Retries of a failed call that may be retried (see the README); default 2. */
  maxRetries?: number;
  /** The `fetch` to use; default the global one (Node 18+). */
  fetch?: typeof fetch;
  /** How to wait between retries and polls (milliseconds); default a timer. For tests. */
  sleep?: (ms: number) => Promise<void>;
}

export type Query = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export interface Request {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Query;
  json?: unknown;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
  /** May be sent again after its reply was lost (a 503, a broken connection). */
  idempotent?: boolean;
}

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name] || undefined;
}

/** A path segment: nothing a caller passes may change the path. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

export class Transport {
  readonly baseURL: string;
  readonly maxRetries: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly agentId: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly timeout: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: ClientOptions = {}) {
    const maxRetries = options.maxRetries ?? 2;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new HindsightError("maxRetries must be an integer, 0 or more");
    }
    this.baseURL = (options.baseURL ?? env("HINDSIGHT_URL") ?? DEFAULT_URL).replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? env("HINDSIGHT_API_KEY");
    this.agentId = options.agentId || env("HINDSIGHT_AGENT_ID");
    this.timeout = options.timeout ?? 30_000;
    this.maxRetries = maxRetries;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  url(path: string, query?: Query): string {
    const url = new URL(this.baseURL + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      url.searchParams.set(key, Array.isArray(value) ? value.join(",") : String(value));
    }
    return url.toString();
  }

  private init(request: Request): RequestInit {
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": `hindsight-memory-js/${VERSION}`,
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      ...(this.agentId ? { "x-agent-id": this.agentId } : {}),
      ...request.headers,
    };
    let body = request.body;
    if (request.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.json);
    }
    const init: RequestInit & { duplex?: "half" } = { method: request.method, headers, body };
    if (body instanceof ReadableStream) init.duplex = "half"; // a streamed upload (an import)
    return init;
  }

  /** The response of a 2xx; else the error for what came back, after the retries it allows. */
  async send(request: Request): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let response: Response | null = null;
      let retry: boolean;
      // The timeout bounds the wait for the answer's headers, not the reading of its body: an export
      // streams for as long as the bank takes (as the Python client's read timeout allows).
      const answered = new AbortController();
      const timer = setTimeout(
        () => answered.abort(new DOMException("no answer in time", "TimeoutError")),
        this.timeout,
      );
      try {
        const init = { ...this.init(request), signal: answered.signal };
        response = await this.fetchFn(this.url(request.path, request.query), init);
      } catch (error) {
        const notSent = NOT_SENT.has(errorCode(error));
        retry = (request.idempotent === true || notSent) && !(request.body instanceof ReadableStream);
        if (!retry || attempt >= this.maxRetries) throw transportError(error, this.baseURL);
        await this.sleep(backoff(attempt, null));
        continue;
      } finally {
        clearTimeout(timer);
      }
      if (response.ok) return response;
      // (a streamed body is read by its first sending: never sent again, whatever the answer)
      retry =
        (response.status === 429 || (response.status === 503 && request.idempotent === true)) &&
        !(request.body instanceof ReadableStream);
      if (!retry || attempt >= this.maxRetries) throw await errorFromResponse(response);
      await response.body?.cancel();
      await this.sleep(backoff(attempt, response.headers));
    }
  }

  async json<T>(request: Request): Promise<T> {
    const response = await this.send(request);
    return (await response.json()) as T;
  }

  async none(request: Request): Promise<void> {
    const response = await this.send(request);
    await response.body?.cancel();
  }
}

/** Milliseconds before retry `attempt` (0-based): the server's `Retry-After`, else exponential with jitter. */
export function backoff(attempt: number, headers: Headers | null): number {
  const asked = headers ? retryAfterSeconds(headers) : null;
  if (asked !== null) return Math.min(asked, RETRY_AFTER_MAX) * 1000;
  const ceiling = Math.min(BACKOFF_MAX, BACKOFF_BASE * 2 ** attempt);
  return ceiling * (0.5 + Math.random() / 2) * 1000;
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === "string" ? cause.code : "";
}

function transportError(error: unknown, baseURL: string): APIConnectionError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new APITimeoutError(`No answer from ${baseURL} in time`, { cause: error });
  }
  const code = errorCode(error);
  const what = code || (error instanceof Error ? error.message : String(error));
  return new APIConnectionError(`Could not reach Hindsight at ${baseURL} (${what})`, { cause: error });
}
