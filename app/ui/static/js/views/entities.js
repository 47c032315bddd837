// The bank's entities (search by name) and one entity: its relations and the units that mention it.
import { html } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { path } from "../routes.js";
import { Empty, Loading, More, Problem, Status, Tags, Time, navigate, usePages, useLoad } from "../ui.js";

export function EntitiesView({ params, search }) {
  const q = search.get("q") || "";
  const pages = usePages(async (cursor) => {
    const page = await api.get(bankPath(params.bank, "entities"), { q, limit: 100, cursor });
    return { items: page.entities, next_cursor: page.next_cursor };
  }, [params.bank, q]);
  const apply = (event) => {
    event.preventDefault();
    const value = String(new FormData(event.target).get("q") || "").trim();
    navigate(`${path("banks", params.bank, "entities")}${value ? `?q=${encodeURIComponent(value)}` : ""}`);
  };
  return html`
    <h1>Entities</h1>
    <form class="filters" onSubmit=${apply} key=${q}>
      <label>Name contains <input name="q" value=${q} /></label>
      <button type="submit" class="primary">Search</button>
    </form>
    <${Problem} error=${pages.error} />
    ${pages.items.length
      ? html`<div class="scroll"><table>
          <thead><tr><th scope="col">Entity</th><th scope="col">Type</th><th scope="col" class="num">Mentions</th>
            <th scope="col">Updated</th></tr></thead>
          <tbody>${pages.items.map(
            (e) => html`<tr data-testid="entity-row"><th scope="row"><a href=${path("banks", params.bank, "entities", e.id)}>${e.name}</a></th>
              <td>${e.type}</td><td class="num">${e.mentions}</td><td><${Time} iso=${e.updated_at} /></td></tr>`,
          )}</tbody></table></div>`
      : pages.loading
        ? html`<${Loading} what="Loading entities" />`
        : html`<${Empty}>No entities${q ? ` named like “${q}”` : ""}.<//>`}
    <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} />`;
}

export function EntityView({ params }) {
  const detail = useLoad(
    () => api.get(bankPath(params.bank, "entities", params.entity), { statuses: "active,pending,superseded" }),
    [params.bank, params.entity],
  );
  if (detail.loading) return html`<${Loading} what="Loading the entity" />`;
  if (detail.error) return html`<${Problem} error=${detail.error} />`;
  const { entity, relations, memories } = detail.data;
  const end = (e) => html`<a href=${path("banks", params.bank, "entities", e.id)}>${e.name}</a>`;
  return html`
    <h1>${entity.name} <span class="muted">(${entity.type})</span></h1>
    <p>${entity.mentions} mentions · since <${Time} iso=${entity.created_at} /></p>
    <section>
      <h2>Relations</h2>
      ${relations.length
        ? html`<ul>${relations.map(
            (r) => html`<li data-testid="relation">${end(r.subject)} <code>${r.relation}</code> ${end(r.object)}
              ${r.memory_id ? html` <a class="muted" href=${path("banks", params.bank, "memories", r.memory_id)}>(source unit)</a>` : null}</li>`,
          )}</ul>`
        : html`<${Empty}>No relations.<//>`}
    </section>
    <section>
      <h2>Units that mention it</h2>
      ${memories.length
        ? html`<ul>${memories.map(
            (m) => html`<li data-testid="entity-memory"><a href=${path("banks", params.bank, "memories", m.id)}>${m.content}</a>
              <${Status} status=${m.status} /> <${Tags} tags=${m.tags} /> <span class="muted"><${Time} iso=${m.created_at} /></span></li>`,
          )}</ul>`
        : html`<${Empty}>No unit mentions it.<//>`}
    </section>`;
}
