// A session: its raw turns with the units distilled from each beside them, the working-memory tail
// (turns not yet distilled) and "distil now".
import { html, useState } from "../../vendor/htm-preact.js";
import { api, bankPath, canWrite } from "../api.js";
import { path } from "../routes.js";
import { Empty, Loading, More, Problem, Status, Tags, Time, usePages, useLoad } from "../ui.js";
import { STATUSES } from "./memories.js";

const TURNS_PER_PAGE = 100;
const MAX_UNIT_PAGES = 10; // 5 000 units: beyond that a session is read through the memories view

async function sessionUnits(bank, session) {
  const units = [];
  let cursor = null;
  for (let page = 0; page < MAX_UNIT_PAGES; page++) {
    const body = await api.get(bankPath(bank, "memories"), {
      session_id: session,
      status: STATUSES.join(","),
      limit: 500,
      cursor,
    });
    units.push(...body.memories);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return units;
}

// Control and format characters (bidi overrides, zero-width spaces, escapes) other than newline and tab.
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}]/gu;

/** Raw text with its invisible characters shown as escapes (⟨U+202E⟩), never applied: a turn that starts
 * with bidi overrides would otherwise be shown reversed ("Trojan source"). */
export function shown(text) {
  return String(text).replace(
    INVISIBLE,
    (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

function Quarantined({ turns }) {
  if (!turns?.length) return null;
  return html`<div class="problem" role="note" data-testid="quarantined">
    <p>${turns.length} ${turns.length === 1 ? "turn was" : "turns were"} left out of distillation: the distiller
      failed on ${turns.length === 1 ? "it" : "them"} (the rest of the session was distilled).</p>
    <ul>${turns.map((q) => html`<li data-testid="quarantined-turn" data-seq=${q.seq}>turn #${q.seq}: ${q.reason}</li>`)}</ul>
  </div>`;
}

/** Units by the seq of each turn they were distilled from (a unit of several turns is under each). */
export function unitsBySeq(units, session) {
  const map = new Map();
  for (const unit of units) {
    if (unit.source.session_id !== session) continue;
    for (const seq of unit.source.seqs) {
      if (!map.has(seq)) map.set(seq, []);
      map.get(seq).push(unit);
    }
  }
  return map;
}

async function waitForJob(jobId, onProgress) {
  for (let i = 0; i < 240; i++) {
    const job = await api.get(`/v1/jobs/${encodeURIComponent(jobId)}`);
    onProgress(job);
    if (job.status === "succeeded" || job.status === "failed") return job;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return null;
}

function DistilNow({ bank, session, onDone }) {
  const [job, setJob] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  if (!canWrite()) return null;
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const { job_id } = await api.post(bankPath(bank, "sessions", session, "distill"));
      const done = await waitForJob(job_id, setJob);
      onDone();
      if (done?.status === "failed") setError(new Error(`The distillation failed: ${done.error}`));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <div class="row">
      <button type="button" class="primary" onClick=${run} disabled=${busy} data-testid="distill-now">
        ${busy ? "Distilling…" : "Distil now"}</button>
      ${job ? html`<span role="status" data-testid="distill-status">job ${job.status}${job.result?.units != null ? `, ${job.result.units} units` : ""}</span>` : null}
      <${Problem} error=${error} />
    </div>`;
}

export function SessionView({ params }) {
  const { bank, session } = params;
  const info = useLoad(() => api.get(bankPath(bank, "sessions", session)), [bank, session]);
  const units = useLoad(() => sessionUnits(bank, session), [bank, session]);
  const working = useLoad(() => api.get(bankPath(bank, "sessions", session, "working_memory")), [bank, session]);
  const turns = usePages(async (cursor) => {
    const page = await api.get(bankPath(bank, "sessions", session, "events"), { limit: TURNS_PER_PAGE, cursor });
    return { items: page.events, next_cursor: page.next_cursor };
  }, [bank, session]);
  const refresh = () => {
    info.reload();
    units.reload();
    working.reload();
    turns.reload();
  };
  if (info.error) return html`<${Problem} error=${info.error} />`;
  const s = info.data;
  const bySeq = unitsBySeq(units.data || [], session);
  const quarantined = new Map((s?.quarantined || []).map((q) => [q.seq, q.reason]));
  return html`
    <h1>Session ${session}</h1>
    ${s
      ? html`<p>${s.status} · ${s.last_seq} turns · distilled up to turn ${s.distilled_seq} · started${" "}<${Time} iso=${s.created_at} /></p>`
      : html`<${Loading} />`}
    <${Quarantined} turns=${s?.quarantined} />
    <${DistilNow} bank=${bank} session=${session} onDone=${refresh} />
    <${Problem} error=${units.error || turns.error} />
    <h2>Turns and the units distilled from them</h2>
    ${turns.items.length
      ? html`<ol class="session">${turns.items.map(
          (e) => html`<li class="pair">
            <div class="turn" data-testid="session-turn" data-seq=${e.seq}>
              <span class="seq">#${e.seq}</span> <span class=${`role role-${e.role}`}>${e.speaker || e.role}</span>
              <p>${shown(e.content)}</p><div class="muted small"><${Time} iso=${e.occurred_at} /></div>
            </div>
            <div class="units">
              ${(bySeq.get(e.seq) || []).map(
                (u) => html`<a class="unit-chip" data-testid="session-unit" href=${path("banks", bank, "memories", u.id)}>
                  <${Status} status=${u.status} /> ${shown(u.content)} <${Tags} tags=${u.tags} /></a>`,
              )}
              ${quarantined.has(e.seq)
                ? html`<span class="muted" data-testid="turn-quarantined">quarantined: ${quarantined.get(e.seq)}</span>`
                : null}
              ${s && e.seq > s.distilled_seq ? html`<span class="muted">not distilled yet</span>` : null}
            </div>
          </li>`,
        )}</ol>`
      : turns.loading
        ? html`<${Loading} what="Loading turns" />`
        : html`<${Empty}>No turns.<//>`}
    <${More} cursor=${turns.cursor} loading=${turns.loading} onMore=${turns.more} label="More turns" />
    <h2>Working memory</h2>
    <${Problem} error=${working.error} />
    ${working.data
      ? working.data.turns.length
        ? html`<p class="muted">The ${working.data.turns.length} newest turns not yet distilled (from ${working.data.source}).</p>
          <ol class="turns">${working.data.turns.map(
            (t) => html`<li data-testid="working-turn"><span class="seq">#${t.seq}</span>
              <span class=${`role role-${t.role}`}>${t.speaker || t.role}</span> ${shown(t.content)}</li>`,
          )}</ol>`
        : html`<${Empty}>Every turn is distilled: the working memory is empty.<//>`
      : html`<${Loading} />`}`;
}
