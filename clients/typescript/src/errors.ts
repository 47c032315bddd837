// Errors: one class per HTTP status of the API, built from its problem+json (RFC 9457), and the
// transport's own (no answer came back). The names and statuses are the Python client's.

/** Base of every error this client throws. */
export class HindsightError extends Error {
  override name = "HindsightError";
}

/** One entry of a 422's `errors`: where (`loc`), what (`msg`), and the kind of problem (`type`). */
export interface ProblemEntry {
  loc?: (string | number)[];
  msg?: string;
  type?: string;
  [key: string]: unknown;
}

/** The server answered with an error status; the fields are those of its problem+json. */
export class APIError extends HindsightError {
  override name = "APIError";
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly errors: ProblemEntry[] | null;
  readonly headers: Headers | null;

  constructor(
    status: number,
    title: string,
    detail: string,
    options: { type?: string; errors?: ProblemEntry[] | null; headers?: Headers | null } = {},
  ) {
    super(detail ? `${status} ${title}: ${detail}` : `${status} ${title}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.type = options.type ?? "about:blank";
    this.errors = options.errors ?? null;
    this.headers = options.headers ?? null;
  }

  /** Seconds the server asked to wait (its `Retry-After`), or null when it did not say. */
  get retryAfter(): number | null {
    return this.headers ? retryAfterSeconds(this.headers) : null;
  }
}

/** 400: malformed JSON body or cursor. */
export class BadRequestError extends APIError {
  override name = "BadRequestError";
}
/** 401: missing, wrong or revoked key. */
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
}
/** 403: the key lacks the scope, or the operation is admin-only. */
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
}
/** 404: not found, or another bank's. */
export class NotFoundError extends APIError {
  override name = "NotFoundError";
}
/** 409: conflicts with the current state (a bank that exists, a unit that is not active). */
export class ConflictError extends APIError {
  override name = "ConflictError";
}
/** 422: invalid input; `errors` holds one entry per problem. */
export class UnprocessableEntityError extends APIError {
  override name = "UnprocessableEntityError";
}
/** 429: the key's rate limit is spent; `retryAfter` says for how long. */
export class RateLimitError extends APIError {
  override name = "RateLimitError";
}
/** 503: a backing service (the database) is unavailable. */
export class ServiceUnavailableError extends APIError {
  override name = "ServiceUnavailableError";
}

/** No answer: the server could not be reached, or the connection broke before its reply. */
export class APIConnectionError extends HindsightError {
  override name = "APIConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within the client's `timeout`. */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";
}

/** `jobs.wait` gave up: the job had not finished within its timeout; `job` is its last state. */
export class JobTimeoutError extends HindsightError {
  override name = "JobTimeoutError";
  readonly job: unknown;
  constructor(message: string, job: unknown) {
    super(message);
    this.job = job;
  }
}

const STATUS_ERRORS: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The error for an error response: its problem+json fields, or what a non-problem body allows. */
export async function errorFromResponse(response: Response): Promise<APIError> {
  const text = await response.text().catch(() => "");
  let problem: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      problem = parsed as Record<string, unknown>;
    }
  } catch {
    // a proxy's HTML page: keep the start of the text as the detail
  }
  const Cls = STATUS_ERRORS[response.status] ?? APIError;
  const errors = Array.isArray(problem.errors) ? (problem.errors as ProblemEntry[]) : null;
  const hasProblem = Object.keys(problem).length > 0;
  return new Cls(
    response.status,
    String(problem.title ?? (response.statusText || "Error")),
    String(problem.detail ?? (hasProblem ? "" : text.slice(0, 500))),
    { type: String(problem.type ?? "about:blank"), errors, headers: response.headers },
  );
}

/** `Retry-After` in seconds (a number or an HTTP date), or null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}
