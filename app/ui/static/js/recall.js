// The recall tester's form → the query body, and the per-channel bars of its results.
// Pure: unit-tested in the browser.
import { zonedToUtc } from "./time.js";

export const CHANNELS = ["semantic", "keyword", "entity", "temporal", "tag"];
export const WEIGHTS = [...CHANNELS, "recency"];

const list = (text) =>
  (text || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const number = (text) => (text === "" || text == null ? undefined : Number(text));

/** Form fields (strings, as inputs hold them) → the body of POST …/query, with `explain` on.
 * Times are wall times in the bank's zone; empty fields are left out so the bank's defaults apply. */
export function queryBody(form, timeZone) {
  const body = { query: form.query.trim(), top_k: number(form.top_k) ?? 10, explain: true };
  const tags = list(form.tags);
  if (tags.length) body.tags = tags;
  const from = zonedToUtc(form.from, timeZone);
  const to = zonedToUtc(form.to, timeZone);
  if (from || to) body.time_range = { ...(from && { from }), ...(to && { to }) };
  const asOf = zonedToUtc(form.as_of, timeZone);
  if (asOf) body.as_of = asOf;
  if (form.fusion) body.fusion = form.fusion;
  const minScore = number(form.min_score);
  if (minScore !== undefined) body.min_score = minScore;
  const weights = {};
  for (const name of WEIGHTS) {
    const value = number(form[`w_${name}`]);
    if (value !== undefined) weights[name] = value;
  }
  if (Object.keys(weights).length) body.weights = weights;
  const statuses = list(form.statuses);
  if (statuses.length) body.statuses = statuses;
  if (form.rerank === "on" || form.rerank === "off") body.rerank = form.rerank === "on";
  if (form.context_why) body.context_why = true;
  if (form.session_id) {
    body.session_id = form.session_id.trim();
    body.working_memory = true;
  }
  return body;
}

/** Results → for each, the channels that found it: [{channel, rank, score, fraction}], where
 * `fraction` is the score over the best score of that channel among the results (raw scores of
 * different channels are on different scales, so each channel is scaled by itself). */
export function channelBars(memories) {
  const best = {};
  for (const m of memories) {
    for (const [channel, s] of Object.entries(m.scores || {})) {
      best[channel] = Math.max(best[channel] ?? 0, s.score);
    }
  }
  return memories.map((m) =>
    Object.entries(m.scores || {})
      .sort(([a], [b]) => CHANNELS.indexOf(a) - CHANNELS.indexOf(b))
      .map(([channel, s]) => ({
        channel,
        rank: s.rank,
        score: s.score,
        fraction: best[channel] > 0 ? Math.max(s.score, 0) / best[channel] : 0,
      })),
  );
}

/** A channel's raw score, short: 0.454, -0.018, 1.796e+9 (a temporal or tag channel's raw scale). */
export function formatScore(score) {
  return Math.abs(score) >= 1000 ? score.toPrecision(4) : score.toFixed(3);
}
