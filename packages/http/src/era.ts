import { isSwitchedOff } from "@codemux/core";
import { isJSONRPCRequest, PROTOCOL_VERSION_META_KEY, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { FIRST_MODERN_REVISION } from "./modern";

/** Whether a plain 2025-era request is told apart without the SDK's full classification: on unless `CODEMUX_ERA_AT_ONCE=0` (or `false`, `off`). */
export function eraAtOnceOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return !isSwitchedOff(env.CODEMUX_ERA_AT_ONCE);
}

/** Read once: `CODEMUX_ERA_AT_ONCE` is a process's setting. */
const ERA_AT_ONCE = eraAtOnceOn();

/** The versions an `MCP-Protocol-Version` header may name, exactly, for a request to be 2025-era at once: the SDK's own before 2026-07-28. */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version < FIRST_MODERN_REVISION));

/**
 * Whether a POST is one 2025-era request (a session's) for certain, as the SDK's `isLegacyRequest` would decide, which
 * costs ~7 µs a request, most of it in two schema checks that fail for every request (is it a result? an error?).
 * True for the common case: one JSON-RPC request by the SDK's schema (strict, so no `result` or `error` key beside it),
 * no protocol-version claim in its `_meta`, and no `MCP-Protocol-Version` header or one naming a 2025-era version
 * exactly. False means "ask the SDK", not "2026": always, when `atOnce` is off.
 */
export function legacyAtOnce(request: Request, body: unknown, atOnce = ERA_AT_ONCE): boolean {
  // The seam of `CODEMUX_ERA_AT_ONCE`.
  if (!atOnce || !isJSONRPCRequest(body)) return false;
  const params = body.params as unknown;
  if (isPlainObject(params)) {
    const meta = params._meta;
    // The SDK's test (`in`): a claim of any value, even an invalid one, is the SDK's to judge.
    if (isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta) return false;
  }
  const header = request.headers.get("mcp-protocol-version");
  return header === null || LEGACY_VERSIONS.has(header);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
