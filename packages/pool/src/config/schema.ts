import { z } from "zod";
import { MAX_INSTANCES } from "../defaults";
import { MAX_ROOTS } from "./roots";

// Server names become part of `server__tool` names and module paths: the rule is the catalog's, the config checks names by it.

const positiveMs = z
  .number()
  .int()
  .positive()
  .max(24 * 60 * 60 * 1000);

const toolsSchema = z
  .object({
    allow: z.array(z.string().min(1)).optional(),
    deny: z.array(z.string().min(1)).optional(),
  })
  .strict();

const oauthSchema = z
  .object({
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    scope: z.string().min(1).optional(),
    redirectPort: z.number().int().min(1).max(65535).optional(),
    clientMetadataUrl: z.string().min(1).optional(),
  })
  .strict();

/** The config's top-level `oauth` block: what every HTTP entry's logins use unless the entry says otherwise. */
export const globalOAuthSchema = oauthSchema.pick({ clientMetadataUrl: true }).strict();

/** The keys of the blocks inside an entry that take no others, for a did-you-mean on a misspelled one. */
export const BLOCK_KEYS: Record<string, string[]> = { tools: Object.keys(toolsSchema.shape), oauth: Object.keys(oauthSchema.shape) };

/** The transports an entry's `type` may name. */
export const TRANSPORT_TYPES = ["stdio", "http", "streamable-http", "streamableHttp", "sse"];

const commonFields = {
  disabled: z.boolean().optional(),
  callTimeoutMs: positiveMs.optional(),
  connectTimeoutMs: positiveMs.optional(),
  refreshIntervalMs: z
    .number()
    .int()
    .min(0)
    .max(24 * 60 * 60 * 1000)
    .optional(),
  lazy: z.boolean().optional(),
  idleStopMs: positiveMs.optional(),
  roots: z.array(z.string().min(1, "must not be empty").max(4096)).max(MAX_ROOTS).optional(),
  isolation: z.enum(["shared", "principal", "session"]).optional(),
  credentials: z.enum(["shared", "per-principal"]).optional(),
  protocol: z.enum(["auto", "2025-11-25"]).optional(),
  perPrincipal: z
    .record(
      z.string().min(1).max(400),
      z.object({ env: z.record(z.string(), z.string()).optional(), headers: z.record(z.string(), z.string()).optional() }).strict(),
    )
    .refine((map) => Object.keys(map).length <= MAX_INSTANCES, `lists at most ${MAX_INSTANCES} principals`)
    .optional(),
  maxInstances: z.number().int().positive().max(MAX_INSTANCES).optional(),
  tools: toolsSchema.optional(),
};

const stringMap = z.record(z.string(), z.string());

export const stdioEntrySchema = z.object({
  ...commonFields,
  type: z.literal("stdio").optional(),
  command: z.string().min(1, "must not be empty"),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().min(1).optional(),
});

export const httpEntrySchema = z.object({
  ...commonFields,
  type: z.enum(["http", "streamable-http", "streamableHttp", "sse"]).optional(),
  url: z
    .string()
    .url("must be an http(s) URL")
    .refine((u) => /^https?:\/\//i.test(u), "must be an http(s) URL"),
  headers: stringMap.optional(),
  proxy: z.union([z.string().refine((u) => /^https?:\/\/[^/]/i.test(u), "must be an http(s) proxy URL or false"), z.literal(false)]).optional(),
  oauth: oauthSchema.optional(),
  tls: z
    .object({ ca: z.string().min(1).optional(), cert: z.string().min(1).optional(), key: z.string().min(1).optional() })
    .strict()
    .refine((tls) => (tls.cert === undefined) === (tls.key === undefined), "cert and key go together (a client certificate and its private key)")
    .optional(),
});

/** One entry of `mcpServers` / `servers`, as the MCP clients write it (unknown keys are warned about, not refused). */
export const serverEntrySchema = z.union([stdioEntrySchema, httpEntrySchema]);

export type StdioEntry = z.infer<typeof stdioEntrySchema>;
export type HttpEntry = z.infer<typeof httpEntrySchema>;

/** The keys codemux reads, per kind of entry. */
export const STDIO_KEYS = ["type", "command", "args", "env", "cwd", ...Object.keys(commonFields)];
export const HTTP_KEYS = ["type", "url", "headers", "proxy", "oauth", "tls", ...Object.keys(commonFields)];

/**
 * Keys other MCP clients (Claude Desktop and Code, Cursor, VS Code, Windsurf, Cline/Roo, Gemini CLI, Zed, goose...)
 * or codemux's own front ends write in an entry: accepted quietly, not read (`oauth` is read in an HTTP entry).
 */
export const FOREIGN_KEYS = new Set([
  "transport",
  "transportType",
  "description",
  "name",
  "title",
  "icon",
  "version",
  "enabled",
  "autoStart",
  "alwaysAllow",
  "autoApprove",
  "disabledTools",
  "timeout",
  "networkTimeout",
  "initTimeout",
  "envFile",
  "envs",
  "trust",
  "includeTools",
  "excludeTools",
  "oauth",
  "authProviderType",
  "dev",
  "gallery",
  "serverUrl",
  "httpUrl",
  "requestInit",
  "startup_timeout_sec",
  "tool_timeout_sec",
  "source",
  "settings",
  "notes",
  "tags",
  "$schema",
]);
