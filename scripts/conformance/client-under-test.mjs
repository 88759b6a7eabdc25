#!/usr/bin/env node
// The MCP client under test of the conformance referee's client scenarios: codemux. The referee runs this with its
// scenario server's URL as the last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO; this starts
// `codemux serve --mode passthrough` with that URL as its one downstream and drives it with an SDK v2 client, as a
// user would: what the scenario expects codemux to do with the server is what the client asks of codemux.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startUntil, CLI_PATH } from "./processes.mjs";
import { login } from "./client-login.mjs";

const SERVER = "conformance";
const PREFIX = `${SERVER}__`;
/** The client ID metadata document URL the referee's authorization servers take as codemux's (they never fetch it). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
const serverUrl = process.argv.at(-1);
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const legacy = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION !== undefined && process.env.MCP_CONFORMANCE_PROTOCOL_VERSION < "2026";

function log(...parts) {
  console.error(`[client-under-test ${scenario}]`, ...parts);
}

async function main() {
  if (!scenario || !serverUrl?.startsWith("http")) throw new Error("Usage: MCP_CONFORMANCE_SCENARIO=<scenario> client-under-test.mjs <server-url>");
  const dir = mkdtempSync(join(tmpdir(), "codemux-conformance-client-"));
  const env = { CODEMUX_HOME: join(dir, "home") };
  const entry = { type: "http", url: serverUrl, ...(legacy ? { protocol: "2025-11-25" } : {}) };
  // The scenario's pre-registered client, else the client ID metadata document a user would publish (the referee's own URL).
  if (scenario.startsWith("auth/"))
    entry.oauth = context.client_id
      ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
      : { clientMetadataUrl: CLIENT_METADATA_URL };
  const config = join(dir, "codemux.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { [SERVER]: entry } }));
  let codemux;
  let client;
  try {
    if (scenario.startsWith("auth/")) await login({ config, env, server: SERVER, log });
    codemux = await startUntil({
      args: [CLI_PATH, "serve", "--http", "127.0.0.1:0", "--config", config, "--mode", "passthrough", "--no-watch"],
      env,
      // Serving, and the downstream connected or given up on (a server that needs a login fails at once).
      pattern: new RegExp(`^(?=[\\s\\S]*serving (http://127\\.0\\.0\\.1:\\d+)/mcp)(?=[\\s\\S]*\\[${SERVER}\\] (?:ready|failed))`),
      what: "codemux",
    });
    codemux.child.stderr.on("data", (chunk) => process.stderr.write(chunk));
    // The revision the referee runs at, on this leg too: a 2025 client opens a session with initialize, a 2026 one does not.
    client = new Client(
      { name: "codemux-conformance-client", version: "1.0.0" },
      { capabilities: { elicitation: { form: { applyDefaults: true } } }, versionNegotiation: { mode: legacy ? "legacy" : "auto" } },
    );
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { confirmed: true } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${codemux.match[1]}/mcp`)));
    await drive({ client, config, env });
  } finally {
    await client?.close().catch(() => undefined);
    if (codemux && codemux.child.exitCode === null) {
      const exited = new Promise((resolve) => codemux.child.once("exit", resolve));
      codemux.child.kill();
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Arguments for the tools a scenario's server offers, where it checks them (the rest are called with none). */
const ARGUMENTS = { add_numbers: { a: 2, b: 3 }, valid_tool: { region: "us-west1" } };
/** Scenarios whose server serves nothing past the listing, or only lists. */
const LIST_ONLY = new Set(["json-schema-ref-no-deref"]);
const WAIT_FOR_TOOLS_MS = 20_000;

const textOf = (result) => (result.content ?? []).map((c) => c.text ?? "").join("\n");
const needsLogin = (result) => result.isError && /codemux auth login/.test(textOf(result));

/** The downstream's tools as codemux lists them, unprefixed; waits (bounded) for some when `wait` is set. */
async function downstreamTools(client, wait) {
  const deadline = Date.now() + (wait ? WAIT_FOR_TOOLS_MS : 0);
  for (;;) {
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith(PREFIX));
    if (names.length > 0 || Date.now() >= deadline) return names.map((n) => n.slice(PREFIX.length));
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * What a user of codemux does: list the tools, call each (with the scenario's arguments); where codemux says a server needs
 * a login (none yet, more scope, another authorization server), run `codemux auth login` once and try again.
 */
async function drive({ client, config, env }) {
  const auth = scenario.startsWith("auth/");
  let loggedInAgain = false;
  const loginAgain = async () => {
    if (loggedInAgain) return false;
    loggedInAgain = true;
    await login({ config, env, server: SERVER, log });
    return true;
  };
  let tools = await downstreamTools(client, false);
  // A server that failed while connecting (it moved to another authorization server) lists nothing until a login.
  if (tools.length === 0 && auth && (await loginAgain())) tools = await downstreamTools(client, true);
  log("tools:", tools.join(", "));
  if (LIST_ONLY.has(scenario)) return;
  const calls = context.toolCalls ?? tools.map((name) => ({ name, arguments: ARGUMENTS[name] ?? {} }));
  for (const call of calls) {
    const request = { name: `${PREFIX}${call.name}`, arguments: call.arguments ?? {} };
    let result = await client.callTool(request);
    if (auth && needsLogin(result) && (await loginAgain())) result = await client.callTool(request);
    log(`${call.name}:`, JSON.stringify(result).slice(0, 500));
  }
}

main().catch((error) => {
  log(error.stack ?? error.message);
  process.exitCode = 1;
});
