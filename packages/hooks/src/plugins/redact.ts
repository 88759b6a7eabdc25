import type { ToolResult } from "@codemux/core";
import { Redactor, type RedactorOptions } from "../redactor";
import type { Plugin, PluginMetrics } from "../types";

export type RedactOptions = RedactorOptions;

export const REDACTED_META = "codemux/redacted";

/** MIME types whose base64 `blob` is text a reader can decode: scanned like text. */
const TEXT_MIME = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|yaml|x-yaml|javascript|x-sh|x-www-form-urlencoded|toml)\b)/i;

/**
 * `redact`: masks secrets (private key blocks, GitHub/AWS/Slack/Google/Stripe/OpenAI-style keys,
 * bearer tokens, JWTs, `password=...`, your own patterns) before they reach the model: in every
 * content part (text, also where a secret is split across two text parts; resource links; embedded
 * resources, text-typed blobs included; every field but image and audio data), in the keys and values
 * of structuredContent and `_meta`, and in the message of a call that failed (a server's JSON-RPC
 * error). Resource reads pass through it too. The audit plugin uses the same patterns for its lines.
 */
export function redactPlugin(options: RedactOptions = {}): Plugin & { readonly redactor: Redactor } {
  const redactor = new Redactor(options);
  let metrics: PluginMetrics | undefined;
  return {
    name: "redact",
    priority: 200,
    redactor,
    init(ctx) {
      metrics = ctx.metrics;
    },
    afterCall(call, result) {
      const { result: masked, count } = redactResult(redactor, result);
      if (count === 0) return;
      call.logField("redacted", count);
      metrics?.increment("codemux_redactions_total", { server: call.server }, count);
      return { ...masked, _meta: { ...masked._meta, [REDACTED_META]: count } };
    },
    onError(call, error) {
      const masked = redactError(redactor, error);
      if (!masked) return;
      call.logField("redacted", masked.count);
      metrics?.increment("codemux_redactions_total", { server: call.server }, masked.count);
      return masked.error;
    },
  };
}

/** The result with its secrets masked, and how many; only image and audio data pass unscanned. */
export function redactResult(redactor: Redactor, result: ToolResult): { result: ToolResult; count: number } {
  const parts = result.content ?? [];
  const texts = parts.flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : []));
  const joined = redactor.texts(texts);
  let count = joined.count;
  let nextText = 0;
  const content = parts.map((part) => {
    const masked = maskPart(redactor, part, part.type === "text" && typeof part.text === "string" ? joined.texts[nextText++] : undefined);
    count += masked.count;
    return masked.part;
  });
  const rest: Partial<ToolResult> = {};
  for (const key of ["structuredContent", "_meta"] as const) {
    if (result[key] === undefined) continue;
    const masked = redactor.value(result[key]);
    count += masked.count;
    rest[key] = masked.value as Record<string, unknown>;
  }
  if (count === 0) return { result, count };
  return { result: { ...result, content, ...rest } as ToolResult, count };
}

type Part = ToolResult["content"][number];

/** One content part masked: every string field (its text already masked with its neighbours' as `text`), a text-typed blob decoded, media data left. */
function maskPart(redactor: Redactor, part: Part, text: string | undefined): { part: Part; count: number } {
  const { fields, restore } = splitPart(part);
  const masked = redactor.value(fields);
  let count = masked.count;
  const blob = part.type === "resource" && "blob" in part.resource && TEXT_MIME.test(part.resource.mimeType ?? "") ? part.resource.blob : undefined;
  let maskedBlob = blob;
  if (blob !== undefined) {
    const decoded = redactor.text(Buffer.from(blob, "base64").toString("utf8"));
    count += decoded.count;
    if (decoded.count) maskedBlob = Buffer.from(decoded.text, "utf8").toString("base64");
  }
  if (count === 0 && text === (part as { text?: unknown }).text) return { part, count: 0 };
  return { part: restore(masked.value as Record<string, unknown>, text, maskedBlob), count };
}

/** A part's scannable fields apart from its text and its base64 payloads, and how to put it back together. */
function splitPart(part: Part): {
  fields: Record<string, unknown>;
  restore: (fields: Record<string, unknown>, text: string | undefined, blob: string | undefined) => Part;
} {
  const { text, data, resource, ...fields } = part as Part & { text?: unknown; data?: unknown; resource?: Record<string, unknown> };
  const { blob, ...resourceFields } = resource ?? {};
  const scanned = resource === undefined ? fields : { ...fields, resource: resourceFields };
  return {
    fields: scanned,
    restore: (masked, maskedText, maskedBlob) =>
      ({
        ...masked,
        ...(text !== undefined ? { text: maskedText ?? text } : {}),
        ...(data !== undefined ? { data } : {}),
        ...(resource !== undefined ? { resource: { ...(masked.resource as object), ...(blob !== undefined ? { blob: maskedBlob ?? blob } : {}) } } : {}),
      }) as Part,
  };
}

/**
 * A failed call's error with secrets masked in its message and data: a copy of the same class and code,
 * without its `cause` (which holds the server's words unmasked); undefined when there was nothing to mask.
 */
export function redactError(redactor: Redactor, error: unknown): { error: Error; count: number } | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = redactor.text(error.message);
  const data = "data" in error && error.data !== undefined ? redactor.value(error.data) : undefined;
  const count = message.count + (data?.count ?? 0);
  if (count === 0) return undefined;
  const copy = Object.create(Object.getPrototypeOf(error)) as Error;
  for (const key of Reflect.ownKeys(error)) {
    if (key === "message" || key === "stack" || key === "cause" || key === "data") continue;
    Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(error, key) as PropertyDescriptor);
  }
  Object.defineProperty(copy, "message", { value: message.text, writable: true, configurable: true });
  Object.defineProperty(copy, "stack", { value: `${error.name}: ${message.text}`, writable: true, configurable: true });
  if (data) Object.defineProperty(copy, "data", { value: data.value, writable: true, configurable: true, enumerable: true });
  return { error: copy, count };
}
