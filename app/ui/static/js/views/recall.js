// The recall tester: a query and its options → the results with per-channel bars, the parsed time
// filter and the context block exactly as an agent receives it.
import { html, useContext, useState } from "../../vendor/htm-preact.js";
import { api, bankPath } from "../api.js";
import { WEIGHTS, channelBars, formatScore, queryBody } from "../recall.js";
import { path } from "../routes.js";
import { BankContext, Empty, Problem, Status, Tags, Time } from "../ui.js";
import { STATUSES } from "./memories.js";

function Copy({ text }) {
  const [copied, setCopied] = useState(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied("Copied.");
    } catch {
      setCopied("Copy failed: select the text and copy it by hand.");
    }
  };
  return html`<button type="button" onClick=${copy} data-testid="copy-context">Copy</button>
    ${copied ? html`<span role="status" class="muted">${copied}</span>` : null}`;
}

function Result({ bank, memory, bars, rank }) {
  return html`
    <li class="result" data-testid="recall-result" data-id=${memory.id}>
      <div class="head"><span class="rank">${rank}</span>
        <a href=${path("banks", bank, "memories", memory.id)}>${memory.content}</a></div>
      <div><span class="score">score ${memory.score.toFixed(3)}</span>
        ${memory.rerank_score != null
          ? html` <span class="score" data-testid="rerank-score">rerank ${formatScore(memory.rerank_score)}</span>`
          : null}
        <${Status} status=${memory.status} />
        <${Tags} tags=${memory.tags} /> <span class="muted">said <${Time} iso=${memory.valid_from} /></span></div>
      ${memory.why ? html`<p class="why muted" data-testid="memory-why">${memory.why}</p>` : null}
      <ul class="channels" aria-label="Channels that found it">${bars.map(
        (b) => html`<li data-testid="channel-score" data-channel=${b.channel}>
          <span class="channel">${b.channel}</span>
          <span class="bar" aria-hidden="true"><span class=${`fill ch-${b.channel}`} style=${{ width: `${Math.round(b.fraction * 100)}%` }}></span></span>
          <span class="muted">#${b.rank} · ${formatScore(b.score)}</span></li>`,
      )}</ul>
    </li>`;
}

export function RecallView({ params }) {
  const { timeZone } = useContext(BankContext);
  const [state, setState] = useState({ result: null, error: null, busy: false, body: null });
  const submit = async (event) => {
    event.preventDefault();
    const form = Object.fromEntries(new FormData(event.target).entries());
    let body;
    try {
      body = queryBody(form, timeZone);
    } catch (error) {
      setState({ result: null, error, busy: false, body: null });
      return;
    }
    setState((s) => ({ ...s, busy: true, error: null }));
    try {
      const result = await api.post(bankPath(params.bank, "query"), body);
      setState({ result, error: null, busy: false, body });
    } catch (error) {
      setState({ result: null, error, busy: false, body });
    }
  };
  const { result } = state;
  const bars = result ? channelBars(result.memories) : [];
  return html`
    <h1>Recall tester</h1>
    <form class="recall" onSubmit=${submit}>
      <label class="wide">Query <input name="query" data-testid="recall-input" required maxlength="2000"
        placeholder="what is my budget?" /></label>
      <div class="filters">
        <label>top_k <input type="number" name="top_k" min="1" max="100" value="10" /></label>
        <label>Tags (prefixes) <input name="tags" placeholder="constraint, preference" /></label>
        <label>From <input type="datetime-local" step="1" name="from" /></label>
        <label>To <input type="datetime-local" step="1" name="to" /></label>
        <label>As of <input type="datetime-local" step="1" name="as_of" /></label>
        <label>Fusion <select name="fusion"><option value="">bank default</option><option>rrf</option><option>weighted</option></select></label>
        <label>min_score <input type="number" name="min_score" min="0" step="0.01" placeholder="bank default" /></label>
        <label>Statuses <input name="statuses" placeholder="active" list="statuses" /></label>
        <datalist id="statuses">${STATUSES.map((s) => html`<option value=${s} />`)}</datalist>
        <label>Session (adds its working memory) <input name="session_id" /></label>
        <label>Rerank <select name="rerank"><option value="">bank default</option><option value="on">on</option><option value="off">off</option></select></label>
        <label class="check"><input type="checkbox" name="context_why" /> Why in the context block</label>
      </div>
      <fieldset class="filters"><legend>Channel weights (empty = default, 0 = off)</legend>
        ${WEIGHTS.map((w) => html`<label>${w} <input type="number" name=${`w_${w}`} min="0" max="10" step="0.1" /></label>`)}
      </fieldset>
      <p class="muted">Times are read in the bank's zone (${timeZone}).</p>
      <button type="submit" class="primary" data-testid="recall-submit" disabled=${state.busy}>
        ${state.busy ? "Recalling…" : "Recall"}</button>
    </form>
    <${Problem} error=${state.error} />
    ${result
      ? html`
        <p class="muted" role="status">${result.memories.length} results in ${result.took_ms.toFixed(1)} ms;
          rerank <span data-testid="rerank-status">${result.rerank || "—"}</span>.</p>
        <section>
          <h2>Time filter</h2>
          ${result.time_filter
            ? html`<p data-testid="time-filter"><${Time} iso=${result.time_filter.from} /> → <${Time} iso=${result.time_filter.to} />
                <span class="muted">(from the ${result.time_filter.source}${result.time_filter.phrase ? `: “${result.time_filter.phrase}”` : ""})</span></p>`
            : html`<${Empty}>None: the query names no time and the request gave none.<//>`}
        </section>
        <div class="recall-out">
          <section>
            <h2>Results</h2>
            ${result.memories.length
              ? html`<ol class="results">${result.memories.map(
                  (m, i) => html`<${Result} bank=${params.bank} memory=${m} bars=${bars[i]} rank=${i + 1} />`,
                )}</ol>`
              : html`<${Empty}>Nothing scored over min_score.<//>`}
          </section>
          <section>
            <h2>Context block <${Copy} text=${result.context} /></h2>
            <pre class="context" data-testid="context-block" tabindex="0">${result.context}</pre>
            ${result.working_memory.length
              ? html`<h3>Working memory</h3><ol class="turns">${result.working_memory.map(
                  (t) => html`<li><span class="seq">#${t.seq}</span> ${t.speaker || t.role}: ${t.content}</li>`,
                )}</ol>`
              : null}
            <details><summary>Request body</summary><pre>${JSON.stringify(state.body, null, 2)}</pre></details>
          </section>
        </div>`
      : null}`;
}
