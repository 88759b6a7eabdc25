import type { DiscoverResult, PriorDiscovery } from "@modelcontextprotocol/client";
import { isStaleVerdict } from "./call-errors";

/** How a server's protocol era is remembered, checked against its version, and corrected when an attempt proves it wrong. */

/**
 * A server's era verdict with when it was found (ms since the epoch); a 2026 one keeps the server's `server/discover` answer,
 * a 2025 one the `serverInfo.version` it gave (another version is probed again: it may speak 2026 now).
 */
export type RememberedEra = { kind: "legacy"; at: number; version?: string } | { kind: "modern"; discover: DiscoverResult; at: number };

/** Characters of a server's `serverInfo.version` kept with its 2025 verdict, at most. */
export const MAX_VERSION_CHARS = 100;

/** A remembered 2025 verdict's server answered with another `serverInfo.version`: the connection is dropped and the era probed. */
export class VersionChanged extends Error {}

export function versionChanged(prior: RememberedEra | undefined, version: string | undefined): boolean {
  return prior?.kind === "legacy" && prior.version !== undefined && typeof version === "string" && version.slice(0, MAX_VERSION_CHARS) !== prior.version;
}

export function withVersion(era: RememberedEra, version: string | undefined): RememberedEra {
  return era.kind === "legacy" && typeof version === "string" ? { ...era, version: version.slice(0, MAX_VERSION_CHARS) } : era;
}

/** The verdict as the SDK takes it, without its date. */
export function asPrior(era: RememberedEra): PriorDiscovery {
  return era.kind === "modern" ? { kind: "modern", discover: era.discover } : { kind: "legacy" };
}

/**
 * What to connect with after a failed attempt whose era was wrong, or false when the era was not the cause: a server that
 * died on the probe is a 2025 one (rmcp-style); a remembered verdict the server refutes is dropped (undefined: probe again).
 */
export function correctedVerdict(error: unknown, prior: RememberedEra | undefined, exited: boolean): RememberedEra | undefined | false {
  if (prior === undefined) {
    if (exited && isStaleVerdict(error, undefined)) return { kind: "legacy", at: Date.now() };
    // A 2025 opening refused for its version: the probe took a slow 2026 server for a 2025 one (see slowProbe).
    return slowProbe(error, prior) ? undefined : false;
  }
  return isStaleVerdict(error, prior.kind) ? undefined : false;
}

/**
 * Whether an attempt with no verdict failed because its era probe gave up too soon: a server that answers the 2025 `initialize`
 * with "unsupported protocol version" is a 2026-only one whose `server/discover` answer came after the probe's short wait
 * (a slow start on a loaded machine). It is probed again with the whole connect time.
 */
export function slowProbe(error: unknown, prior: RememberedEra | undefined): boolean {
  return prior === undefined && isStaleVerdict(error, "legacy");
}

/** What a 2025 server that exits on the probe may say first: rmcp's "expect initialized request, but received: ...". */
export const PROBE_REFUSAL = /initiali[sz]|server\/discover|protocol ?version|handshake/i;

/** Whether a process that exited during the era probe died of it (silent, or naming the opening it expected), not of its own start (it said why). */
export function diedOnProbe(said: string[]): boolean {
  return said.every((line) => line.trim() === "") || said.some((line) => PROBE_REFUSAL.test(line));
}
