import { joinedText, type ToolResult } from "@codemux/core";
import { form } from "../form-page";
import { href, html, type SafeHtml } from "../html";
import { when } from "../layout";
import type { UiJob } from "../sources";
import type { UiSession } from "../ui-sessions";

const LIVE = new Set(["queued", "running"]);
/** Jobs the list shows, newest first (the journal keeps each principal's for their retention). */
const MAX_JOBS_SHOWN = 200;
/** Characters of a job's output the page shows. */
const MAX_OUTPUT_CHARS = 64 * 1024;

/** The hint on the Jobs page when the server was started without jobs. */
export const NO_JOBS = "Background jobs are not on in this process: codemux serve turns them on; an embedder passes its JobManager as the ui.jobs option.";

/** Jobs: every principal's background jobs, newest first, with cancel for those still running. */
export function jobsPage(jobs: readonly UiJob[], session: UiSession): SafeHtml {
  if (jobs.length === 0) return html`<p class="muted">No jobs. A model starts one with <code>background: true</code> on execute_code or call_tool.</p>`;
  return html`<table>
<thead><tr><th>Job</th><th>Status</th><th>Principal</th><th>What</th><th>Started</th><th>Calls</th><th></th></tr></thead>
<tbody>${jobs.slice(0, MAX_JOBS_SHOWN).map(
    (job) => html`<tr data-job="${job.id}">
<td><a href="${href("job", { id: job.id })}">${job.id}</a></td><td>${job.status}</td><td>${job.principal}</td><td>${job.kind}: ${job.description}</td>
<td>${when(job.createdAt)}</td><td>${job.toolCalls}</td>
<td>${LIVE.has(job.status) ? form({ action: "cancel-job", session, inline: true }, html`<input type="hidden" name="id" value="${job.id}"><button type="submit">Cancel</button>`) : ""}</td></tr>`,
  )}</tbody>
</table>`;
}

/** One job: its status and its output (result, or why it ended). */
export function jobPage(job: UiJob, result: ToolResult | undefined, session: UiSession): SafeHtml {
  const output = result ? (joinedText(result) ?? JSON.stringify(result, null, 2)) : (job.error ?? (LIVE.has(job.status) ? "(still running)" : "(no output)"));
  const shown = output.length > MAX_OUTPUT_CHARS ? `${output.slice(0, MAX_OUTPUT_CHARS)}\n… (${output.length - MAX_OUTPUT_CHARS} more characters)` : output;
  return html`<table>
<tr><th>Status</th><td data-status>${job.status}</td></tr><tr><th>Principal</th><td>${job.principal}</td></tr><tr><th>What</th><td>${job.kind}: ${job.description}</td></tr>
<tr><th>Started</th><td>${when(job.createdAt)}</td></tr><tr><th>Ended</th><td>${when(job.endedAt)}</td></tr><tr><th>Tool calls</th><td>${job.toolCalls}</td></tr>
</table>
${LIVE.has(job.status) ? form({ action: "cancel-job", session }, html`<input type="hidden" name="id" value="${job.id}"><button type="submit">Cancel this job</button>`) : ""}
<h2>Output</h2><pre data-output>${shown}</pre>
<p><a href="jobs">Back to the jobs</a></p>`;
}
