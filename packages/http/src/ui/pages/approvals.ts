import { lineDiff, type CatalogEntry } from "@codemux/core";
import { form } from "../form-page";
import { html, type SafeHtml } from "../html";
import { when } from "../layout";
import type { PendingApproval } from "../sources";
import type { UiSession } from "../ui-sessions";

/** The hint on the Approvals page when the pin plugin is off. */
export const NO_APPROVALS =
  'Nothing is quarantined here: the pin plugin is off. Turn it on with "plugins": { "pin": {} } in the config; tools whose definition changes then wait for approval on this page.';

/** Characters of one changed field's current value shown. */
const MAX_FIELD_CHARS = 16 * 1024;

/**
 * Approvals: tools the pin plugin quarantined, with the definition's diff against the approved one (or,
 * for a pin file from before definitions were kept, the changed fields' new value); approving lets the
 * next call through, leaving it keeps the tool blocked.
 */
export function approvalsPage(pending: readonly PendingApproval[], current: (name: string) => CatalogEntry | undefined, session: UiSession): SafeHtml {
  return pending.length
    ? html`${pending.map((p) => {
        const entry = current(p.name);
        const definition = (entry?.tool ?? {}) as unknown as Record<string, unknown>;
        return html`<section data-pending="${p.name}">
<h2>${p.name}</h2>
<p>${p.reason === "new server" ? html`Server <strong>${p.server}</strong> is new and waits for its first approval.` : html`Its definition changed since it was approved: <strong>${p.changed.join(", ") || "definition"}</strong>.`} <span class="muted">Seen ${when(p.seenAt)}.</span></p>
${
  p.approved && p.proposed
    ? diffBlock(p.name, p.approved, p.proposed)
    : p.changed.map((field) => {
        const value = JSON.stringify(definition[field], null, 2) ?? "(removed)";
        return html`<h3>${field} <span class="muted">now</span></h3><pre class="diff-add">${value.length > MAX_FIELD_CHARS ? `${value.slice(0, MAX_FIELD_CHARS)}…` : value}</pre>`;
      })
}
${form({ action: "approve", session }, html`<input type="hidden" name="target" value="${p.name}"><button class="primary" type="submit">Approve ${p.name}</button> <span class="muted">or leave it: it stays blocked.</span>`)}
</section>`;
      })}`
    : html`<p class="muted">No tool waits for approval.</p>`;
}

/** The approved definition against the waiting one, line by line, without the diff's two header lines (both are bounded by the pin file: 64 KiB each). */
function diffBlock(name: string, approved: Record<string, unknown>, proposed: Record<string, unknown>): SafeHtml {
  const lines = lineDiff(name, JSON.stringify(approved, null, 2), JSON.stringify(proposed, null, 2))
    .replace(/\n$/, "")
    .split("\n")
    .slice(2);
  return html`<pre data-diff>${lines.map((line) => html`<span class="${line.startsWith("-") ? "diff-del" : line.startsWith("+") ? "diff-add" : ""}">${line}</span>\n`)}</pre>`;
}
