import type { ToolResult } from "@codemux/core";
import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth, so `{a, b}` and `{b, a}` are one key; undefined
 * past `maxChars` (or 64 levels), so that hostile arguments cost a bounded amount.
 */
export function canonicalJson(value: unknown, maxChars = 1_000_000): string | undefined {
  const parts: string[] = [];
  let size = 0;
  const push = (text: string): boolean => {
    size += text.length;
    parts.push(text);
    return size <= maxChars;
  };
  const walk = (node: unknown, depth: number): boolean => {
    if (depth > 64) return false;
    if (node === null || typeof node !== "object") {
      const text = JSON.stringify(node);
      return push(text === undefined ? "null" : text);
    }
    if (Array.isArray(node)) {
      if (!push("[")) return false;
      for (let i = 0; i < node.length; i++) {
        if (i > 0 && !push(",")) return false;
        if (!walk(node[i], depth + 1)) return false;
      }
      return push("]");
    }
    const record = node as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    if (!push("{")) return false;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!push(`${i > 0 ? "," : ""}${JSON.stringify(key)}:`)) return false;
      if (!walk(record[key], depth + 1)) return false;
    }
    return push("}");
  };
  return walk(value, 0) ? parts.join("") : undefined;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A short digest of arguments for logs: the first 16 hex digits of the SHA-256 of their canonical JSON. */
export function digestOf(value: unknown): string {
  return sha256(canonicalJson(value, 10_000_000) ?? "(too large)").slice(0, 16);
}

/** The size in characters of a result's payload (text, data, resources, structured content), measured without building its JSON. */
export function resultSize(result: ToolResult): number {
  let bytes = 0;
  for (const part of result.content ?? []) {
    if (part.type === "text") bytes += part.text.length;
    else if ("data" in part && typeof part.data === "string") bytes += part.data.length;
    else if (part.type === "resource") bytes += "text" in part.resource ? part.resource.text.length : part.resource.blob.length;
  }
  if (result.structuredContent !== undefined) bytes += canonicalJson(result.structuredContent, 64_000_000)?.length ?? 64_000_000;
  return bytes;
}

/** The text blocks of a result, joined. */
export function resultText(result: ToolResult): string {
  return (result.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}
