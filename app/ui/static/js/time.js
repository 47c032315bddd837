// Times in a bank's time zone. Pure functions (no DOM): unit-tested in the browser (tests/browser).

const parts = (date, timeZone) => {
  const fmt = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  const out = {};
  for (const { type, value } of fmt.formatToParts(date)) out[type] = value;
  return out;
};

/** "2026-12-01T09:30:00Z" in "Asia/Shanghai" → "2026-12-01 17:30:00". */
export function formatTime(iso, timeZone = "UTC") {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const p = parts(date, timeZone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** The date part only: "2026-12-01". */
export function formatDate(iso, timeZone = "UTC") {
  return iso ? formatTime(iso, timeZone).slice(0, 10) : "—";
}

// Milliseconds the zone is ahead of UTC at the instant `ms`.
function offsetAt(ms, timeZone) {
  const p = parts(new Date(ms), timeZone);
  const wall = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/** A wall-clock time of a `datetime-local` input ("2026-12-01T17:30", seconds optional), read in
 * `timeZone`, → an RFC 3339 instant in UTC ("2026-12-01T09:30:00.000Z"); "" → null. A wall time that
 * a DST change skips resolves forwards, one it repeats to its first occurrence. */
export function zonedToUtc(local, timeZone = "UTC") {
  if (!local) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(local);
  if (!m) throw new Error(`not a local date-time: ${local}`);
  const asUtc = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0));
  const day = 86_400_000;
  // The zone's offset a day before and a day after: a wall time means one of the two.
  const before = asUtc - offsetAt(asUtc - day, timeZone);
  const after = asUtc - offsetAt(asUtc + day, timeZone);
  const wall = toLocalInput(new Date(asUtc).toISOString(), "UTC");
  const valid = [before, after].filter((ms) => toLocalInput(new Date(ms).toISOString(), timeZone) === wall);
  const chosen = valid.length ? Math.min(...valid) : before; // skipped: read with the offset before
  return new Date(chosen).toISOString();
}

/** An instant → the `datetime-local` value of its wall time in `timeZone` ("2026-12-01T17:30:00"). */
export function toLocalInput(iso, timeZone = "UTC") {
  if (!iso) return "";
  return formatTime(iso, timeZone).replace(" ", "T");
}

/** A duration in seconds, short: 42 s, 3.5 min, 2.0 h. */
export function formatSeconds(seconds) {
  if (seconds == null) return "—";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
