import type { ServerStatus } from "@codemux/pool";
import type { ServerScan } from "@codemux/server";
import { html, type SafeHtml } from "../html";
import { csrfField, when } from "../layout";
import type { UiSession } from "../ui-sessions";

/** The protocol era a server speaks, in words. */
function eraOf(status: ServerStatus): string {
  if (status.protocol) return status.protocol === "2026-07-28" ? `2026 (${status.protocol})` : `2025 (${status.protocol})`;
  if (status.era) return status.era.kind === "modern" ? "2026" : "2025";
  return "not known yet";
}

/** An isolated server's instances, in words: the state beside it is its listing connection's. */
function isolationOf(status: ServerStatus): string {
  const count = status.instances ?? 0;
  return `one instance per ${status.isolation}${status.credentials ? ", with its own login" : ""}: ${count} running`;
}

/** Servers: each downstream server's state and why, era, tools, last refresh, a restart button and its stderr tail. */
export function serversPage(
  statuses: readonly ServerStatus[],
  session: UiSession,
  scan: (server: string) => ServerScan | undefined = () => undefined,
): SafeHtml {
  if (statuses.length === 0) return html`<p class="notice">No downstream servers are configured. Add some to the config file's <code>mcpServers</code>.</p>`;
  return html`<table>
<thead><tr><th>Server</th><th>State</th><th>Era</th><th>Tools</th><th>Scan</th><th>Last refresh</th><th>Restarts</th><th></th></tr></thead>
<tbody>
${statuses.map(
  (s) => html`<tr data-server="${s.name}">
<td><strong>${s.name}</strong><br><span class="muted">${s.transport} · ${s.endpoint}</span>${
    s.isolation ? html`<br><span data-isolation>${isolationOf(s)}</span>` : ""
  }</td>
<td><span class="${s.state === "ready" ? "ok" : s.state === "failed" ? "bad" : ""}">${s.state}</span>${s.error ? html`<br><span class="bad">${s.error}</span>` : ""}${
    s.detail ? html`<br><span class="muted">${s.detail}</span>` : ""
  }</td>
<td>${eraOf(s)}</td>
<td>${s.toolCount}</td>
<td>${scanCell(scan(s.name))}</td>
<td>${when(s.lastRefreshAt) || html`<span class="muted">never</span>`}</td>
<td>${s.restarts}</td>
<td><form class="inline" method="post" action="restart">${csrfField(session)}<input type="hidden" name="server" value="${s.name}"><button type="submit">Restart</button></form></td>
</tr>
<tr><td colspan="8"><details><summary>stderr (last ${s.stderrTail.length} lines)</summary><pre>${s.stderrTail.join("\n") || "(nothing written)"}</pre></details></td></tr>`,
)}
</tbody>
</table>`;
}

/** A server's scan verdict, and each tool (or its instructions) the scan flagged with what the model is shown of it. */
function scanCell(report: ServerScan | undefined): SafeHtml {
  if (!report) return html`<span class="muted">not scanned</span>`;
  const flagged = report.tools.filter((t) => t.verdict === "high" || t.verdict === "critical" || t.verdict === "warn" || t.held);
  const instructions =
    report.instructions && report.instructions.verdict !== "clean" && report.instructions.verdict !== "info" ? report.instructions : undefined;
  return html`<span data-scan="${report.verdict}" class="${report.verdict === "high" || report.verdict === "critical" ? "bad" : ""}">${report.verdict}</span>${flagged.map(
    (t) =>
      html`<br><span data-scan-tool="${t.qualifiedName}">${t.name}: ${t.verdict}${t.shown === "none" ? ", held back" : t.shown === "approved" ? ", approved definition shown" : ""} <span class="muted">${t.findings
        .filter((f) => f.severity !== "info")
        .map((f) => `${f.rule} in ${f.path}`)
        .join(", ")}</span></span>`,
  )}${instructions ? html`<br><span data-scan-tool="instructions">instructions: ${instructions.verdict}${instructions.held ? ", not shown" : ""}</span>` : ""}${report.items.map(
    (i) => html`<br><span data-scan-item="${i.id}">${i.kind === "prompts" ? "prompt" : "resource"} ${i.id}: ${i.verdict}${i.held ? ", held back" : ""}</span>`,
  )}`;
}
