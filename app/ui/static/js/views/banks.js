// The banks list (counts, queue lag, last maintenance) and one bank's overview.
import { html, useContext } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { path } from "../routes.js";
import { formatSeconds } from "../time.js";
import { BankContext, Empty, Loading, More, Problem, Time, usePages, useLoad } from "../ui.js";
import { UsagePanel } from "./usage.js";

const sum = (counts) => Object.values(counts || {}).reduce((a, b) => a + b, 0);

function lastMaintenance(stats) {
  const runs = Object.entries(stats.maintenance || {});
  if (!runs.length) return null;
  return runs.reduce((a, b) => (a[1].finished_at > b[1].finished_at ? a : b));
}

function BankRow({ bank }) {
  const stats = useLoad(() => api.get(bankPath(bank.bank_id, "stats")), [bank.bank_id]);
  const s = stats.data;
  const last = s && lastMaintenance(s);
  return html`
    <tr data-testid="bank-row">
      <th scope="row"><a href=${path("banks", bank.bank_id)}>${bank.bank_id}</a>
        ${bank.name ? html`<div class="muted">${bank.name}</div>` : null}</th>
      ${s
        ? html`
          <td class="num">${s.memories_by_status.active || 0}</td>
          <td class="num">${sum(s.memories_by_status)}</td>
          <td class="num">${s.sessions}</td>
          <td class="num">${s.events}</td>
          <td class="num">${s.undistilled_events}</td>
          <td class="num">${s.queued_jobs} · ${formatSeconds(s.queue_lag_seconds)}</td>
          <td>${last
            ? html`${last[0]} <${BankContext.Provider} value=${{ timeZone: bank.config.timezone }}>
                <${Time} iso=${last[1].finished_at} /><//>`
            : html`<span class="muted">none yet</span>`}</td>`
        : html`<td colspan="7">${stats.error ? html`<${Problem} error=${stats.error} />` : "Loading…"}</td>`}
    </tr>`;
}

export function BanksView() {
  const pages = usePages(async (cursor) => {
    const page = await api.get("/v1/banks", { limit: 50, cursor });
    return { items: page.banks, next_cursor: page.next_cursor };
  }, []);
  return html`
    <h1>Banks</h1>
    <${Problem} error=${pages.error} />
    ${pages.items.length
      ? html`
        <div class="scroll">
          <table>
            <thead><tr>
              <th scope="col">Bank</th><th scope="col" class="num">Active</th><th scope="col" class="num">Units</th>
              <th scope="col" class="num">Sessions</th><th scope="col" class="num">Events</th>
              <th scope="col" class="num">Undistilled</th><th scope="col" class="num">Queue · lag</th>
              <th scope="col">Last maintenance</th>
            </tr></thead>
            <tbody>${pages.items.map((bank) => html`<${BankRow} key=${bank.bank_id} bank=${bank} />`)}</tbody>
          </table>
        </div>`
      : pages.loading
        ? html`<${Loading} what="Loading banks" />`
        : html`<${Empty}>No banks yet. Create one with <code>POST /v1/banks</code>.<//>`}
    <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} />`;
}

function Counts({ title, counts }) {
  const rows = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
  return html`
    <section class="card">
      <h3>${title}</h3>
      ${rows.length
        ? html`<dl class="counts">${rows.slice(0, 30).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
        : html`<${Empty}>None.<//>`}
    </section>`;
}

function Sessions({ bank }) {
  const pages = usePages(async (cursor) => {
    const page = await api.get(bankPath(bank, "sessions"), { limit: 50, cursor });
    return { items: page.sessions, next_cursor: page.next_cursor };
  }, [bank]);
  return html`
    <section>
      <h2>Sessions</h2>
      <${Problem} error=${pages.error} />
      ${pages.items.length
        ? html`
          <div class="scroll"><table>
            <thead><tr><th scope="col">Session</th><th scope="col">Status</th><th scope="col" class="num">Turns</th>
              <th scope="col" class="num">Distilled to</th><th scope="col">Last turn</th></tr></thead>
            <tbody>${pages.items.map(
              (s) => html`<tr data-testid="session-row">
                <th scope="row"><a href=${path("banks", bank, "sessions", s.session_id)}>${s.session_id}</a></th>
                <td>${s.status}</td><td class="num">${s.last_seq}</td><td class="num">${s.distilled_seq}</td>
                <td><${Time} iso=${s.last_event_at} /></td></tr>`,
            )}</tbody>
          </table></div>`
        : pages.loading
          ? html`<${Loading} what="Loading sessions" />`
          : html`<${Empty}>No sessions yet: append events to start one.<//>`}
      <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} />
    </section>`;
}

export function BankView({ params }) {
  const { bank } = useContext(BankContext);
  const stats = useLoad(() => api.get(bankPath(params.bank, "stats")), [params.bank]);
  const s = stats.data;
  return html`
    <h1>${bank.name || bank.bank_id}</h1>
    <${Problem} error=${stats.error} />
    ${stats.loading && !s ? html`<${Loading} what="Loading stats" />` : null}
    ${s
      ? html`
        <div class="stats">
          <div class="stat"><span class="value">${s.memories_by_status.active || 0}</span> active units</div>
          <div class="stat"><span class="value">${s.sessions}</span> sessions</div>
          <div class="stat"><span class="value">${s.events}</span> events</div>
          <div class="stat"><span class="value">${s.undistilled_events}</span> undistilled</div>
          <div class="stat"><span class="value">${s.queued_jobs}</span> queued jobs,
            lag ${formatSeconds(s.queue_lag_seconds)}</div>
        </div>
        <div class="cards">
          <${Counts} title="Units by status" counts=${s.memories_by_status} />
          <${Counts} title="Units by layer" counts=${s.memories_by_layer} />
          <${Counts} title="Units by tag" counts=${s.memories_by_tag} />
          <section class="card">
            <h3>Last maintenance runs</h3>
            ${Object.keys(s.maintenance).length
              ? html`<dl class="counts">${Object.entries(s.maintenance).map(
                  ([task, run]) => html`<dt>${task}</dt><dd>${run.status} <${Time} iso=${run.finished_at} />
                    ${Object.keys(run.changed || {}).length
                      ? html`<div class="muted">${Object.entries(run.changed).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(", ")}</div>`
                      : null}</dd>`,
                )}</dl>`
              : html`<${Empty}>No maintenance run has finished yet.<//>`}
          </section>
          <${UsagePanel} bank=${params.bank} />
        </div>`
      : null}
    <${Sessions} bank=${params.bank} />`;
}
