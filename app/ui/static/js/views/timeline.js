// The memory replay: every write and read of the bank in time order, a density chart of them, and
// the bank's active memory as of any instant picked on it.
import { html, useContext } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { KINDS, density, peak } from "../density.js";
import { path } from "../routes.js";
import { formatTime, toLocalInput, zonedToUtc } from "../time.js";
import { BankContext, Empty, Loading, More, Problem, Status, Tags, Time, navigate, shortId, usePages, useLoad } from "../ui.js";

const PAGE = 200;
const BUCKETS = 48;

function Chart({ items, onPick, timeZone }) {
  const buckets = density(items, BUCKETS);
  if (!buckets.length) return null;
  const top = peak(buckets);
  const width = 100 / BUCKETS;
  return html`
    <figure class="chart">
      <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img"
        aria-label=${`${items.length} items from ${formatTime(new Date(buckets[0].start).toISOString(), timeZone)} to ${formatTime(new Date(buckets[BUCKETS - 1].end).toISOString(), timeZone)}`}>
        ${buckets.map((b, i) => {
          let y = 40;
          return html`<g class="bucket" onClick=${() => onPick(new Date(b.end).toISOString())}>
            <title>${formatTime(new Date(b.start).toISOString(), timeZone)}: ${KINDS.map((k) => `${b.counts[k]} ${k}`).join(", ")}</title>
            <rect class="hit" x=${i * width} y="0" width=${width} height="40" />
            ${KINDS.map((k) => {
              const h = (b.counts[k] / top) * 38;
              y -= h;
              return h ? html`<rect class=${`kind-${k}`} x=${i * width + width * 0.1} y=${y} width=${width * 0.8} height=${h} />` : null;
            })}
          </g>`;
        })}
      </svg>
      <figcaption>
        ${KINDS.map((k) => html`<span class=${`legend kind-${k}`}>${k}</span> `)}
        <span class="muted">— ${items.length} loaded items; click a bar to see what was active at its end.</span>
      </figcaption>
    </figure>`;
}

function Item({ bank, item, onPick }) {
  let body;
  if (item.kind === "event") {
    body = html`<a href=${path("banks", bank, "sessions", item.session_id)}>${item.session_id}</a> #${item.seq}${" "}<span class=${`role role-${item.role}`}>${item.speaker || item.role}</span> ${item.content}${item.content_truncated ? "…" : ""}${item.agent_id ? html` <span class="muted" data-testid="timeline-agent">agent ${item.agent_id}</span>` : null}`;
  } else if (item.kind === "memory") {
    const d = item.details || {};
    body = html`<strong>${item.action}</strong> <span class="muted">by ${item.actor}${item.agent_id ? html` (agent <span data-testid="timeline-agent">${item.agent_id}</span>)` : null}</span>
      ${d.from || d.to ? html` <span class="muted">${d.from ?? "∅"} → ${d.to ?? "∅"}</span>` : null}${" · "}<a href=${path("banks", bank, "memories", item.memory_id)}>${item.content ?? shortId(item.memory_id)}${item.content_truncated ? "…" : ""}</a>
      ${d.reason ? html` <span class="muted">(${d.reason})</span>` : null}`;
  } else if (item.kind === "query") {
    body = html`<q>${item.query}</q> → ${item.result_ids.length
      ? item.result_ids.map((id) => html`<a class="id" data-testid="query-result-id" href=${path("banks", bank, "memories", id)}>${shortId(id)}</a> `)
      : html`<span class="muted">nothing</span>`} <span class="muted">${item.took_ms.toFixed(1)} ms</span>`;
  } else {
    body = html`${item.job_kind} <strong>${item.phase}</strong> <span class="muted">${item.status}</span>
      ${item.error ? html`<span class="problem-inline">${item.error}</span>` : null}`;
  }
  return html`
    <li class=${`item kind-${item.kind}`} data-testid="timeline-item" data-kind=${item.kind}>
      <span class="when"><${Time} iso=${item.at} /></span>
      <span class=${`badge kind-${item.kind}`}>${item.kind}</span>
      <span class="what">${body}</span>
      <button type="button" class="small" onClick=${() => onPick(item.at)} title="Show what was active at this instant">as of</button>
    </li>`;
}

function AsOf({ bank, at }) {
  const active = useLoad(() => api.get(bankPath(bank, "memories"), { as_of: at, limit: 100 }), [bank, at]);
  return html`
    <section class="as-of" data-testid="as-of" aria-live="polite">
      <h2>Active as of <${Time} iso=${at} /></h2>
      <${Problem} error=${active.error} />
      ${active.loading
        ? html`<${Loading} />`
        : active.data && active.data.memories.length
          ? html`<ul>${active.data.memories.map(
              (m) => html`<li data-testid="as-of-memory"><a href=${path("banks", bank, "memories", m.id)}>${m.content}</a>
                <${Tags} tags=${m.tags} /> <span class="muted">now</span> <${Status} status=${m.status} /></li>`,
            )}</ul>${active.data.next_cursor ? html`<p class="muted">The first 100 shown.</p>` : null}`
          : html`<${Empty}>Nothing was active then.<//>`}
    </section>`;
}

export function TimelineView({ params, search }) {
  const { timeZone } = useContext(BankContext);
  const bank = params.bank;
  const kinds = (search.get("kinds") || KINDS.join(",")).split(",").filter((k) => KINDS.includes(k));
  const filters = {
    kinds: kinds.join(","),
    session_id: search.get("session_id") || "",
    from: search.get("from") || "",
    to: search.get("to") || "",
  };
  const at = search.get("at");
  const pages = usePages(async (cursor) => {
    const page = await api.get(bankPath(bank, "timeline"), { ...filters, limit: PAGE, cursor });
    return { items: page.items, next_cursor: page.next_cursor };
  }, [bank, filters.kinds, filters.session_id, filters.from, filters.to]);

  const go = (next) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) query.set(name, value);
    history.replaceState(null, "", `${path("banks", bank, "timeline")}?${query}`);
    dispatchEvent(new PopStateEvent("popstate"));
  };
  const pick = (instant) => go({ ...filters, at: instant });
  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const chosen = KINDS.filter((k) => form.get(`kind_${k}`));
    navigate(
      `${path("banks", bank, "timeline")}?${new URLSearchParams(
        Object.entries({
          kinds: chosen.length === KINDS.length ? "" : chosen.join(","),
          session_id: String(form.get("session_id") || "").trim(),
          from: zonedToUtc(String(form.get("from") || ""), timeZone) || "",
          to: zonedToUtc(String(form.get("to") || ""), timeZone) || "",
          at: zonedToUtc(String(form.get("at") || ""), timeZone) || "",
        }).filter(([, v]) => v),
      )}`,
    );
  };
  return html`
    <h1>Timeline</h1>
    <form class="filters" onSubmit=${apply} key=${JSON.stringify(filters) + at}>
      <fieldset><legend>Kinds</legend>
        ${KINDS.map((k) => html`<label class="check"><input type="checkbox" name=${`kind_${k}`} checked=${kinds.includes(k)} /> ${k}</label>`)}
      </fieldset>
      <label>Session <input name="session_id" value=${filters.session_id} /></label>
      <label>From <input type="datetime-local" step="1" name="from" value=${toLocalInput(filters.from, timeZone)} /></label>
      <label>To <input type="datetime-local" step="1" name="to" value=${toLocalInput(filters.to, timeZone)} /></label>
      <label>Instant <input type="datetime-local" step="1" name="at" data-testid="instant" value=${toLocalInput(at, timeZone)} /></label>
      <button type="submit" class="primary">Apply</button>
    </form>
    <${Problem} error=${pages.error} />
    <${Chart} items=${pages.items} onPick=${pick} timeZone=${timeZone} />
    <div class=${at ? "replay with-instant" : "replay"}>
      <div>
        ${pages.items.length
          ? html`<ol class="timeline">${pages.items.map((item) => html`<${Item} key=${item.id} bank=${bank} item=${item} onPick=${pick} />`)}</ol>`
          : pages.loading
            ? html`<${Loading} what="Loading the timeline" />`
            : html`<${Empty}>Nothing happened in this window.<//>`}
        <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} label="Later items" />
      </div>
      ${at ? html`<${AsOf} bank=${bank} at=${at} />` : null}
    </div>`;
}
