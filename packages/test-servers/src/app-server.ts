#!/usr/bin/env node
/**
 * An MCP server on SDK v2 with an MCP App (the ext-apps server helpers), over stdio in both eras, for
 * codemux's tests of apps: `show_sales` shows `ui://charts/sales.html` (a view that shows the tool's input
 * and result, and whose button calls `refresh_sales`, a tool only an app may call). `--name N` names it
 * (its answers carry the name); `--uri U` serves the view at another ui:// URI.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RESOURCE_MIME_TYPE, registerAppResource, registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { flagReader } from "./flags";

const value = flagReader(process.argv.slice(2));
const name = value("--name") ?? "charts";
const uri = value("--uri") ?? "ui://charts/sales.html";
// The view's script, bundled for the browser beside this file; `<\/script` keeps it inside its tag.
const script = readFileSync(fileURLToPath(new URL("./app-view.global.js", import.meta.url)), "utf8").replaceAll("</script", "<\\/script");
const html = `<!doctype html><html><head><meta charset="utf-8"><title>Sales (${name})</title></head><body>
<h1>Sales of ${name}</h1><p id="status">loading</p>
<pre id="input"></pre><pre id="result"></pre>
<button id="refresh">Refresh</button><pre id="refreshed"></pre>
<script>${script}</script></body></html>`;
/** What the resource's `_meta.ui` says (passed to hosts unchanged through codemux). */
const resourceUi = {
  csp: { connectDomains: ["https://api.example.com"], resourceDomains: ["https://cdn.example.com"] },
  permissions: { clipboardWrite: {} },
  domain: `${name}.apps.example.com`,
  prefersBorder: true,
};
let refreshes = 0;

serveStdio(
  () => {
    const server = new McpServer({ name, version: "1.0.0" });
    registerAppTool(
      server,
      "show_sales",
      {
        description: "Show the sales of a region in a chart.",
        inputSchema: z.object({ region: z.string() }),
        _meta: { ui: { resourceUri: uri } },
      },
      async ({ region }) => ({
        content: [{ type: "text", text: `Sales of ${region}: 42 (${name})` }],
        structuredContent: { region, total: 42, server: name },
      }),
    );
    registerAppTool(
      server,
      "refresh_sales",
      {
        description: "Refresh the chart's figures (the app's button).",
        inputSchema: z.object({ region: z.string() }),
        _meta: { ui: { resourceUri: uri, visibility: ["app"] } },
      },
      async ({ region }) => {
        refreshes += 1;
        return { content: [{ type: "text", text: `refreshed ${region}` }], structuredContent: { region, refreshes, server: name } };
      },
    );
    // The extensions the calling request declared (2026-07-28: its own envelope; 2025: the connection's initialize).
    server.registerTool("seen_extensions", { description: "Name the extensions the call's client declared." }, async (ctx) => {
      const envelope = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/clientCapabilities"] as
        | { extensions?: Record<string, unknown> }
        | undefined;
      const declared = envelope ?? server.server.getClientCapabilities();
      return { content: [{ type: "text", text: JSON.stringify(Object.keys(declared?.extensions ?? {}).sort()) }] };
    });
    server.registerTool("echo", { description: "Return the text it is given.", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: "text", text }],
    }));
    registerAppResource(server, "Sales chart", uri, { description: "The sales chart view.", _meta: { ui: resourceUi } }, async () => ({
      contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: { ui: resourceUi } }],
    }));
    return server;
  },
  { legacy: "serve" },
);
process.stdin.once("end", () => process.exit(0));
