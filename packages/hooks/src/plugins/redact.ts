import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Redactor, type RedactorOptions } from "../redactor";
import type { Plugin, PluginMetrics } from "../types";

export type RedactOptions = RedactorOptions;

export const REDACTED_META = "codemux/redacted";

/**
 * `redact`: masks secrets (private key blocks, GitHub/AWS/Slack/Google/Stripe/OpenAI-style keys,
 * bearer tokens, JWTs, `password=...`, your own patterns) in results before they reach the model:
 * text, embedded resource text and string values of structuredContent. The audit plugin uses the
 * same patterns for its lines.
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
  };
}

/** The result with its secrets masked, and how many; images and audio are left as they are. */
export function redactResult(redactor: Redactor, result: CallToolResult): { result: CallToolResult; count: number } {
  let count = 0;
  const content = (result.content ?? []).map((part) => {
    if (part.type === "text") {
      const masked = redactor.text(part.text);
      count += masked.count;
      return masked.count ? { ...part, text: masked.text } : part;
    }
    if (part.type === "resource" && "text" in part.resource && typeof part.resource.text === "string") {
      const masked = redactor.text(part.resource.text);
      count += masked.count;
      return masked.count ? { ...part, resource: { ...part.resource, text: masked.text } } : part;
    }
    return part;
  });
  let structuredContent = result.structuredContent;
  if (structuredContent !== undefined) {
    const masked = redactor.value(structuredContent);
    count += masked.count;
    if (masked.count) structuredContent = masked.value as Record<string, unknown>;
  }
  if (count === 0) return { result, count };
  return { result: { ...result, content, ...(structuredContent !== undefined ? { structuredContent } : {}) } as CallToolResult, count };
}
