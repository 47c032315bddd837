// The console's shell: sign-in, the header, the bank frame with its tabs, and the client-side router.
import { html, render, useEffect, useState } from "../vendor/htm-preact.js";
import { api, bankPath, onSignOut, session, signOut } from "./api.js";
import { matchRoute, path } from "./routes.js";
import { BankContext, Loading, Problem, navigate, useLoad } from "./ui.js";
import { BanksView, BankView } from "./views/banks.js";
import { EntitiesView, EntityView } from "./views/entities.js";
import { LoginView } from "./views/login.js";
import { MemoriesView } from "./views/memories.js";
import { MemoryView } from "./views/memory.js";
import { ProposalsView } from "./views/proposals.js";
import { RecallView } from "./views/recall.js";
import { SessionView } from "./views/session.js";
import { TimelineView } from "./views/timeline.js";

const BANK_VIEWS = {
  bank: BankView,
  memories: MemoriesView,
  memory: MemoryView,
  proposals: ProposalsView,
  session: SessionView,
  timeline: TimelineView,
  recall: RecallView,
  entities: EntitiesView,
  entity: EntityView,
};

const TABS = [
  ["bank", "Overview", []],
  ["memories", "Memories", ["memories"]],
  ["proposals", "Proposed", ["proposals"]],
  ["timeline", "Timeline", ["timeline"]],
  ["recall", "Recall", ["recall"]],
  ["entities", "Entities", ["entities"]],
];
const TAB_OF = { memory: "memories", session: "bank", entity: "entities" };

let flash = null; // the sign-in page's message after a sign-out (never put in the URL)
let returnTo = null;

function useLocation() {
  const [location, setLocation] = useState(window.location.pathname + window.location.search);
  useEffect(() => {
    const update = () => setLocation(window.location.pathname + window.location.search);
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return location;
}

function Header({ principal }) {
  const who = principal.admin
    ? "admin key"
    : `key of ${principal.bank_id} (${principal.scopes.join(", ")})${principal.agent_id ? `, agent ${principal.agent_id}` : ""}`;
  return html`
    <header class="top">
      <a class="brand" href="/ui/banks">Hindsight</a>
      <span class="who" data-testid="principal">${who}</span>
      <button type="button" onClick=${() => signOut(null)}>Sign out</button>
    </header>`;
}

function BankFrame({ view, params, search }) {
  const bank = useLoad(() => api.get(bankPath(params.bank)), [params.bank]);
  const current = TAB_OF[view] || view;
  const View = BANK_VIEWS[view];
  const timeZone = bank.data?.config?.timezone || "UTC";
  return html`
    <${BankContext.Provider} value=${{ bank: bank.data, timeZone }}>
      <nav class="tabs" aria-label="Bank">
        <a class="bank-name" href=${path("banks")}>Banks</a>
        <span aria-hidden="true">›</span>
        <strong>${params.bank}</strong>
        ${TABS.map(
          ([name, label, segments]) => html`
            <a href=${path("banks", params.bank, ...segments)} aria-current=${current === name ? "page" : undefined}>
              ${label}</a>`,
        )}
        <span class="tz" title="Times are shown in the bank's time zone">${timeZone}</span>
      </nav>
      <main id="main" tabindex="-1">
        ${bank.loading ? html`<${Loading} what="Loading the bank" />` : null}
        <${Problem} error=${bank.error} />
        ${bank.data ? html`<${View} params=${params} search=${search} />` : null}
      </main>
    <//>`;
}

function App() {
  const location = useLocation();
  const [signedIn, setSignedIn] = useState(session());
  useEffect(
    () =>
      onSignOut((message) => {
        flash = message;
        setSignedIn(null);
        navigate("/ui/login");
      }),
    [],
  );
  const url = new URL(location, window.location.origin);
  const { view, params } = matchRoute(url.pathname);
  useEffect(() => {
    document.title = `${view ? view[0].toUpperCase() + view.slice(1) : "Not found"} · Hindsight console`;
  }, [view, params.bank]);

  if (!signedIn || view === "login") {
    if (view !== "login") returnTo = location;
    const done = () => {
      flash = null;
      setSignedIn(session());
      const target = returnTo && !returnTo.startsWith("/ui/login") ? returnTo : "/ui/banks";
      returnTo = null;
      navigate(target);
    };
    return html`<main id="main"><${LoginView} message=${flash} onSignedIn=${done} /></main>`;
  }
  const principal = signedIn.principal;
  let body;
  if (view === "banks") body = html`<main id="main" tabindex="-1"><${BanksView} /></main>`;
  else if (BANK_VIEWS[view]) body = html`<${BankFrame} key=${params.bank} view=${view} params=${params} search=${url.searchParams} />`;
  else body = html`<main id="main"><p class="problem" role="alert">No such page: ${url.pathname}</p></main>`;
  return html`<a class="skip" href="#main">Skip to content</a><${Header} principal=${principal} />${body}`;
}

// Links inside the console change the view without a reload; others behave as usual.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || link.target) return;
  const href = link.getAttribute("href");
  if (!href.startsWith("/ui/") || href.startsWith("/ui/static/")) return;
  event.preventDefault();
  navigate(href);
  window.scrollTo(0, 0);
});

// `/ui` is the banks list: say so in the address bar, so that links and sign-in return there.
if (/^\/ui\/?$/.test(window.location.pathname)) history.replaceState(null, "", "/ui/banks");

const root = document.getElementById("app");
root.textContent = ""; // the "Loading the console…" placeholder
render(html`<${App} />`, root);
