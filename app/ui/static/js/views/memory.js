// One unit: content and metadata, the source turns, the lineage drawn, the history; forget, restore
// and edit as the key allows (each asks first).
import { html, useRef, useState } from "../../vendor/htm-preact.js";
import { api, bankPath, canReview, canWrite } from "../api.js";
import { describeAction, lineageModel } from "../lineage.js";
import { path } from "../routes.js";
import { ConfirmButton, Empty, Loading, Problem, Status, Tags, Time, navigate, shortId, useLoad } from "../ui.js";
import { shown } from "./session.js";

function Lineage({ bank, model }) {
  return html`
    <section>
      <h2>Lineage</h2>
      <ol class="lineage" data-testid="lineage" aria-label="Supersede chain, oldest to newest">
        ${model.chain.map(
          (unit, i) => html`
            ${i ? html`<li class="arrow" aria-hidden="true">→</li>` : null}
            <li class=${`node status-${unit.status}${unit.isCurrent ? " current" : ""}${unit.isHead ? " head" : ""}`}
              data-testid="lineage-node" data-status=${unit.status} data-head=${unit.isHead ? "true" : "false"}>
              <a href=${path("banks", bank, "memories", unit.id)} aria-current=${unit.isCurrent ? "page" : undefined}>
                ${unit.content}</a>
              <div><${Status} status=${unit.status} />
                ${unit.isHead && unit.status === "active" ? html` <span class="badge head-mark">active head</span>` : null}</div>
              <div class="muted small"><${Time} iso=${unit.validFrom} /> → ${unit.validTo ? html`<${Time} iso=${unit.validTo} />` : "now"}</div>
            </li>`,
        )}
      </ol>
      ${model.mergedFrom.length
        ? html`<h3>Merged into this unit</h3>
          <ul class="merged">${model.mergedFrom.map(
            (m) => html`<li data-testid="merged-from"><a href=${path("banks", bank, "memories", m.id)}>${m.content}</a>
              <${Status} status=${m.status} /> <span class="muted">${shortId(m.id)}</span></li>`,
          )}</ul>`
        : null}
      ${model.mergedInto
        ? html`<p>Merged into <a href=${path("banks", bank, "memories", model.mergedInto.id)}>${model.mergedInto.content}</a>
            <${Status} status=${model.mergedInto.status} /></p>`
        : null}
    </section>`;
}

function EditForm({ memory, onSave, onCancel }) {
  const [error, setError] = useState(null);
  const form = useRef(null);
  const save = async () => {
    const data = new FormData(form.current);
    const patch = {};
    const content = String(data.get("content")).trim();
    const tags = String(data.get("tags")).split(",").map((t) => t.trim()).filter(Boolean);
    if (content !== memory.content) patch.content = content;
    if (tags.join(",") !== memory.tags.join(",")) patch.tags = tags;
    for (const name of ["confidence", "importance"]) {
      const value = Number(data.get(name));
      if (value !== memory[name]) patch[name] = value;
    }
    if (!Object.keys(patch).length) return onCancel();
    setError(null);
    try {
      await onSave(patch);
    } catch (e) {
      setError(e);
    }
  };
  return html`
    <form class="edit" ref=${form} onSubmit=${(e) => e.preventDefault()} aria-label="Edit the unit">
      <p class="muted">Saving writes a new unit that supersedes this one (history action <code>updated</code>).</p>
      <label>Content <textarea name="content" rows="3" required maxlength="4000">${memory.content}</textarea></label>
      <label>Tags (comma-separated) <input name="tags" value=${memory.tags.join(", ")} required /></label>
      <div class="row">
        <label>Confidence <input type="number" name="confidence" min="0" max="1" step="0.01" value=${memory.confidence} /></label>
        <label>Importance <input type="number" name="importance" min="0" max="1" step="0.01" value=${memory.importance} /></label>
      </div>
      <div class="row">
        <${ConfirmButton} label="Save as a new unit" testid="edit-save"
          question="Save these changes as a new unit that supersedes this one?" onConfirm=${save} />
        <button type="button" onClick=${onCancel}>Cancel</button>
      </div>
      <${Problem} error=${error} />
    </form>`;
}

/** Accept or reject a proposed unit (a key with the `review` scope); each asks first. */
export function ReviewButtons({ bank, memory, onReviewed }) {
  const [error, setError] = useState(null);
  if (memory.status !== "proposed" || !canReview()) return null;
  const decide = (decision) => async () => {
    setError(null);
    try {
      onReviewed(await api.post(bankPath(bank, "memories", memory.id, decision), {}));
    } catch (e) {
      setError(e);
    }
  };
  return html`
    <span class="row review">
      <${ConfirmButton} label="Accept" testid="proposal-accept"
        question="Accept this proposal? It is resolved now against what the bank knows, as if written now."
        onConfirm=${decide("accept")} />
      <${ConfirmButton} label="Reject" testid="proposal-reject" danger
        question="Reject this proposal? It will never be recalled; its history is kept."
        onConfirm=${decide("reject")} />
      <${Problem} error=${error} />
    </span>`;
}

function Actions({ bank, memory, onChanged }) {
  const [error, setError] = useState(null);
  const [editing, setEditing] = useState(false);
  const review = html`<${ReviewButtons} bank=${bank} memory=${memory} onReviewed=${onChanged} />`;
  if (!canWrite()) return memory.status === "proposed" && canReview() ? review : html`<p class="muted">This key can read only.</p>`;
  const act = (request) => async () => {
    setError(null);
    try {
      onChanged(await request());
    } catch (e) {
      setError(e);
    }
  };
  const unit = bankPath(bank, "memories", memory.id);
  return html`
    <div class="actions">
      <div class="row">
        ${review}
        ${memory.status === "active" ? html`<button type="button" onClick=${() => setEditing(!editing)}
          aria-expanded=${editing} data-testid="edit">Edit</button>` : null}
        ${memory.status !== "deleted"
          ? html`<${ConfirmButton} label="Forget" testid="forget" danger
              question="Forget this unit? The bank's forgetting policy applies; it can be restored."
              onConfirm=${act(() => api.del(unit))} />`
          : html`<${ConfirmButton} label="Restore" testid="restore"
              question="Restore this unit to its previous status?"
              onConfirm=${act(() => api.post(`${unit}/restore`))} />`}
      </div>
      ${editing
        ? html`<${EditForm} memory=${memory} onCancel=${() => setEditing(false)}
            onSave=${async (patch) => {
              const created = await api.patch(unit, patch);
              setEditing(false);
              navigate(path("banks", bank, "memories", created.id));
            }} />`
        : null}
      <${Problem} error=${error} />
    </div>`;
}

export function MemoryView({ params }) {
  const load = useLoad(
    async () => {
      const [memory, history] = await Promise.all([
        api.get(bankPath(params.bank, "memories", params.memory)),
        api.get(bankPath(params.bank, "memories", params.memory, "history")),
      ]);
      return { memory, history };
    },
    [params.bank, params.memory],
  );
  if (load.loading && !load.data) return html`<${Loading} what="Loading the unit" />`;
  if (load.error) return html`<${Problem} error=${load.error} />`;
  const { memory, history } = load.data;
  const model = lineageModel(history);
  const events = memory.source.events || [];
  return html`
    <h1 class="visually-hidden">Memory ${shortId(memory.id)}</h1>
    <article class="unit">
      <p class="content" data-testid="memory-content">${memory.content}</p>
      ${memory.why ? html`<p class="why" data-testid="memory-why"><strong>Why I remember this:</strong> ${memory.why}</p>` : null}
      <div><${Status} status=${memory.status} /> <${Tags} tags=${memory.tags} /></div>
      <dl class="facts">
        <dt>Confidence</dt><dd>${memory.confidence.toFixed(2)}</dd>
        <dt>Importance</dt><dd>${memory.importance.toFixed(2)}</dd>
        <dt>Layer</dt><dd>${memory.layer}</dd>
        <dt>Claim</dt><dd data-testid="memory-claim">${memory.claim
          ? `${memory.claim.subject} · ${memory.claim.attribute || "—"} = ${memory.claim.value} (${memory.claim.modality})`
          : html`<span class="muted">none</span>`}</dd>
        <dt>Valid</dt><dd><${Time} iso=${memory.valid_from} /> → ${memory.valid_to ? html`<${Time} iso=${memory.valid_to} />` : "now"}</dd>
        <dt>Created</dt><dd><${Time} iso=${memory.created_at} /></dd>
        ${memory.expires_at ? html`<dt>Expires</dt><dd><${Time} iso=${memory.expires_at} /></dd>` : null}
        <dt>Entities</dt><dd>${memory.entities.length
          ? memory.entities.map((e) => html`<a class="tag" href=${path("banks", params.bank, "entities", e.id)}>${e.name} (${e.type})</a> `)
          : html`<span class="muted">none</span>`}</dd>
        <dt>Read</dt><dd>${memory.access_count} times${memory.last_accessed_at ? html`, last <${Time} iso=${memory.last_accessed_at} />` : null}</dd>
        <dt>Distiller</dt><dd>${memory.distiller || "—"}</dd>
        <dt>Agent</dt><dd data-testid="memory-agent">${memory.agent_id || html`<span class="muted">none</span>`}</dd>
        ${memory.proposed_update_of
          ? html`<dt>Proposes to update</dt><dd><a href=${path("banks", params.bank, "memories", memory.proposed_update_of)}>${shortId(memory.proposed_update_of)}</a></dd>`
          : null}
        <dt>Id</dt><dd><code>${memory.id}</code></dd>
      </dl>
      <${Actions} bank=${params.bank} memory=${memory} onChanged=${load.reload} />
    </article>
    <section>
      <h2>Source turns</h2>
      ${memory.source.session_id
        ? html`<p>Session <a href=${path("banks", params.bank, "sessions", memory.source.session_id)}>${memory.source.session_id}</a>,
            turns ${memory.source.seqs.join(", ")}</p>`
        : null}
      ${events.length
        ? html`<ol class="turns">${events.map(
            (e) => html`<li data-testid="source-turn"><span class="seq">#${e.seq}</span>
              <span class=${`role role-${e.role}`}>${e.speaker || e.role}</span> ${shown(e.content)}
              <div class="muted small"><${Time} iso=${e.occurred_at} /></div></li>`,
          )}</ol>`
        : html`<${Empty}>Written directly, not distilled from turns.<//>`}
    </section>
    <${Lineage} bank=${params.bank} model=${model} />
    <section>
      <h2>History</h2>
      <ol class="history">${history.actions.map(
        (a) => html`<li data-testid="history-action" data-action=${a.action}>
          <${Time} iso=${a.at} /> <strong>${a.action}</strong> <span class="muted">by</span> ${a.actor}
          ${a.agent_id ? html` <span class="muted">agent</span> <span data-testid="history-agent">${a.agent_id}</span>` : null}
          <div class="muted small">${describeAction(a).split(" · ").slice(2).join(" · ")}</div></li>`,
      )}</ol>
    </section>`;
}
