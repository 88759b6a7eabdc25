import { joinedText, type CatalogEntry, type ToolResult } from "@codemux/core";
import type { SearchAnswer } from "@codemux/server";
import { form } from "../form-page";
import { href, html, type SafeHtml } from "../html";
import { schemaFields } from "../form";
import type { UiSession } from "../ui-sessions";

/** Characters of a result the Tools page shows. */
const MAX_RESULT_CHARS = 64 * 1024;

/** Tools: a search box answered by the real search_tools ranking as you type (and as a plain form without script). */
export function toolsPage(query: string, results: SafeHtml): SafeHtml {
  return html`<form method="get" action="tools" role="search">
<label for="q">Search the catalog as the model does (search_tools)</label>
<input type="search" id="q" name="q" value="${query}" autocomplete="off" autofocus data-live-search="tool-results" placeholder="read a file, create an issue...">
<button type="submit">Search</button>
</form>
<div id="search-results">${results}</div>`;
}

/** The ranked hits, each linking to its tool. */
export function searchResults(query: string, answer: SearchAnswer | undefined): SafeHtml {
  if (!query.trim()) return html`<p class="muted">Type what you want to do; the ranking answers as you type.</p>`;
  if (!answer || answer.hits.length === 0) return html`<p class="muted">No tool matches "${query}".</p>`;
  return html`<ol class="hits">${answer.hits.map(
    ({ entry }) =>
      html`<li><a href="${href("tool", { name: entry.qualifiedName })}" data-tool="${entry.qualifiedName}">${entry.qualifiedName}</a> <code>${entry.signature}</code><br><span class="muted">${entry.summary ?? ""}</span></li>`,
  )}</ol>
<p class="muted">${answer.hits.length} of ${answer.tools} tools${answer.pending.length ? html`; still connecting: ${answer.pending.join(", ")}` : ""}</p>`;
}

/** One tool: its description, a form made from its schema to try a call, its schema and its TypeScript module. */
/** A call's outcome as the Tools page shows it under the form. */
export type CallOutcome = { result: ToolResult } | { error: string };

export function toolPage(view: {
  entry: CatalogEntry;
  typescript: string;
  session: UiSession;
  call?: { outcome: CallOutcome; values: URLSearchParams } | undefined;
}): SafeHtml {
  const { entry, typescript, session, call } = view;
  return html`<p><code>${entry.signature}</code></p>
<pre>${entry.tool.description ?? "(no description)"}</pre>
<h2>Try a call</h2>
<p class="muted">The call runs through the same pipeline as a client's (policies, plugins, the guard and the audit log), as you.</p>
${form({ action: "call", session }, html`<input type="hidden" name="name" value="${entry.qualifiedName}">${schemaFields(entry.tool.inputSchema, call?.values)}<p><button class="primary" type="submit">Call ${entry.qualifiedName}</button></p>`)}
${call ? resultBlock(call.outcome) : ""}
<h2>Input schema</h2>
<pre>${JSON.stringify(entry.tool.inputSchema, null, 2)}</pre>
<h2>TypeScript module <code>${entry.moduleSpecifier}</code></h2>
<pre>${typescript}</pre>`;
}

function resultBlock(outcome: CallOutcome): SafeHtml {
  if ("error" in outcome) return html`<h2>Result</h2><pre class="bad" data-result>${outcome.error}</pre>`;
  const text = joinedText(outcome.result) ?? JSON.stringify(outcome.result, null, 2);
  const shown = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters)` : text;
  return html`<h2>Result${outcome.result.isError ? html` <span class="bad">(the tool reported an error)</span>` : ""}</h2><pre data-result>${shown}</pre>`;
}
