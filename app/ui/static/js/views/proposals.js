// The proposals waiting for a review (units written with a propose-only key): newest first, each with
// its agent, what it would update, and Accept / Reject for a key with the `review` scope.
import { html } from "../../vendor/htm-preact.js";
import { api, bankPath, canReview } from "../api.js";
import { path } from "../routes.js";
import { Empty, Loading, More, Problem, Tags, Time, shortId, usePages } from "../ui.js";
import { ReviewButtons } from "./memory.js";

export function ProposalsView({ params }) {
  const pages = usePages(async (cursor) => {
    const page = await api.get(bankPath(params.bank, "memories"), { status: "proposed", limit: 50, cursor });
    return { items: page.memories, next_cursor: page.next_cursor };
  }, [params.bank]);
  return html`
    <h1>Proposed</h1>
    <p class="muted">Written by agents whose key may only propose: nothing here is recalled or changes the
      bank until a reviewer accepts it (it is then resolved as if written at that moment).
      ${canReview() ? null : " This key cannot review."}</p>
    <${Problem} error=${pages.error} />
    ${pages.items.length
      ? html`
        <div class="scroll"><table class="memories">
          <thead><tr><th scope="col">Proposed</th><th scope="col">Content</th><th scope="col">Tags</th>
            <th scope="col">Agent</th><th scope="col">Updates</th><th scope="col">Review</th></tr></thead>
          <tbody>${pages.items.map(
            (m) => html`<tr data-testid="proposal-row" data-id=${m.id}>
              <td class="nowrap"><${Time} iso=${m.created_at} /></td>
              <td><a href=${path("banks", params.bank, "memories", m.id)}>${m.content}</a></td>
              <td><${Tags} tags=${m.tags} /></td>
              <td data-testid="proposal-agent">${m.agent_id || html`<span class="muted">—</span>`}</td>
              <td>${m.proposed_update_of
                ? html`<a href=${path("banks", params.bank, "memories", m.proposed_update_of)}>${shortId(m.proposed_update_of)}</a>`
                : html`<span class="muted">—</span>`}</td>
              <td><${ReviewButtons} bank=${params.bank} memory=${m} onReviewed=${pages.reload} /></td>
            </tr>`,
          )}</tbody>
        </table></div>`
      : pages.loading
        ? html`<${Loading} what="Loading proposals" />`
        : html`<${Empty}>No proposal waits for a review.<//>`}
    <${More} cursor=${pages.cursor} loading=${pages.loading} onMore=${pages.more} />`;
}
