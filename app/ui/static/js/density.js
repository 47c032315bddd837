// The timeline's density chart: items counted per time bucket and kind. Pure: unit-tested in the browser.

export const KINDS = ["event", "memory", "query", "job"];

/** Items (each with `at` and `kind`) → `buckets` equal spans from the first to the last item:
 * [{start, end, counts: {event, memory, query, job}, total}] (ms since the epoch). An item at the very
 * end falls in the last bucket. No items → []. */
export function density(items, buckets = 40) {
  if (!items.length) return [];
  const times = items.map((item) => Date.parse(item.at));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const span = Math.max(last - first, 1);
  const width = span / buckets;
  const out = Array.from({ length: buckets }, (_, i) => ({
    start: first + i * width,
    end: first + (i + 1) * width,
    counts: Object.fromEntries(KINDS.map((k) => [k, 0])),
    total: 0,
  }));
  items.forEach((item, i) => {
    const index = Math.min(Math.floor((times[i] - first) / width), buckets - 1);
    out[index].counts[item.kind] = (out[index].counts[item.kind] || 0) + 1;
    out[index].total += 1;
  });
  return out;
}

/** The tallest bucket's total (at least 1, so heights can be divided by it). */
export function peak(buckets) {
  return Math.max(1, ...buckets.map((b) => b.total));
}
