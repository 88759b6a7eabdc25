import type { BackgroundWork, RequestContext, SessionInfo, ToolResult } from "@codemux/core";
import { argsDigest } from "./transcript";
import type { JobRecord } from "./types";

/** Kinds another instance can run from their request alone; the rest (the agent, MCP tasks) need their client's session and stay. */
export const PORTABLE_KINDS = new Set(["call_tool", "execute_code"]);
/** A request over this travels neither whole in the journal nor in the shared queue's payload. */
export const MAX_REQUEST_BYTES = 256 * 1024;

/** Runs a portable job's request on this instance (the surface's meta-tool of that kind, in the foreground of the job). */
export type PortableRunner = (work: { kind: string; request: Record<string, unknown> }, context: RequestContext & { job: string }) => Promise<ToolResult>;

/** What a queued job carries to the instance that takes it. */
export interface QueuedPayload {
  record: JobRecord;
  request: Record<string, unknown>;
  session: SessionInfo;
  /** The trace context of the request that queued it, for the span of the instance that runs it. */
  trace?: Record<string, string>;
}

/**
 * A job another instance can run from its request alone. Not the agent and MCP tasks, nor a job whose
 * 2025-era client may be asked a question (elicitation, sampling) during it: only this instance's
 * session reaches that client, so such a job stays here. Nor one whose request is over 256 KiB.
 */
export function portable(work: BackgroundWork): boolean {
  if (!PORTABLE_KINDS.has(work.kind)) return false;
  // The request travels whole in the queue's payload: one too large for a journal line stays here.
  if ((JSON.stringify(work.request) ?? "").length > MAX_REQUEST_BYTES) return false;
  const { peer } = work.session;
  if (!peer || peer.era === "modern") return true;
  const capabilities = peer.capabilities();
  return !capabilities?.elicitation && !capabilities?.sampling;
}

export function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 2_000);
}

/** A request too large for a journal line is kept as its size and digest. */
export function boundedRequest(request: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(request) ?? "{}";
  if (json.length <= MAX_REQUEST_BYTES) return request;
  return { truncated: true, bytes: json.length, argsSha256: argsDigest(request) };
}

/** A trace carrier as a queued payload may hold one (another instance wrote it): string values only, bounded. */
export function isCarrier(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null) return false;
  const entries = Object.entries(value);
  return entries.length <= 4 && entries.every(([, text]) => typeof text === "string" && text.length <= 512);
}
