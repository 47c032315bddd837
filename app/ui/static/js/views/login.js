// Sign in with an API key: checked with GET /v1/whoami, kept in this tab's session storage only.
import { html, useState } from "../../vendor/htm-preact.js";
import { signIn } from "../api.js";
import { Problem } from "../ui.js";

export function LoginView({ message, onSignedIn }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState(message);
  const submit = async (event) => {
    event.preventDefault();
    setNotice(null);
    setBusy(true);
    setError(null);
    try {
      await signIn(key.trim());
      onSignedIn();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`
    <section class="login">
      <h1>Hindsight console</h1>
      <p>See what an agent remembers, why, and what it read.</p>
      ${notice ? html`<p class="problem" role="alert" data-testid="problem">${notice}</p>` : null}
      <form onSubmit=${submit}>
        <label for="login-key">API key (the admin key or a bank key)</label>
        <input id="login-key" data-testid="login-key" type="password" autocomplete="off" required
          value=${key} onInput=${(e) => setKey(e.target.value)} autofocus />
        <button type="submit" class="primary" data-testid="login-submit" disabled=${busy}>
          ${busy ? "Signing in…" : "Sign in"}</button>
      </form>
      <${Problem} error=${error} />
      <p class="muted">The key stays in this tab (session storage) and is sent only as a bearer header.</p>
    </section>`;
}
