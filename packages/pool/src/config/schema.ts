import { z } from "zod";

/** Server names become part of `server__tool` names and module paths. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*[A-Za-z0-9]$|^[A-Za-z0-9]$/;

const positiveMs = z.number().int().positive().max(24 * 60 * 60 * 1000);

const commonFields = {
  disabled: z.boolean().optional(),
  callTimeoutMs: positiveMs.optional(),
  connectTimeoutMs: positiveMs.optional(),
  tools: z
    .object({
      allow: z.array(z.string().min(1)).optional(),
      deny: z.array(z.string().min(1)).optional(),
    })
    .strict()
    .optional(),
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
  url: z.string().url("must be an http(s) URL").refine((u) => /^https?:\/\//i.test(u), "must be an http(s) URL"),
  headers: stringMap.optional(),
});

/** One entry of `mcpServers` / `servers`, as the MCP clients write it (unknown keys are ignored). */
export const serverEntrySchema = z.union([stdioEntrySchema, httpEntrySchema]);

export type StdioEntry = z.infer<typeof stdioEntrySchema>;
export type HttpEntry = z.infer<typeof httpEntrySchema>;
