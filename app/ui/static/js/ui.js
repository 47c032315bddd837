// Small shared pieces of the views: loading and empty states, problem messages, times in the bank's
// zone, status badges, confirmation dialogs, paging.
import { createContext, html, useCallback, useContext, useEffect, useRef, useState } from "../vendor/htm-preact.js";
import { formatTime } from "./time.js";

export const BankContext = createContext({ bank: null, timeZone: "UTC" });

export function navigate(href) {
  history.pushState(null, "", href);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** Runs `load()` when `deps` change: {data, error, loading, reload, setData}. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => mine === generation.current && setState({ data, error: null, loading: false }),
      (error) => mine === generation.current && setState({ data: null, error, loading: false }),
    );
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run, setData: (data) => setState((s) => ({ ...s, data })) };
}

export function Loading({ what = "Loading" }) {
  return html`<p class="loading" role="status" aria-live="polite">${what}…</p>`;
}

export function Empty({ children }) {
  return html`<p class="empty">${children}</p>`;
}

export function Problem({ error }) {
  if (!error) return null;
  return html`<p class="problem" role="alert" data-testid="problem">${error.message || String(error)}</p>`;
}

/** An instant in the bank's zone, the full ISO instant in its title. */
export function Time({ iso }) {
  const { timeZone } = useContext(BankContext);
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime=${iso} title=${iso}>${formatTime(iso, timeZone)}</time>`;
}

export function Status({ status }) {
  return html`<span class=${`badge status-${status}`}>${status}</span>`;
}

export function Tags({ tags }) {
  return html`<span class="tags">${(tags || []).map((t) => html`<span class="tag">${t}</span>`)}</span>`;
}

export function shortId(id) {
  return String(id).slice(0, 8);
}

/** A button that asks before it acts, in a modal <dialog> (focus kept inside, Esc cancels). */
export function ConfirmButton({ label, question, confirmLabel = label, danger = false, onConfirm, testid }) {
  const dialog = useRef(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    dialog.current.close();
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
    }
  };
  return html`
    <button type="button" class=${danger ? "danger" : ""} disabled=${busy} data-testid=${testid}
      onClick=${() => dialog.current.showModal()}>${busy ? `${label}…` : label}</button>
    <dialog ref=${dialog} aria-label=${label}>
      <p>${question}</p>
      <div class="row">
        <button type="button" class=${danger ? "danger" : "primary"} data-testid="confirm" onClick=${confirm}>
          ${confirmLabel}</button>
        <button type="button" onClick=${() => dialog.current.close()}>Cancel</button>
      </div>
    </dialog>`;
}

/** "Load more" under a cursor-paged list. */
export function More({ cursor, loading, onMore, label = "Load more" }) {
  if (!cursor) return null;
  return html`<p><button type="button" disabled=${loading} onClick=${onMore}>${loading ? "Loading…" : label}</button></p>`;
}

/** Pages of a cursor-paged list: first page on `deps` change, more on demand. `fetchPage(cursor)` →
 * {items, next_cursor}. */
export function usePages(fetchPage, deps) {
  const [state, setState] = useState({ items: [], cursor: null, loading: true, error: null });
  const generation = useRef(0);
  const load = (cursor, append) => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: null, ...(append ? {} : { items: [] }) }));
    fetchPage(cursor).then(
      (page) =>
        mine === generation.current &&
        setState((s) => ({
          items: append ? [...s.items, ...page.items] : page.items,
          cursor: page.next_cursor,
          loading: false,
          error: null,
        })),
      (error) => mine === generation.current && setState((s) => ({ ...s, loading: false, error })),
    );
  };
  useEffect(() => load(null, false), deps);
  return { ...state, more: () => load(state.cursor, true), reload: () => load(null, false) };
}
