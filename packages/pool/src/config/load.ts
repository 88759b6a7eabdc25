import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { ConfigError } from "../errors";
import { interpolate } from "./interpolate";
import { SERVER_NAME_PATTERN, serverEntrySchema } from "./schema";
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, type PoolConfig, type ServerSpec, type TransportSpec } from "./types";

export interface ParseConfigOptions {
  /** Shown in error messages. */
  file?: string;
  env?: NodeJS.ProcessEnv;
}

/** Reads and validates a config file in the format MCP clients use (`mcpServers` or `servers`). */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<PoolConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "the file does not exist" : code === "EISDIR" ? "it is a directory, not a file" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw new ConfigError(`Cannot read config ${file}: ${reason}.`, { file, cause: error });
  }
  return parseConfig(text, { file, env });
}

export function parseConfig(text: string, options: ParseConfigOptions = {}): PoolConfig {
  const file = options.file ?? "config";
  const env = options.env ?? process.env;
  const fail = (where: string, message: string): never => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  };
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    const { line, column } = jsonErrorPosition(text, (error as Error).message);
    throw new ConfigError(`Invalid config ${file}: JSON syntax error at line ${line}, column ${column}: ${cleanJsonMessage((error as Error).message)}.`, { file, cause: error });
  }
  if (!isObject(data)) return fail("top level", "expected an object with \"mcpServers\" (or \"servers\")");
  const key = "mcpServers" in data ? "mcpServers" : "servers" in data ? "servers" : undefined;
  if (!key) return fail("top level", "expected a \"mcpServers\" (or \"servers\") object listing the servers");
  const entries = data[key];
  if (!isObject(entries)) return fail(key, "expected an object whose keys are server names");

  const servers: ServerSpec[] = [];
  for (const [name, raw] of Object.entries(entries)) {
    const where = `${key}.${name}`;
    if (!SERVER_NAME_PATTERN.test(name)) {
      fail(where, "a server name may hold letters, digits, \"-\" and single \"_\" (not \"__\", not at either end)");
    }
    if (isObject(raw) && raw.disabled === true) continue;
    servers.push(toSpec(name, raw, env, (field, message) => fail(field ? `${where}.${field}` : where, message)));
  }
  return { source: file, servers };
}

type Fail = (field: string, message: string) => never;

function toSpec(name: string, raw: unknown, env: NodeJS.ProcessEnv, fail: Fail): ServerSpec {
  if (!isObject(raw)) return fail("", "expected an object with \"command\" (stdio) or \"url\" (HTTP)");
  if (typeof raw.type === "string" && !["stdio", "http", "streamable-http", "streamableHttp", "sse"].includes(raw.type)) {
    return fail("type", `unknown transport "${raw.type}" (use "stdio", "http" or "sse")`);
  }
  const isHttp = raw.type !== undefined && raw.type !== "stdio" ? true : raw.command === undefined && raw.url !== undefined;
  if (!isHttp && raw.command === undefined) return fail("command", "required (or give \"url\" for an HTTP server)");
  const parsed = serverEntrySchema.options[isHttp ? 1 : 0].safeParse(raw);
  if (!parsed.success) return fail(...firstIssue(parsed.error));
  const entry = parsed.data as Record<string, unknown>;

  const missing = new Set<string>();
  const sub = (value: string) => {
    const result = interpolate(value, env);
    result.missing.forEach((m) => missing.add(m));
    return result.value;
  };
  const subMap = (map: unknown) => Object.fromEntries(Object.entries((map ?? {}) as Record<string, string>).map(([k, v]) => [k, sub(v)]));

  let transport: TransportSpec;
  if (isHttp) {
    transport = { type: entry.type === "sse" ? "sse" : "http", url: sub(entry.url as string), headers: subMap(entry.headers) };
  } else {
    transport = {
      type: "stdio",
      command: sub(entry.command as string),
      args: ((entry.args ?? []) as string[]).map(sub),
      env: subMap(entry.env),
      ...(entry.cwd ? { cwd: sub(entry.cwd as string) } : {}),
    };
  }
  const spec: ServerSpec = {
    name,
    transport,
    callTimeoutMs: (entry.callTimeoutMs as number | undefined) ?? DEFAULT_CALL_TIMEOUT_MS,
    connectTimeoutMs: (entry.connectTimeoutMs as number | undefined) ?? DEFAULT_CONNECT_TIMEOUT_MS,
    tools: (entry.tools as ServerSpec["tools"] | undefined) ?? {},
  };
  if (missing.size > 0) {
    spec.problem = `environment variable${missing.size > 1 ? "s" : ""} ${[...missing].join(", ")} ${missing.size > 1 ? "are" : "is"} not set (write \${NAME:-default} for a default)`;
  }
  return spec;
}

function firstIssue(error: z.ZodError): [string, string] {
  const issue = error.issues[0];
  if (!issue) return ["", "invalid entry"];
  const message = issue.message.replace(/^Invalid input: /, "");
  return [issue.path.map(String).join("."), /received undefined$/.test(message) ? "required" : message];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** V8 reports a character position (and, on newer versions, line and column); editors want line and column. */
function jsonErrorPosition(text: string, message: string): { line: number; column: number } {
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const position = /position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : text.length;
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

function cleanJsonMessage(message: string): string {
  return message.replace(/\s*in JSON at position \d+.*$/, "").replace(/\s*\(line \d+ column \d+\)/, "").replace(/, ".*" is not valid JSON$/, "");
}
