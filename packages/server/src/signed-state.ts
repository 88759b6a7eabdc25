import { instanceOfId } from "@codemux/core";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MAX_REQUEST_STATE_BYTES, REQUEST_STATE_TTL_MS } from "./defaults";
import { BadRequestError, InvalidRequestStateError } from "./errors";

/** The environment variable that holds the key codemux signs its requestState with (shared by every instance behind one balancer). */
export const STATE_KEY_VARIABLE = "CODEMUX_STATE_KEY";

/** The shortest key codemux signs with: an HMAC-SHA256 key shorter than its output is weaker than it. */
export const STATE_KEY_MIN_BYTES = 32;

/** Prefix of codemux's own requestState, naming the envelope's version. */
const VERSION = "cmx1";

/** What codemux's requestState says: the call it continues. The principal is bound by the MAC, not written in it. */
export interface StateClaims {
  /** The tool the client called (`call_tool`, or a passthrough name). */
  tool: string;
  /** The downstream tool the answers are for (`server__tool`), when a 2026 server asked. */
  target?: string;
  /** The downstream server's own requestState, echoed to it unchanged. */
  state?: string;
  /** The parked call the answers are for, when a 2025 server asked (`instance.id`). */
  park?: string;
}

export interface RequestStatesOptions {
  /** The HMAC key (at least 32 bytes); a random one for this process when absent. */
  key?: string | undefined;
  ttlMs?: number;
  /** Milliseconds since the epoch; `Date.now` when absent. */
  clock?: () => number;
}

/**
 * The instance holding the parked call a requestState names (`<instance>.<uuid>`), read without checking the MAC:
 * only to route the retry there, where the MAC is checked. Undefined for anything else, a state over its size bound first.
 */
export function parkInstanceOf(text: unknown): string | undefined {
  if (typeof text !== "string" || text.length > MAX_REQUEST_STATE_BYTES) return undefined;
  const [version, body] = text.split(".", 2);
  if (version !== VERSION || body === undefined) return undefined;
  try {
    const { park } = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { park?: unknown };
    return typeof park === "string" ? instanceOfId(park) : undefined;
  } catch {
    // Not JSON: not a state codemux made; the instance it reaches refuses it.
    return undefined;
  }
}

/**
 * Signs and checks the requestState codemux hands a 2026-07-28 client, wrapping the downstream server's:
 * HMAC-SHA256 over the principal, the tool called, the downstream tool, the server's state and an expiry.
 * One downstream connection serves every principal, so a state made for one must not work for another.
 * Signed, not encrypted: the client can read the server's state, as it could without codemux.
 */
export class RequestStates {
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #clock: () => number;

  constructor(options: RequestStatesOptions = {}) {
    if (options.key !== undefined && Buffer.byteLength(options.key) < STATE_KEY_MIN_BYTES)
      throw new BadRequestError(
        `The requestState key (stateKey or ${STATE_KEY_VARIABLE}) must be at least ${STATE_KEY_MIN_BYTES} bytes; generate one with \`openssl rand -hex 32\`.`,
      );
    this.#key = options.key === undefined ? randomBytes(32) : Buffer.from(options.key, "utf8");
    this.#ttlMs = options.ttlMs ?? REQUEST_STATE_TTL_MS;
    this.#clock = options.clock ?? Date.now;
  }

  /** The requestState for `principal`'s retry of the call `claims` names. */
  seal(principal: string, claims: StateClaims): string {
    const body = Buffer.from(JSON.stringify({ ...claims, exp: this.#clock() + this.#ttlMs }), "utf8").toString("base64url");
    return `${VERSION}.${body}.${this.#mac(principal, body)}`;
  }

  /** The claims of a state `principal` echoed calling `tool`; throws InvalidRequestStateError for any other. */
  open(principal: string, tool: string, text: string): StateClaims {
    // The size bound first: everything after is linear in it.
    if (text.length > MAX_REQUEST_STATE_BYTES) throw new InvalidRequestStateError(`it is longer than ${MAX_REQUEST_STATE_BYTES} characters`);
    const [version, body, mac, extra] = text.split(".");
    if (version !== VERSION || body === undefined || mac === undefined || extra !== undefined) throw new InvalidRequestStateError("codemux did not issue it");
    const expected = Buffer.from(this.#mac(principal, body), "utf8");
    const given = Buffer.from(mac, "utf8");
    // One message for a forgery and another principal's state: neither tells the caller which.
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      throw new InvalidRequestStateError("it was not issued to this caller, or it was altered");
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as StateClaims & { exp: number };
    if (claims.tool !== tool)
      throw new InvalidRequestStateError(`it was issued for a call of ${String(claims.tool).slice(0, 100)}, not of ${tool.slice(0, 100)}`);
    if (!(claims.exp > this.#clock())) throw new InvalidRequestStateError("it expired");
    const { exp: _, ...rest } = claims;
    return rest;
  }

  #mac(principal: string, body: string): string {
    return createHmac("sha256", this.#key).update(`${principal}\0${body}`).digest("base64url");
  }
}
