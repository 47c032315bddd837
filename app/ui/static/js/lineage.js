// A unit's lineage from GET …/memories/{id}/history. Pure: unit-tested in the browser.

/** → {chain: [{id, content, status, validFrom, validTo, isHead, isCurrent}], head, mergedFrom, mergedInto}.
 * `chain` is oldest → newest; the head is the unit no other unit supersedes (the last of the chain),
 * active unless it was forgotten, merged or expired since. */
export function lineageModel(history) {
  const current = history.memory.id;
  const chain = (history.chain || []).map((unit) => ({
    id: unit.id,
    content: unit.content,
    status: unit.status,
    validFrom: unit.valid_from,
    validTo: unit.valid_to,
    isCurrent: unit.id === current,
    isHead: false,
  }));
  if (!chain.length) {
    const m = history.memory;
    chain.push({
      id: m.id,
      content: m.content,
      status: m.status,
      validFrom: m.valid_from,
      validTo: m.valid_to,
      isCurrent: true,
      isHead: false,
    });
  }
  const head = chain[chain.length - 1];
  head.isHead = true;
  return {
    chain,
    head,
    activeHead: head.status === "active" ? head : null,
    mergedFrom: history.merged_from || [],
    mergedInto: history.merged_into || null,
  };
}

/** One line for a history action: "superseded · resolver · active → superseded · reason: …". */
export function describeAction(action) {
  const d = action.details || {};
  const bits = [action.action, action.agent_id ? `${action.actor} (agent ${action.agent_id})` : action.actor];
  if (d.from || d.to) bits.push(`${d.from ?? "∅"} → ${d.to ?? "∅"}`);
  if (d.reason) bits.push(`reason: ${d.reason}`);
  if (d.kept_agent !== undefined) bits.push(`agents: ${d.kept_agent || "none"} over ${d.replaced_agent || "none"}`);
  if (d.proposed_by) bits.push(`proposed by ${d.proposed_by}`);
  return bits.join(" · ");
}
