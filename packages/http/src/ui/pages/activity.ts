import type { ActivityEntry } from "../activity";
import { href, html, type SafeHtml } from "../html";
import { when } from "../layout";

/** What the Activity page filters by: each a substring of its field (outcome exact), from the query string. */
export interface ActivityFilter {
  principal: string;
  tool: string;
  origin: string;
  outcome: string;
}

export function activityFilter(url: URL): ActivityFilter {
  const read = (name: string) => (url.searchParams.get(name) ?? "").slice(0, 200);
  return { principal: read("principal"), tool: read("tool"), origin: read("origin"), outcome: read("outcome") };
}

export function matches(filter: ActivityFilter): (entry: ActivityEntry) => boolean {
  return (entry) =>
    entry.principal.includes(filter.principal) &&
    entry.tool.includes(filter.tool) &&
    entry.origin.includes(filter.origin) &&
    (filter.outcome === "" || entry.outcome === filter.outcome);
}

const OUTCOMES = ["ok", "tool_error", "error", "refused"];

/** Activity: recent calls, refreshed live, filterable; each row opens its arguments and result. */
export function activityPage(filter: ActivityFilter, rows: SafeHtml): SafeHtml {
  const text = (name: keyof ActivityFilter, label: string) =>
    html`<div><label for="f-${name}">${label}</label><input type="text" id="f-${name}" name="${name}" value="${filter[name]}"></div>`;
  return html`<form method="get" action="activity" class="filters">
${text("principal", "Principal")}${text("tool", "Tool")}${text("origin", "Origin")}
<div><label for="f-outcome">Outcome</label><select id="f-outcome" name="outcome"><option value="">any</option>${OUTCOMES.map(
    (o) => html`<option${o === filter.outcome ? html` selected` : ""}>${o}</option>`,
  )}</select></div>
<button type="submit">Filter</button>
</form>
<p class="muted">The last calls of this instance, newest first; refreshed every two seconds. Arguments and results are kept masked.</p>
<table>
<thead><tr><th>Time</th><th>Principal</th><th>Tool</th><th>Origin</th><th>Duration</th><th>Outcome</th><th>Size</th></tr></thead>
<tbody data-live-rows="activity-rows">${rows}</tbody>
</table>`;
}

/** The table's rows (also what the page fetches every two seconds). */
export function activityRows(entries: readonly ActivityEntry[]): SafeHtml {
  if (entries.length === 0) return html`<tr><td colspan="7" class="muted">No calls yet.</td></tr>`;
  return html`${entries.map(
    (e) => html`<tr data-call="${e.id}">
<td><a href="${href("call", { id: e.id })}">${when(e.time)}</a></td><td>${e.principal}</td><td><a href="${href("call", { id: e.id })}">${e.tool}</a></td><td>${e.origin}</td>
<td>${e.durationMs} ms</td><td class="${e.outcome === "ok" ? "ok" : "bad"}">${e.outcome}</td><td>${e.bytes} B</td></tr>`,
  )}`;
}

/** One call: who, what, how it went, and its arguments and result as kept (masked). */
export function callPage(entry: ActivityEntry): SafeHtml {
  return html`<table>
<tr><th>Time</th><td>${entry.time}</td></tr><tr><th>Principal</th><td>${entry.principal}</td></tr><tr><th>Tool</th><td>${entry.tool}</td></tr>
<tr><th>Origin</th><td>${entry.origin}</td></tr><tr><th>Duration</th><td>${entry.durationMs} ms</td></tr><tr><th>Outcome</th><td>${entry.outcome}</td></tr>
<tr><th>Size</th><td>${entry.bytes} bytes</td></tr>
</table>
<h2>Arguments</h2><pre data-arguments>${pretty(entry.arguments)}</pre>
<h2>Result</h2><pre data-result>${pretty(entry.result)}</pre>
<p><a href="activity">Back to the activity</a></p>`;
}

/** Kept JSON indented for reading; text that is not JSON (an error, a cut result) as it is. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
