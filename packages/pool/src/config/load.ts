import { SERVER_NAME_PATTERN, principalOfName } from "@codemux/core";
import { resolve } from "node:path";
import type { z } from "zod";
import { ConfigError } from "../errors";
import { parseJsonc } from "./jsonc";
import { interpolate, unsupportedReason, type InterpolationContext } from "./interpolate";
import { isHttpsUrl } from "@modelcontextprotocol/client";
import { BLOCK_KEYS, FOREIGN_KEYS, HTTP_KEYS, STDIO_KEYS, TRANSPORT_TYPES, globalOAuthSchema, serverEntrySchema } from "./schema";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  type OAuthSettings,
  type PoolConfig,
  type PrincipalCredentials,
  type ServerSpec,
  type TlsSettings,
  type TransportSpec,
} from "./types";
import { rootUri } from "./roots";
import { closestKey } from "./suggest";

export interface ParseConfigOptions {
  /** Shown in error messages; its folder (or, in `.vscode/`, that folder's parent) is `${workspaceFolder}` unless `workspaceFolder` is given. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** `${workspaceFolder}`: the config file's folder by default (the parent of `.vscode`), else the working directory. */
  workspaceFolder?: string;
  /** `${userHome}`: `HOME` / `USERPROFILE` of `env` by default. */
  home?: string;
}

/**
 * Reads and validates a config file in the format MCP clients use (`mcpServers` or `servers`, JSON or JSONC), or a file holding one server.
 * @example const config = await loadConfigFile("./codemux.json"); config.warnings?.forEach((w) => console.error(w));
 */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<PoolConfig> {
  return parseConfig(await readConfigText(file), { file, env });
}

/** A config file's text; a file that cannot be read is a ConfigError that says why in words (missing, a folder, permissions). */
export async function readConfigText(file: string): Promise<string> {
  // Imported here so that the root entry loads no file-system module until a file is read.
  const { readFile } = await import("node:fs/promises");
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "the file does not exist"
        : code === "EISDIR"
          ? "it is a directory, not a file"
          : code === "EACCES"
            ? "permission denied"
            : (error as Error).message;
    throw new ConfigError(`Cannot read config ${file}: ${reason}.`, { file, cause: error });
  }
}

/** Validates config text; throws a ConfigError naming the file, entry and field, and lists softer mistakes in `warnings`. */
export function parseConfig(text: string, options: ParseConfigOptions = {}): PoolConfig {
  const file = options.file ?? "config";
  const env = options.env ?? process.env;
  const context: InterpolationContext = {
    home: options.home ?? env.HOME ?? env.USERPROFILE,
    workspaceFolder: options.workspaceFolder ?? workspaceOf(folderOf(options.file)) ?? processCwd(),
    pathSeparator: typeof process !== "undefined" && process.platform === "win32" ? "\\" : "/",
  };
  const fail = (where: string, message: string): never => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  };
  const data = parseJsonc(text, file).value;
  if (!isObject(data)) return fail("top level", 'expected an object with "mcpServers" (or "servers")');
  const key = "mcpServers" in data ? "mcpServers" : "servers" in data ? "servers" : undefined;
  const entries = key ? data[key] : isSingleServer(data) ? { [singleServerName(data, file, fail)]: data } : undefined;
  if (!key && !entries)
    return fail("top level", `expected a "mcpServers" (or "servers") object listing the servers${misspelled(data, ["mcpServers", "servers"])}`);
  if (!isObject(entries)) return fail(key ?? "top level", "expected an object whose keys are server names");

  // A single-server file's top-level `oauth` is that server's own block, read with its entry.
  const oauthDefaults = key && data.oauth !== undefined ? globalOAuthOf(data.oauth, { env, context, fail }) : undefined;
  const servers: ServerSpec[] = [];
  const warnings: string[] = [];
  for (const [name, raw] of Object.entries(entries)) {
    // A single-server file's fields are at the top level, so its errors name the field alone.
    const where = key ? `${key}.${name}` : "";
    if (!SERVER_NAME_PATTERN.test(name)) {
      fail(where, 'a server name may hold letters, digits, "-" and single "_" (not "__", not at either end)');
    }
    if (isObject(raw) && raw.disabled === true) continue;
    const spec = toSpec(name, raw, {
      env,
      context,
      ...(oauthDefaults ? { oauthDefaults } : {}),
      fail: (field, message) => fail([where, field].filter(Boolean).join(".") || "top level", message),
    });
    const entryWarnings = unknownKeyWarnings(where ? `${file}: ${where}` : file, raw as Record<string, unknown>, spec);
    if (entryWarnings.length) {
      spec.warnings = entryWarnings;
      warnings.push(...entryWarnings);
    }
    servers.push(spec);
  }
  return { source: file, servers, warnings };
}

/** A file whose top level is one entry (`{"command": ...}` or `{"url": ...}`), as `--config server.json` files of other proxies are. */
function isSingleServer(data: Record<string, unknown>): boolean {
  return (
    ["command", "url", "serverUrl", "httpUrl"].some((k) => typeof data[k] === "string") ||
    (typeof data.type === "string" && TRANSPORT_TYPES.includes(data.type))
  );
}

/** A single server's name: its `name` field, else the file's name without its extension. */
function singleServerName(data: Record<string, unknown>, file: string, fail: (where: string, message: string) => never): string {
  if (typeof data.name === "string") {
    return SERVER_NAME_PATTERN.test(data.name)
      ? data.name
      : fail("name", 'a server name may hold letters, digits, "-" and single "_" (not "__", not at either end)');
  }
  const base = file.slice(Math.max(file.lastIndexOf("/"), file.lastIndexOf("\\")) + 1).replace(/\.[^.]*$/, "");
  return SERVER_NAME_PATTERN.test(base)
    ? base
    : fail(
        "top level",
        `the file holds one server, which is named after the file, but "${base}" is not a server name; add a "name" field (letters, digits, "-" and single "_")`,
      );
}

type Fail = (field: string, message: string) => never;

/** The `oauth` block with `${VAR}` expanded in its strings (a client secret usually comes from the environment). */
function oauthOf(oauth: OAuthSettings, sub: (value: string, field: string) => string, fail: Fail): OAuthSettings {
  const metadataUrl = oauth.clientMetadataUrl ? sub(oauth.clientMetadataUrl, `oauth.clientMetadataUrl`) : undefined;
  // The client id an authorization server fetches: the revision requires https and a path.
  if (metadataUrl !== undefined && !isHttpsUrl(metadataUrl))
    fail(
      `oauth.clientMetadataUrl`,
      "must be an https URL with a path, where codemux's client ID metadata document is hosted, e.g. https://example.com/codemux/client.json",
    );
  return {
    ...(oauth.clientId ? { clientId: sub(oauth.clientId, `oauth.clientId`) } : {}),
    ...(oauth.clientSecret ? { clientSecret: sub(oauth.clientSecret, `oauth.clientSecret`) } : {}),
    ...(oauth.scope ? { scope: sub(oauth.scope, `oauth.scope`) } : {}),
    ...(oauth.redirectPort ? { redirectPort: oauth.redirectPort } : {}),
    ...(metadataUrl ? { clientMetadataUrl: metadataUrl } : {}),
  };
}

/** The config's top-level `oauth` block (`clientMetadataUrl`), checked and expanded. */
function globalOAuthOf(raw: unknown, { env, context, fail }: SpecContext): OAuthSettings {
  const parsed = globalOAuthSchema.safeParse(raw);
  if (!parsed.success) {
    const [field, message] = firstIssue(parsed.error);
    return fail(["oauth", field].filter(Boolean).join("."), message);
  }
  const sub = (value: string, field: string) => {
    const result = interpolate(value, env, context);
    if (result.unsupported.length) fail(field, unsupportedReason(result.unsupported[0]!));
    if (result.missing.length) fail(field, `environment variable ${result.missing.join(", ")} is not set`);
    return result.value;
  };
  return oauthOf(parsed.data, sub, fail);
}

/** The `tls` block with `${VAR}` expanded in its paths, each resolved against the config's folder. */
function tlsOf(tls: TlsSettings, { base, sub }: { base: string | undefined; sub: (value: string, field: string) => string }): TlsSettings {
  const file = (value: string | undefined, field: keyof TlsSettings) => (value ? { [field]: resolve(base ?? ".", sub(value, `tls.${field}`)) } : {});
  return { ...file(tls.ca, "ca"), ...file(tls.cert, "cert"), ...file(tls.key, "key") };
}

interface SpecContext {
  env: NodeJS.ProcessEnv;
  context: InterpolationContext;
  fail: Fail;
  /** The config's top-level `oauth` block. */
  oauthDefaults?: OAuthSettings;
}

function toSpec(name: string, raw: unknown, { env, context, fail, oauthDefaults }: SpecContext): ServerSpec {
  if (!isObject(raw)) return fail("", 'expected an object with "command" (stdio) or "url" (HTTP)');
  if (typeof raw.type === "string" && !TRANSPORT_TYPES.includes(raw.type)) {
    const suggestion = closestKey(raw.type, TRANSPORT_TYPES);
    return fail("type", `unknown transport "${raw.type}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; use "stdio", "http" or "sse"`);
  }
  // Windsurf writes `serverUrl`, Gemini CLI `httpUrl`: both name the Streamable HTTP endpoint.
  const alias =
    raw.url === undefined && raw.command === undefined
      ? typeof raw.serverUrl === "string"
        ? raw.serverUrl
        : typeof raw.httpUrl === "string"
          ? raw.httpUrl
          : undefined
      : undefined;
  const source = alias === undefined ? raw : { ...raw, url: alias };
  const isHttp = source.type !== undefined && source.type !== "stdio" ? true : source.command === undefined && source.url !== undefined;
  if (!isHttp && source.command === undefined) return fail("command", `required (or give "url" for an HTTP server)${misspelled(raw, ["command", "url"])}`);
  const parsed = serverEntrySchema.options[isHttp ? 1 : 0].safeParse(source);
  if (!parsed.success) {
    const [field, message] = firstIssue(parsed.error);
    return fail(field, message === "required" ? `required${misspelled(raw, [field])}` : message);
  }
  const entry = parsed.data as Record<string, unknown>;

  const missing = new Set<string>();
  const sub = (value: string, field: string) => {
    const result = interpolate(value, env, context);
    if (result.unsupported.length) fail(field, unsupportedReason(result.unsupported[0]!));
    result.missing.forEach((m) => missing.add(m));
    return result.value;
  };
  const subMap = (map: unknown, field: string) =>
    Object.fromEntries(Object.entries((map ?? {}) as Record<string, string>).map(([k, v]) => [k, sub(v, `${field}.${k}`)]));

  let transport: TransportSpec;
  if (isHttp) {
    transport = {
      type: entry.type === "sse" ? "sse" : "http",
      url: sub(entry.url as string, "url"),
      headers: subMap(entry.headers, "headers"),
      ...(entry.proxy === undefined ? {} : { proxy: entry.proxy === false ? false : sub(entry.proxy as string, "proxy") }),
      ...(entry.oauth === undefined
        ? oauthDefaults
          ? { oauthDefaults }
          : {}
        : { oauth: { ...oauthDefaults, ...oauthOf(entry.oauth as OAuthSettings, sub, fail) } }),
      ...(entry.tls === undefined ? {} : { tls: tlsOf(entry.tls as TlsSettings, { base: context.workspaceFolder, sub }) }),
    };
  } else {
    transport = {
      type: "stdio",
      command: sub(entry.command as string, "command"),
      args: ((entry.args ?? []) as string[]).map((a, i) => sub(a, `args.${i}`)),
      env: subMap(entry.env, "env"),
      ...(entry.cwd ? { cwd: sub(entry.cwd as string, "cwd") } : {}),
    };
  }
  const spec: ServerSpec = {
    name,
    transport,
    callTimeoutMs: (entry.callTimeoutMs as number | undefined) ?? DEFAULT_CALL_TIMEOUT_MS,
    connectTimeoutMs: (entry.connectTimeoutMs as number | undefined) ?? DEFAULT_CONNECT_TIMEOUT_MS,
    tools: (entry.tools as ServerSpec["tools"] | undefined) ?? {},
    ...(entry.refreshIntervalMs === undefined ? {} : { refreshIntervalMs: entry.refreshIntervalMs as number }),
    ...(entry.lazy === true ? { lazy: true } : {}),
    ...(entry.idleStopMs === undefined ? {} : { idleStopMs: entry.idleStopMs as number }),
    ...(entry.roots === undefined ? {} : { roots: rootsOf(entry.roots as string[], { base: context.workspaceFolder, sub, fail }) }),
    ...isolationOf(entry, fail),
    ...(entry.maxInstances === undefined ? {} : { maxInstances: entry.maxInstances as number }),
    ...(entry.protocol === "2025-11-25" ? { protocol: "2025-11-25" as const } : {}),
    ...(entry.perPrincipal === undefined ? {} : { perPrincipal: perPrincipalOf(entry.perPrincipal as Record<string, PrincipalCredentials>, subMap) }),
  };
  if (missing.size > 0) {
    spec.problem = `environment variable${missing.size > 1 ? "s" : ""} ${[...missing].join(", ")} ${missing.size > 1 ? "are" : "is"} not set (write \${NAME:-default} for a default)`;
  }
  return spec;
}

/** The entry's isolation and credentials: per-principal credentials run per principal unless the entry says per session. */
function isolationOf(entry: Record<string, unknown>, fail: Fail): Pick<ServerSpec, "isolation" | "credentials"> {
  if (entry.credentials !== "per-principal") {
    if (entry.perPrincipal !== undefined) fail("perPrincipal", 'is read only with "credentials": "per-principal"');
    return entry.isolation === undefined || entry.isolation === "shared" ? {} : { isolation: entry.isolation as "principal" | "session" };
  }
  if (entry.isolation === "shared") fail("isolation", 'cannot be "shared" with "credentials": "per-principal": each principal needs its own connection');
  return { credentials: "per-principal", isolation: entry.isolation === "session" ? "session" : "principal" };
}

/** Each principal's env and headers, `${VAR}` expanded like the entry's own. */
function perPrincipalOf(
  map: Record<string, PrincipalCredentials>,
  subMap: (map: unknown, field: string) => Record<string, string>,
): Record<string, PrincipalCredentials> {
  return Object.fromEntries(
    // A bare name is a token's, as everywhere a principal is named: "alice" is "token:alice".
    Object.entries(map).map(([principal, { env, headers }]) => [
      principalOfName(principal),
      {
        ...(env ? { env: subMap(env, `perPrincipal.${principal}.env`) } : {}),
        ...(headers ? { headers: subMap(headers, `perPrincipal.${principal}.headers`) } : {}),
      },
    ]),
  );
}

/** The entry's `roots` as `file://` URIs, `${VAR}` expanded and relative paths resolved against the config's folder. */
function rootsOf(roots: string[], { base, sub, fail }: { base: string | undefined; sub: (value: string, field: string) => string; fail: Fail }): string[] {
  return roots.map((root, i) => {
    const made = rootUri(sub(root, `roots.${i}`), base);
    return "uri" in made ? made.uri : fail(`roots.${i}`, made.problem);
  });
}

/** One sentence per key that neither codemux nor another known client reads, with the nearest key codemux reads. */
function unknownKeyWarnings(where: string, raw: Record<string, unknown>, spec: ServerSpec): string[] {
  const known = spec.transport.type === "stdio" ? STDIO_KEYS : HTTP_KEYS;
  const warnings: string[] = [];
  for (const key of Object.keys(raw)) {
    if (known.includes(key) || FOREIGN_KEYS.has(key)) continue;
    if (STDIO_KEYS.includes(key) || HTTP_KEYS.includes(key)) {
      warnings.push(
        `${where}: "${key}" is ignored in ${spec.transport.type === "stdio" ? 'a stdio entry (it has "command")' : 'an HTTP entry (it has "url")'}.`,
      );
      continue;
    }
    const suggestion = closestKey(
      key,
      [...STDIO_KEYS, ...HTTP_KEYS].filter((k, i, all) => all.indexOf(k) === i),
    );
    let sentence = `${where}: unknown key "${key}" is ignored${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`;
    if (suggestion === "args" && spec.transport.type === "stdio" && spec.transport.args.length === 0) {
      sentence += `; without "args" the server runs "${spec.transport.command}" with no arguments, which may start something that never answers`;
    } else if (suggestion === "disabled") {
      sentence += "; the server is started";
    }
    warnings.push(`${sentence}.`);
  }
  return warnings;
}

/** VS Code's `${workspaceFolder}` for `.vscode/mcp.json` is the folder that holds `.vscode`, not `.vscode` itself. */
function workspaceOf(folder: string | undefined): string | undefined {
  const match = folder === undefined ? null : /^(.*)[\\/]\.vscode$/.exec(folder);
  return match ? match[1] || "/" : folder;
}

function folderOf(file: string | undefined): string | undefined {
  if (!file || !/[\\/]/.test(file)) return undefined;
  const index = Math.max(file.lastIndexOf("/"), file.lastIndexOf("\\"));
  const folder = file.slice(0, index) || "/";
  if (/^(?:[A-Za-z]:)?[\\/]/.test(folder)) return folder;
  const cwd = processCwd();
  return cwd ? `${cwd}/${folder}`.replace(/\/\.(?=\/|$)/g, "") : folder;
}

function processCwd(): string | undefined {
  return typeof process !== "undefined" && typeof process.cwd === "function" ? process.cwd() : undefined;
}

/** `; did you mean "command" instead of "comand"?` for the first key of `object` that is a near miss of a wanted one, else "". */
function misspelled(object: Record<string, unknown>, wanted: string[]): string {
  for (const key of Object.keys(object)) {
    if (wanted.includes(key) || STDIO_KEYS.includes(key) || HTTP_KEYS.includes(key) || FOREIGN_KEYS.has(key)) continue;
    const suggestion = closestKey(key, wanted);
    if (suggestion) return `; did you mean "${suggestion}" instead of "${key}"?`;
  }
  return "";
}

function firstIssue(error: z.ZodError): [string, string] {
  const issue = error.issues[0];
  if (!issue) return ["", "invalid entry"];
  if (issue.code === "unrecognized_keys") {
    const block = issue.path.map(String).join(".");
    const known = BLOCK_KEYS[block] ?? [];
    const key = issue.keys[0] ?? "";
    const suggestion = closestKey(key, known);
    return [block, `unknown key "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; it takes ${known.join(", ")}`];
  }
  const message = issue.message.replace(/^Invalid input: /, "");
  return [issue.path.map(String).join("."), /received undefined$/.test(message) ? "required" : message];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
