// The bank's LLM usage as the overview shows it. Pure: unit-tested in the browser.

/** A count with thousands separators. */
export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}

/** Money in the report's currency, or a note that no price is set. */
export function money(cost, currency) {
  if (cost === null || cost === undefined) return "no price set";
  return `${cost.toFixed(cost < 1 ? 4 : 2)} ${currency}`;
}

/** A usage report (GET …/usage?group_by=operation) → what the panel says: {empty, rows, budget}.
 * `rows`: [label, value] pairs; `budget`: one line about today, and whether a budget is spent. */
export function usageSummary(report) {
  const t = report.totals;
  const rows = [
    ["LLM calls", count(t.calls) + (t.failed_calls ? ` (${count(t.failed_calls)} failed)` : "")],
    ["Prompt tokens", count(t.prompt_tokens)],
    ["Completion tokens", count(t.completion_tokens)],
    ["Cost", money(t.cost, report.currency)],
    ...report.groups.map((g) => [`· ${g.key}`, `${count(g.calls)} calls, ${count(g.total_tokens)} tokens`]),
  ];
  if (t.estimated_calls) rows.push(["Estimated", `${count(t.estimated_calls)} calls without server usage`]);
  const b = report.budget;
  const mine = b.bank || b.service;
  const limit = mine.limit_tokens === null ? "(no daily budget)" : `of ${count(mine.limit_tokens)}`;
  const budget = {
    line: `Today: ${count(mine.tokens)} tokens ${limit}`,
    spent: b.exhausted,
  };
  return { empty: t.calls === 0, rows, budget };
}
