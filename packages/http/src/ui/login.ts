import { html, type SafeHtml } from "./html";

/** The sign-in form: an admin token, sent once by POST; the browser keeps only a session cookie after it. */
export function loginPage(authRequired: boolean, problem?: string): SafeHtml {
  return html`${problem ? html`<p class="notice bad" role="alert">${problem}</p>` : ""}
<form method="post" action="login">
${
  authRequired
    ? html`<label for="token">Admin token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required autofocus>
<p class="muted">A token whose scopes include <code>admin</code> (or a token file that declares no scopes). It is checked once; the browser keeps only a session cookie.</p>`
    : html`<p class="notice">This server runs without tokens, so any local process may already use it. Start it with <code>--token</code> to make the admin page ask for one.</p>`
}
<button class="primary" type="submit">Sign in</button>
</form>`;
}
