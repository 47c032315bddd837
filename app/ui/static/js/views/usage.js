// The usage panel of a bank's overview: its LLM calls of the last 30 days and today's budget.
import { html } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { usageSummary } from "../usage.js";
import { Empty, Problem, Time, useLoad } from "../ui.js";

export function UsagePanel({ bank }) {
  const usage = useLoad(() => api.get(bankPath(bank, "usage"), { group_by: "operation" }), [bank]);
  const summary = usage.data && usageSummary(usage.data);
  return html`
    <section class="card" data-testid="usage-panel">
      <h3>LLM usage, last 30 days</h3>
      <${Problem} error=${usage.error} />
      ${summary
        ? html`
          ${summary.empty
            ? html`<${Empty}>No LLM calls: the heuristic distiller calls none.<//>`
            : html`<dl class="counts">${summary.rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`}
          <p class="muted" data-testid="usage-budget">${summary.budget.line}${summary.budget.spent
            ? html`; the ${summary.budget.spent} budget is spent until <${Time} iso=${usage.data.budget.resets_at} />
                (the heuristic distiller runs, the judge is skipped)`
            : null}</p>`
        : null}
    </section>`;
}
