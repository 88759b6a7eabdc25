import { LOCAL_PRINCIPAL } from "@codemux/core";
import { createHash, timingSafeEqual } from "node:crypto";
import { TokenConfigError } from "./errors";

/** One accepted token; its holder acts as the principal `token:<name>` (in logs, hooks, ownership of results). */
export interface TokenSpec {
  name: string;
  token: string;
}

const NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
/** Shorter tokens are guessable; the check is a floor, not a strength meter. */
const MIN_TOKEN_CHARS = 8;
const MAX_TOKEN_CHARS = 4096;
const MAX_TOKENS = 1000;
/** The principal a static token's holder acts as: named by kind, so it never merges with an OAuth subject or the owner. */
export function tokenPrincipal(name: string): string {
  return `token:${name}`;
}

/** A principal as the config names it: a bare token name (`ci`) stands for `token:ci`; `local`, `anonymous` and kinds stay as they are. */
export function principalOfKey(key: string): string {
  return key.includes(":") || RESERVED_NAMES.has(key) ? key : tokenPrincipal(key);
}

/** The principal of every caller when serving without tokens. */
export const ANONYMOUS_PRINCIPAL = "anonymous";
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
 * Reads a token file: JSON (`[{ "name", "token" }]` or `{ "name": "token" }`), or lines of
 * `name:token` (a bare token line is named `token<N>`; blank lines and `#` comments are skipped).
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
    return entries.map((entry, i) => {
      const { name, token } = (entry ?? {}) as { name?: unknown; token?: unknown };
      if (typeof name !== "string" || typeof token !== "string")
        throw new TokenConfigError(`${file}: entry ${i + 1} needs a string "name" and a string "token".`);
      return { name, token };
    });
  }
  const tokens: TokenSpec[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    tokens.push(parseTokenArg(line, `token${i + 1}`));
  }
  return tokens;
}

/**
 * The accepted tokens, kept only as SHA-256 digests. A presented token is hashed and compared with
 * every digest by `timingSafeEqual` (no early exit), so neither its length nor how much of it
 * matches shows in the time taken.
 */
export class TokenSet {
  readonly #digests: Array<{ name: string; digest: Buffer }>;

  constructor(tokens: readonly TokenSpec[]) {
    if (tokens.length > MAX_TOKENS) throw new TokenConfigError(`${tokens.length} tokens given; at most ${MAX_TOKENS} are supported.`);
    const seenNames = new Set<string>();
    const seenTokens = new Set<string>();
    this.#digests = tokens.map(({ name, token }) => {
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
      return { name, digest };
    });
  }

  get size(): number {
    return this.#digests.length;
  }

  get names(): string[] {
    return this.#digests.map((d) => d.name);
  }

  /** The name of the token presented, or undefined. Time depends only on the number of tokens configured. */
  verify(presented: string): string | undefined {
    // Bounded before hashing: a huge header costs nothing more than a short one.
    const digest = sha256(presented.length > MAX_TOKEN_CHARS ? "" : presented);
    let found: string | undefined;
    for (const entry of this.#digests) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.name;
    }
    return presented.length > MAX_TOKEN_CHARS ? undefined : found;
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
