import { ANONYMOUS_PRINCIPAL, LOCAL_PRINCIPAL, tokenPrincipal } from "@codemux/core";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Identity } from "./auth/identity";
import { TokenConfigError } from "./errors";

/** One accepted token; its holder acts as the principal `token:<name>` (in logs, hooks, ownership of results). */
export interface TokenSpec {
  name: string;
  token: string;
  /** Groups the holder belongs to (policies may match them). */
  groups?: string[];
  /** Scopes granted (rights such as `admin` and `metrics` need theirs); see `TokenSet` for a file that declares none. */
  scopes?: string[];
  /** When the token stops being accepted: an ISO time (`2026-12-31T00:00:00Z`). */
  expiresAt?: string;
}

/** A presented token that matched: its name, and who its holder is until when (scopes undefined when no token declares any). */
export interface TokenMatch extends Identity {
  name: string;
}

const NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
/** Shorter tokens are guessable; the check is a floor, not a strength meter. */
const MIN_TOKEN_CHARS = 8;
const MAX_TOKEN_CHARS = 4096;
const MAX_TOKENS = 1000;
// Named in core, where every part that takes a principal by name (the config, the CLI, the admin route) reads them.
export { ANONYMOUS_PRINCIPAL, tokenPrincipal };

/**
 * Names a token may not take: the stdio owner's principal (what it saves is the owner's own) and the
 * no-auth one. Compared without case, since skills are kept in a folder per principal and some file
 * systems ignore case.
 */
const RESERVED_NAMES = new Set([LOCAL_PRINCIPAL, ANONYMOUS_PRINCIPAL]);

/**
 * Reads a token given on the command line or in the environment: `name:token`, or a bare token
 * (named `fallbackName`). Only a name of letters, digits and `_ . @ -` before the first colon makes
 * it a named token, so a token that itself contains a colon stays whole.
 */
export function parseTokenArg(text: string, fallbackName = "default"): TokenSpec {
  const colon = text.indexOf(":");
  const name = colon > 0 ? text.slice(0, colon) : "";
  if (colon > 0 && NAME.test(name) && colon < text.length - 1) return { name, token: text.slice(colon + 1) };
  return { name: fallbackName, token: text };
}

/**
 * Reads a token file: JSON (`[{ "name", "token", "groups"?, "scopes"?, "expiresAt"? }]` or `{ "name": "token" }`), or lines of
 * `name:token` (blank lines and `#` comments are skipped). Any other line is refused with its number and what it likely meant:
 * a typo must never become a token under a name nobody chose.
 */
export function parseTokenFile(text: string, file = "token file"): TokenSpec[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      throw new TokenConfigError(
        `${file} looks like JSON but does not parse (${(error as Error).message.slice(0, 200)}); write [{"name":"laptop","token":"..."}] or lines of name:token.`,
      );
    }
    const entries = Array.isArray(value) ? value : Object.entries(value as Record<string, unknown>).map(([name, token]) => ({ name, token }));
    return entries.map((entry, i) => readEntry(entry, `${file}: entry ${i + 1}`));
  }
  const tokens: TokenSpec[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    tokens.push(readLine(line, `${file}: line ${i + 1}`));
  }
  return tokens;
}

/** One `name:token` line (spaces around the colon allowed); the refusal never repeats the token, since it goes to logs. */
function readLine(line: string, where: string): TokenSpec {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon).trim() : "";
  const token = colon > 0 ? line.slice(colon + 1).trim() : "";
  if (NAME.test(name) && token) return { name, token };
  // A name, a wrong separator, then something token-sized: not a bare base64 token's "==" padding, whose start must not be echoed.
  const meant = /^([A-Za-z0-9_.@-]{1,64})\s*(?:=>|[=,;|\t ])\s*[^\s=]\S{7,}$/.exec(line);
  if (colon < 0 && meant) throw new TokenConfigError(`${where} is not name:token; did you mean ${meant[1]}:... (a colon between the name and the token)?`);
  if (colon < 0)
    throw new TokenConfigError(`${where} has no name: write it as NAME:TOKEN (e.g. laptop:TOKEN); the name is the principal in logs and policies.`);
  if (!token) throw new TokenConfigError(`${where} has the name "${name.slice(0, 64)}" but no token after its colon; write ${name.slice(0, 64)}:TOKEN.`);
  throw new TokenConfigError(
    `${where}: "${name.slice(0, 80)}" is not a token name (1-64 letters, digits or _ . @ -); write the line as NAME:TOKEN, e.g. laptop:TOKEN.`,
  );
}

const LABEL = /^[\x21-\x7e]{1,128}$/;
const MAX_LABELS = 64;

/** One JSON entry: `name` and `token`, and optional `groups`, `scopes` and `expiresAt`. */
function readEntry(entry: unknown, where: string): TokenSpec {
  const { name, token, groups, scopes, expiresAt, ...rest } = (entry ?? {}) as Record<string, unknown>;
  if (typeof name !== "string" || typeof token !== "string") throw new TokenConfigError(`${where} needs a string "name" and a string "token".`);
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new TokenConfigError(`${where} has "${unknown.slice(0, 40)}"; an entry takes name, token, groups, scopes and expiresAt.`);
  const spec: TokenSpec = { name, token };
  if (groups !== undefined) spec.groups = readLabels(groups, `${where}: "groups"`);
  if (scopes !== undefined) spec.scopes = readLabels(scopes, `${where}: "scopes"`);
  if (expiresAt !== undefined) {
    if (typeof expiresAt !== "string" || Number.isNaN(Date.parse(expiresAt)))
      throw new TokenConfigError(`${where}: "expiresAt" must be an ISO time such as "2026-12-31T00:00:00Z".`);
    spec.expiresAt = expiresAt;
  }
  return spec;
}

function readLabels(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_LABELS || !value.every((v) => typeof v === "string" && LABEL.test(v)))
    throw new TokenConfigError(`${where} must be a list of at most ${MAX_LABELS} names, each 1-128 characters without spaces (e.g. ["admin"]).`);
  return value as string[];
}

/**
 * The accepted tokens, kept only as SHA-256 digests. A presented token is hashed and compared with
 * every digest by `timingSafeEqual` (no early exit), so neither its length nor how much of it
 * matches shows in the time taken.
 */
export class TokenSet {
  readonly #digests: Array<{ digest: Buffer; match: TokenMatch; fingerprint: string }>;
  /** Whether any token declares scopes: if none does, every holder keeps every right (a single-user setup keeps working). */
  readonly declaresScopes: boolean;

  constructor(tokens: readonly TokenSpec[]) {
    if (tokens.length > MAX_TOKENS) throw new TokenConfigError(`${tokens.length} tokens given; at most ${MAX_TOKENS} are supported.`);
    const seenNames = new Set<string>();
    const seenTokens = new Set<string>();
    this.declaresScopes = tokens.some((t) => t.scopes !== undefined);
    this.#digests = tokens.map(({ name, token, groups, scopes, expiresAt }) => {
      if (!NAME.test(name)) throw new TokenConfigError(`Token name "${name.slice(0, 80)}" must be 1-64 letters, digits or _ . @ -.`);
      if (RESERVED_NAMES.has(name.toLowerCase())) {
        throw new TokenConfigError(
          `Token name "${name}" is reserved: "${LOCAL_PRINCIPAL}" is the owner's own principal over stdio and "${ANONYMOUS_PRINCIPAL}" is every caller without a token; name the token after its holder (e.g. laptop:TOKEN).`,
        );
      }
      if (token.length < MIN_TOKEN_CHARS || token.length > MAX_TOKEN_CHARS) {
        throw new TokenConfigError(
          `Token "${name}" is ${token.length} characters; use ${MIN_TOKEN_CHARS} to ${MAX_TOKEN_CHARS} (openssl rand -hex 32 makes a good one).`,
        );
      }
      if (/\s/.test(token)) throw new TokenConfigError(`Token "${name}" contains whitespace; clients cannot send it in a header.`);
      if (seenNames.has(name)) throw new TokenConfigError(`Two tokens are named "${name}"; each name is a principal and must be unique.`);
      const digest = sha256(token);
      if (seenTokens.has(digest.toString("hex"))) throw new TokenConfigError(`Token "${name}" is the same as another token; give each holder its own.`);
      seenNames.add(name);
      seenTokens.add(digest.toString("hex"));
      const granted = scopes ?? (this.declaresScopes ? [] : undefined);
      const match: TokenMatch = {
        name,
        principal: tokenPrincipal(name),
        ...(groups ? { groups } : {}),
        ...(granted ? { scopes: granted } : {}),
        ...(expiresAt ? { expiresAt: Date.parse(expiresAt) } : {}),
      };
      return { digest, match, fingerprint: JSON.stringify([digest.toString("hex"), match]) };
    });
  }

  /** Who holds a token, with their groups, scopes and expiry (never the token): the admin page's Principals. */
  get holders(): TokenMatch[] {
    return this.#digests.map((d) => d.match);
  }

  /** Names whose token is gone from `next` or changed in it (secret, groups, scopes, expiry): their sessions must end. */
  changedIn(next: TokenSet): string[] {
    const kept = new Set(next.#digests.map((d) => d.fingerprint));
    return this.#digests.filter((d) => !kept.has(d.fingerprint)).map((d) => d.match.name);
  }

  get size(): number {
    return this.#digests.length;
  }

  get names(): string[] {
    return this.#digests.map((d) => d.match.name);
  }

  /** The token presented, or undefined; an expired one is still returned (the caller says why it is refused). Time depends only on the number of tokens configured. */
  verify(presented: string): TokenMatch | undefined {
    // Bounded before hashing: a huge header costs nothing more than a short one.
    const digest = sha256(presented.length > MAX_TOKEN_CHARS ? "" : presented);
    let found: TokenMatch | undefined;
    for (const entry of this.#digests) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.match;
    }
    return presented.length > MAX_TOKEN_CHARS ? undefined : found;
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
