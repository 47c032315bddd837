// The bank's units: filters in the URL (shareable, no key in it), newest first, cursor paging.
import { html, useContext } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { path } from "../routes.js";
import { toLocalInput, zonedToUtc } from "../time.js";
import { BankContext, Empty, Loading, More, Problem, Status, Tags, Time, navigate, usePages } from "../ui.js";

export const STATUSES = [
  "pending", "active", "superseded", "merged", "expired", "archived", "deleted", "proposed", "rejected",
];
const FILTERS = ["status", "tag", "entity", "session_id", "agent_id", "since", "until", "text"];

export function MemoriesView({ params, search }) {
  const { timeZone } = useContext(BankContext);
  const filters = Object.fromEntries(FILTERS.map((name) => [name, search.get(name) || ""]));
  const key = FILTERS.filter((n) => n !== "text").map((n) => filters[n]).join("|");
  const pages = usePages(async (cursor) => {
    const page = await api.get(bankPath(params.bank, "memories"), {
      status: filters.status,
      tag: filters.tag,
      entity: filters.entity,
      session_id: filters.session_id,
      agent_id: filters.agent_id,
      since: filters.since,
      until: filters.until,
      limit: 50,
      cursor,
    });
    return { items: page.memories, next_cursor: page.next_cursor };
  }, [params.bank, key]);

  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const query = new URLSearchParams();
    for (const name of FILTERS) {
      let value = String(form.get(name) || "").trim();
      if ((name === "since" || name === "until") && value) value = zonedToUtc(value, timeZone);
      if (value) query.set(name, value);
    }
    navigate(`${path("banks", params.bank, "memories")}${query.size ? `?${query}` : ""}`);
  };
  const needle = filters.text.toLowerCase();
  const rows = needle ? pages.items.filter((m) => m.content.toLowerCase().includes(needle)) : pages.items;

  return html`
    <h1>Memories</h1>
    <form class="filters" onSubmit=${apply} key=${key + filters.text}>
      <label>Status
        <select name="status" value=${filters.status}>
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option value=${s} selected=${filters.status === s}>${s}</option>`)}
        </select></label>
      <label>Tag prefix <input name="tag" value=${filters.tag} placeholder="constraint" /></label>
      <label>Entity <input name="entity" value=${filters.entity} /></label>
      <label>Session <input name="session_id" value=${filters.session_id} /></label>
      <label>Agent <input name="agent_id" value=${filters.agent_id} /></label>
      <label>Created from <input type="datetime-local" step="1" name="since" value=${toLocalInput(filters.since, timeZone)} /></label>
      <label>Created before <input type="datetime-local" step="1" name="until" value=${toLocalInput(filters.until, timeZone)} /></label>
      <label>Text <input name="text" value=${filters.text} placeholder="in the loaded rows" /></label>
      <button type="submit" class="primary">Filter</button>
      <a href=${path("banks", params.bank, "memories")}>Clear</a>
    </form>
    <${Problem} error=${pages.error} />
    ${rows.length
      ? html`
        <div class="scroll"><table class="memories">
          <thead><tr><th scope="col">Created</th><th scope="col">Content</th><th scope="col">Tags</th>
            <th scope="col">Status</th><th scope="col" class="num">Conf.</th><th scope="col" class="num">Imp.</th>
            <th scope="col">Session</th><th scope="col">Agent</th></tr></thead>
          <tbody>${rows.map(
            (m) => html`<tr data-testid="memory-row" data-status=${m.status}>
              <td class="nowrap"><${Time} iso=${m.created_at} /></td>
              <td><a href=${path("banks", params.bank, "memories", m.id)}>${m.content}</a></td>
              <td><${Tags} tags=${m.tags} /></td>
              <td><${Status} status=${m.status} /></td>
              <td class="num">${m.confidence.toFixed(2)}</td>
              <td class="num">${m.importance.toFixed(2)}</td>
              <td>${m.source.session_id
                ? html`<a href=${path("banks", params.bank, "sessions", m.source.session_id)}>${m.source.session_id}</a>`
                : html`<span class="muted">—</span>`}</td>
              <td data-testid="memory-agent">${m.agent_id || html`<span class="muted">—</span>`}</td>
            </tr>`,
          )}</tbody>
        </table></div>`
      : pages.loading
        ? html`<${Loading} what="Loading memories" />`
        : html`<${Empty}>No memories match these filters.<//>`}
    <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} />`;
}
