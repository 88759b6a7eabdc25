import {
  authDirectory,
  deleteAuthRecord,
  listAuthRecords,
  loginServer,
  oauthSettingsOf,
  type AuthRecord,
  type HttpTransportSpec,
  type OAuthSettings,
  type ServerSpec,
} from "@codemux/pool";
import { resolveConfig } from "@codemux/server";
import { join } from "node:path";
import type { Command } from "commander";
import type { GlobalOptions, RunContext } from "../context";
import { openInBrowser } from "../browser";
import { UsageError } from "../errors";

/** `codemux auth login|status|logout`: OAuth logins of remote servers, kept in <codemux home>/auth (owner-only). */
export function registerAuth(program: Command, context: RunContext): void {
  const auth = program.command("auth").description("OAuth logins of remote servers (stored in ~/.codemux/auth, owner-only)");

  auth
    .command("login")
    .description("log in to an HTTP server: prints (and on a desktop opens) the authorization URL, waits for the browser on 127.0.0.1")
    .argument("<server>", "the server's name in the config")
    .option("--port <port>", "loopback port of the callback (default: the entry's oauth.redirectPort, else a free one)", parsePort)
    .option("--timeout <seconds>", "how long to wait for the browser", parseSeconds, 300)
    .option("--no-open", "print the URL only, do not open a browser")
    .action(async (name: string, options: { port?: number; timeout: number; open: boolean }, command: Command) => {
      const server = await httpServer(command, context, name);
      const dir = await authDirectory();
      const settings = oauthSettingsOf(server.transport);
      const record = await loginServer({
        server: name,
        url: server.transport.url,
        dir,
        ...(settings ? { settings } : {}),
        ...(options.port ? { port: options.port } : {}),
        timeoutMs: options.timeout * 1000,
        onAuthorizationUrl: (url) => {
          context.stdout.write(`Open this URL to log in to ${name} (waiting up to ${options.timeout} s):\n\n  ${url.href}\n\n`);
          if (options.open) openInBrowser(url.href);
        },
      });
      context.stdout.write(`Logged in to ${name}: ${describeLogin(record, settings)}. Stored in ${join(dir, `${name}.json`)}.\n`);
    });

  auth
    .command("status")
    .description("the HTTP servers of the config and their logins (tokens are never printed)")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      const config = await loadConfig(command, context);
      const dir = await authDirectory();
      const records = new Map((await listAuthRecords(dir)).map((r) => [r.server, r]));
      const rows: Array<{ server: string; login: string; needsLogin: boolean }> = [];
      for (const server of config.servers) {
        if (server.transport.type === "stdio") continue;
        rows.push(statusOf(server as ServerSpec & { transport: HttpTransportSpec }, records.get(server.name)));
        records.delete(server.name);
      }
      for (const record of records.values()) rows.push({ server: record.server, login: `${describeLogin(record)} (not in the config)`, needsLogin: false });
      if (options.json) context.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else if (rows.length === 0) context.stdout.write("No HTTP servers in the config and no stored logins.\n");
      else {
        const width = Math.max(...rows.map((r) => r.server.length));
        context.stdout.write(rows.map((r) => `${r.server.padEnd(width)}  ${r.login}\n`).join(""));
      }
    });

  auth
    .command("logout")
    .description("delete the stored login of a server")
    .argument("<server>", "the server's name")
    .action(async (name: string) => {
      const dir = await authDirectory();
      const deleted = await deleteAuthRecord(dir, name).catch((error: Error) => {
        throw new UsageError(error.message);
      });
      context.stdout.write(deleted ? `Logged out of ${name}: deleted ${join(dir, `${name}.json`)}.\n` : `${name} had no stored login.\n`);
    });
}

async function loadConfig(command: Command, context: RunContext) {
  const opts = command.optsWithGlobals<GlobalOptions>();
  return resolveConfig({
    ...(opts.config ? { configPath: opts.config } : {}),
    inline: context.inline,
    fallback: () => ({ source: "built-in default", servers: [] }),
  });
}

async function httpServer(command: Command, context: RunContext, name: string): Promise<ServerSpec & { transport: HttpTransportSpec }> {
  const config = await loadConfig(command, context);
  const server = config.servers.find((s) => s.name === name);
  if (!server) {
    const known = config.servers.filter((s) => s.transport.type !== "stdio").map((s) => s.name);
    throw new UsageError(
      `No server named "${name}" in ${config.source}${known.length ? ` (HTTP servers: ${known.join(", ")})` : ""}; give the config with --config.`,
    );
  }
  if (server.transport.type === "stdio")
    throw new UsageError(`"${name}" is a stdio server; only HTTP servers log in with OAuth (give a stdio server its credentials in "env").`);
  return server as ServerSpec & { transport: HttpTransportSpec };
}

function statusOf(
  server: ServerSpec & { transport: HttpTransportSpec },
  record: AuthRecord | undefined,
): { server: string; login: string; needsLogin: boolean } {
  const name = server.name;
  if (Object.keys(server.transport.headers).some((h) => h.toLowerCase() === "authorization"))
    return { server: name, login: "uses the Authorization header of its entry", needsLogin: false };
  if (record && record.url !== server.transport.url)
    return { server: name, login: `needs login: the stored login is for ${record.url}; run codemux auth login ${name}`, needsLogin: true };
  if (record?.tokens) return { server: name, login: describeLogin(record, oauthSettingsOf(server.transport)), needsLogin: false };
  if (server.transport.oauth || record) return { server: name, login: `needs login: run codemux auth login ${name}`, needsLogin: true };
  return { server: name, login: `not logged in (run codemux auth login ${name} if it answers 401)`, needsLogin: false };
}

/** "logged in, access token expires in 59 min; refreshed automatically; client registered ...": never the tokens themselves. */
function describeLogin(record: AuthRecord, settings?: OAuthSettings): string {
  if (!record.tokens) return "no tokens stored";
  const refresh = record.tokens.refresh_token ? "; refreshed automatically" : "; no refresh token: log in again when it expires";
  const client = describeClient(record, settings);
  const rest = `${refresh}${client ? `; ${client}` : ""}`;
  if (!record.expiresAt) return `logged in${rest}`;
  const minutes = Math.round((Date.parse(record.expiresAt) - Date.now()) / 60_000);
  return `logged in, access token ${minutes > 0 ? `expires in ${minutes} min` : "expired"}${rest}`;
}

/** Which client codemux is at the authorization server that issued the tokens: a client ID metadata document (CIMD), a registration (DCR) or the config's id. */
function describeClient(record: AuthRecord, settings: OAuthSettings | undefined): string | undefined {
  const issuer = (record.tokens as { issuer?: unknown } | undefined)?.issuer;
  const client = (typeof issuer === "string" ? record.clients?.[issuer] : undefined) ?? record.clientInformation;
  if (!client) return undefined;
  if (client.client_id === settings?.clientId) return "client id from the config";
  if (client.client_id.startsWith("https://")) return `client id is the metadata document ${client.client_id} (CIMD)`;
  return "client registered by dynamic client registration (DCR)";
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port must be a port number (1-65535), not "${value}".`);
  return port;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a number of seconds, not "${value}".`);
  return seconds;
}
