import { html, type SafeHtml } from "./html";
import { csrfField } from "./layout";
import type { UiSession } from "./ui-sessions";

/** A state-changing form: POST to `action` (relative), with the session's CSRF token. */
export function form(target: { action: string; session: UiSession; inline?: boolean }, body: SafeHtml): SafeHtml {
  return html`<form method="post" action="${target.action}"${target.inline ? html` class="inline"` : ""}>${csrfField(target.session)}${body}</form>`;
}
