// The console's only door to the API: the key from session storage as a bearer header, JSON in and
// out, problem+json turned into ApiError. A 401 (a key expired or revoked) signs the console out.

const STORAGE = "hindsight.console";
const listeners = new Set();

export class ApiError extends Error {
  constructor(status, problem) {
    super(problemMessage(status, problem));
    this.status = status;
    this.problem = problem;
  }
}

/** problem+json (or anything else a server sent) → one readable line. Pure. */
export function problemMessage(status, problem) {
  if (!problem || typeof problem !== "object") return `Request failed (${status}).`;
  const head = `${problem.title || "Error"} (${problem.status || status})`;
  const detail = problem.detail ? `: ${problem.detail}` : "";
  const errors = (problem.errors || [])
    .map((e) => `${(e.loc || []).filter((p) => p !== "body" && p !== "query").join(".")}: ${e.msg}`)
    .join("; ");
  return `${head}${detail}${errors ? ` (${errors})` : ""}`;
}

/** The signed-in key and what it may do: {key, principal: {admin, bank_id, scopes, agent_id}} or null. */
export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(STORAGE) || "null");
  } catch {
    return null;
  }
}

export function canWrite() {
  const s = session();
  return Boolean(s && (s.principal.admin || s.principal.scopes.includes("write")));
}

/** Whether the key may accept or reject proposed units (the `review` scope, or the admin key). */
export function canReview() {
  const s = session();
  return Boolean(s && (s.principal.admin || s.principal.scopes.includes("review")));
}

export function onSignOut(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signOut(message = null) {
  sessionStorage.removeItem(STORAGE);
  for (const listener of listeners) listener(message);
}

/** Checks the key with GET /v1/whoami and keeps it for this tab only. */
export async function signIn(key) {
  const principal = await call("GET", "/v1/whoami", { key });
  sessionStorage.setItem(STORAGE, JSON.stringify({ key, principal }));
  return principal;
}

function url(path, query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

async function call(method, path, { query, body, key } = {}) {
  const headers = { Accept: "application/json" };
  const token = key ?? session()?.key;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, { title: "Network error", detail: String(error.message || error) });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { title: response.statusText, detail: text.slice(0, 200) };
  }
  if (!response.ok) {
    const error = new ApiError(response.status, data);
    if (response.status === 401 && key === undefined) {
      signOut("Your key was refused (expired or revoked). Sign in again.");
    }
    throw error;
  }
  return data;
}

export const api = {
  get: (path, query) => call("GET", path, { query }),
  post: (path, body, query) => call("POST", path, { body, query }),
  patch: (path, body) => call("PATCH", path, { body }),
  del: (path, query) => call("DELETE", path, { query }),
};

/** `/v1/banks/{bank}/…` with each segment escaped. */
export function bankPath(bank, ...rest) {
  return ["/v1/banks", bank, ...rest].map((s, i) => (i ? encodeURIComponent(s) : s)).join("/");
}
