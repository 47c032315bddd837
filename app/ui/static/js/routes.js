// Deep links of the console (docs/guides/console.md) → a view and its parameters. Pure: unit-tested.

const ROUTES = [
  ["login", /^\/ui\/login\/?$/],
  ["banks", /^\/ui\/?$|^\/ui\/banks\/?$/],
  ["bank", /^\/ui\/banks\/(?<bank>[^/]+)\/?$/],
  ["memories", /^\/ui\/banks\/(?<bank>[^/]+)\/memories\/?$/],
  ["memory", /^\/ui\/banks\/(?<bank>[^/]+)\/memories\/(?<memory>[^/]+)\/?$/],
  ["proposals", /^\/ui\/banks\/(?<bank>[^/]+)\/proposals\/?$/],
  ["session", /^\/ui\/banks\/(?<bank>[^/]+)\/sessions\/(?<session>[^/]+)\/?$/],
  ["timeline", /^\/ui\/banks\/(?<bank>[^/]+)\/timeline\/?$/],
  ["recall", /^\/ui\/banks\/(?<bank>[^/]+)\/recall\/?$/],
  ["entities", /^\/ui\/banks\/(?<bank>[^/]+)\/entities\/?$/],
  ["entity", /^\/ui\/banks\/(?<bank>[^/]+)\/entities\/(?<entity>[^/]+)\/?$/],
];

/** "/ui/banks/b1/memories/u1" → {view: "memory", params: {bank: "b1", memory: "u1"}}; unknown → view null. */
export function matchRoute(pathname) {
  for (const [view, pattern] of ROUTES) {
    const m = pattern.exec(pathname);
    if (m) {
      const params = {};
      for (const [name, value] of Object.entries(m.groups || {})) params[name] = decodeURIComponent(value);
      return { view, params };
    }
  }
  return { view: null, params: {} };
}

/** Path segments → a console path with each segment escaped: path("banks", id, "memories"). */
export function path(...segments) {
  return "/ui/" + segments.map((s) => encodeURIComponent(s)).join("/");
}
